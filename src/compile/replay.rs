//! Composed rules judged on the text they leave: a rule's applied shape is sought in the
//! final text, where a rename that runs in the same step or later has changed its names. A
//! pack where one rule edits calls of `old_fn` and another renames `old_fn` to `new_fn` is
//! then "already applied" for both after `--write`.

use super::{Applied, CompiledRule};
use crate::actions::{self, AppliedShape};
use crate::pattern::Pattern;

/// Adds to each rule's applied shape its variants under the renames of rules that run no
/// earlier than it (same phase and a step not before its own, or a later phase): the text
/// the rule saw had the old names, the text `--check` sees has the new ones.
pub(super) fn replay_renames(compiled: &mut [CompiledRule]) {
    let renames: Vec<(usize, (crate::rules::model::Phase, usize))> = compiled
        .iter()
        .enumerate()
        .filter(|(_, r)| r.rule.action.name == "rename")
        .map(|(i, r)| (i, (r.rule.phase, r.step)))
        .collect();
    if renames.is_empty() {
        return;
    }
    for at in 0..compiled.len() {
        let Some(Applied::Shape(shape)) = &compiled[at].applied else {
            continue;
        };
        let when = (compiled[at].rule.phase, compiled[at].step);
        let mut variants: Vec<String> = vec![shape.source.clone()];
        for &(by, ran) in &renames {
            if by == at || ran < when {
                continue;
            }
            let rename = &compiled[by].rule.action;
            let unit = actions::unit(rename);
            // Each variant so far, renamed too: several renames compose.
            for i in 0..variants.len() {
                if let AppliedShape::Code(text) = unit.applied_shape(&rename.args, &variants[i])
                    && !variants.contains(&text)
                {
                    variants.push(text);
                }
            }
        }
        if variants.len() == 1 {
            continue;
        }
        let sources: Vec<&str> = variants.iter().map(String::as_str).collect();
        if let Ok(any) = Pattern::compile_any(&sources) {
            compiled[at].applied = Some(Applied::Shape(any));
        }
    }
}
