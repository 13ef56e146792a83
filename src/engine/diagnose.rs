//! Turning what went wrong at a site into a diagnostic on the target: drift with the scopes
//! searched, and action refusals with their labels.

use std::ops::Range;

use miette::LabeledSpan;
use tree_sitter::Node;

use super::PatchError;
use super::error::Note;
use super::find::Found;
use super::scope::selected_scopes;
use crate::actions::ActionFailure;
use crate::compile::CompiledRule;
use crate::pattern::matcher::Matcher;
use crate::python::definition_name;
use crate::rules::model::{Expect, Per};
use crate::source::{SourceFile, span};

/// A description of where a rule looks, for drift reports.
pub fn describe_scope(rule: &CompiledRule) -> String {
    let inside = &rule.rule.inside;
    let mut parts = Vec::new();
    if let Some(c) = &inside.class {
        parts.push(format!("class {c}"));
    }
    if let Some(f) = &inside.function {
        parts.push(format!("function {f}"));
    }
    if !rule.loop_patterns.is_empty() {
        let headers: Vec<String> = rule
            .loop_patterns
            .iter()
            .map(|l| format!("`{}`", l.source.trim()))
            .collect();
        parts.push(format!("loop {}", headers.join(" or ")));
    }
    let scope = if parts.is_empty() {
        "the whole file".to_string()
    } else {
        parts.join(" › ")
    };
    format!("searched {scope} for `{}`", rule.pattern.source.trim())
}

/// How many lines one snippet may span before far labels get snippets of their own: a
/// refusal should show the call and the signature, not the 300 lines between them.
const NEAR_LINES: usize = 12;

/// The refusal of `rule`'s action on `file`.
pub(crate) fn action_error(rule: &CompiledRule, file: &SourceFile, f: ActionFailure) -> PatchError {
    let (labels, far) = placed_labels(file, f.labels);
    if rule.rule.action.is_check() {
        // A check that does not hold is a pin failure: drift, not a refusal.
        return PatchError::Pin {
            rule: rule.id().to_string(),
            path: file.name().to_string(),
            reason: f.reason,
            src: file.named_source(),
            labels,
            help: f.help,
            far,
        };
    }
    PatchError::Action {
        rule: rule.id().to_string(),
        action: rule.rule.action.name().to_string(),
        path: file.name().to_string(),
        reason: f.reason,
        src: file.named_source(),
        labels,
        help: f.help,
        far,
    }
}

/// A failure's labels: those near the first, shown in one snippet, and the far ones (a
/// signature hundreds of lines above the call), each as a note of its own.
fn placed_labels(
    file: &SourceFile,
    labels: Vec<(Range<usize>, String)>,
) -> (Vec<LabeledSpan>, Vec<Note>) {
    let text = file.text();
    let line = |offset: usize| text[..offset.min(text.len())].matches('\n').count();
    let first = labels.first().map_or(0, |(r, _)| line(r.start));
    let (near, far): (Vec<_>, Vec<_>) = labels
        .into_iter()
        .partition(|(r, _)| line(r.start).abs_diff(first) <= NEAR_LINES);
    let near = near
        .into_iter()
        .map(|(r, l)| LabeledSpan::new_with_span(Some(l), span(r)))
        .collect();
    let far = far
        .into_iter()
        .map(|(r, l)| Note {
            message: l,
            src: file.named_source(),
            at: span(r),
        })
        .collect();
    (near, far)
}

/// `rule` found `matches` where its `expect` wants `expected`: a drift error pointing at the
/// matches, or at the scopes searched when there are none.
pub(crate) fn drift(
    rule: &CompiledRule,
    file: &SourceFile,
    root: Node<'_>,
    matches: &[Found<'_>],
    expected: &str,
) -> PatchError {
    let text = file.text();
    let mut labels: Vec<(Range<usize>, String)> = if matches.is_empty() {
        scope_nodes(rule, root, text)
    } else {
        matches
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let r = m.node.start_byte()..m.last.end_byte();
                let first_line = r.start..text[r.clone()].find('\n').map_or(r.end, |n| r.start + n);
                (first_line, format!("match {}", i + 1))
            })
            .collect()
    };
    let mut scope = describe_scope(rule);
    // A deletion leaves nothing to find: after `--write` its own output reads as drift unless
    // a scope says where the code was taken out.
    let leaves_nothing = matches!(
        crate::actions::unit(&rule.rule.action)
            .applied_shape(&rule.rule.action.args, &rule.pattern.source),
        crate::actions::AppliedShape::Absent
    );
    if matches.is_empty() && leaves_nothing && rule.applied.is_none() {
        scope.push_str(
            "; this rule deletes what it matches, so once applied it finds nothing here: give it an `inside` class or function (a scope it cleared counts as applied) or accept none with `expect: {min: 0}`",
        );
    }
    if labels.is_empty() && matches.is_empty() {
        if let Some(c) = &rule.rule.inside.class {
            scope.push_str(&format!("; this file has no class {c}"));
        } else if let Some(f) = &rule.rule.inside.function {
            scope.push_str(&format!("; this file has no function {f}"));
        }
        labels.push((
            0..text
                .find('\n')
                .unwrap_or(text.len())
                .max(usize::from(!text.is_empty())),
            "nothing matched in this file".into(),
        ));
    }
    // Matches far apart get snippets of their own, not one of every line between them.
    let (labels, far) = placed_labels(file, labels);
    PatchError::Drift {
        rule: rule.id().to_string(),
        path: file.name().to_string(),
        expected: expected.to_string(),
        found: matches.len() as u64,
        src: file.named_source(),
        labels,
        far,
        scope,
        explain: explain_hint(rule, file),
    }
}

/// The command that shows why: the near misses of `rule` in `file`, each with its reason
/// (naming the rule file where it is one on disk, so the command runs from where this one did).
fn explain_hint(rule: &CompiledRule, file: &SourceFile) -> String {
    let quoted = |path: &str| {
        let plain = path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c));
        if plain {
            path.to_string()
        } else {
            format!("'{}'", path.replace('\'', r"'\''"))
        }
    };
    let rules = rule.rule.origin.file.name();
    let from = if std::path::Path::new(rules).is_file() {
        format!(" -r {}", quoted(rules))
    } else {
        String::new()
    };
    format!(
        "regraft explain {}{from} --in {}",
        rule.id(),
        quoted(file.name())
    )
}

/// `rule` found `found` matches in the class or function `def`, where its `expect` counts per
/// scope: a drift error pointing at that scope's header.
pub(crate) fn drift_in_scope(
    rule: &CompiledRule,
    file: &SourceFile,
    def: Node<'_>,
    found: u64,
    expect: Expect,
) -> PatchError {
    let header = def
        .child_by_field_name("name")
        .map_or(def.byte_range(), |n| def.start_byte()..n.end_byte());
    let name = definition_name(def, file.text()).unwrap_or("?");
    let label = format!("`{name}` has {found} match(es)");
    PatchError::Drift {
        rule: rule.id().to_string(),
        path: file.name().to_string(),
        expected: expect.to_string(),
        found,
        src: file.named_source(),
        labels: vec![LabeledSpan::new_with_span(Some(label), span(header))],
        scope: describe_scope(rule),
        explain: explain_hint(rule, file),
        far: Vec::new(),
    }
}

/// The definition headers in `root` that a rule's `inside` selects (innermost scope asked for:
/// its functions, within its classes where it names both).
fn scope_nodes(rule: &CompiledRule, root: Node<'_>, text: &str) -> Vec<(Range<usize>, String)> {
    let inside = &rule.rule.inside;
    let per = match (&inside.function, &inside.class) {
        (Some(_), _) => Per::Function,
        (None, Some(_)) => Per::Class,
        (None, None) => return Vec::new(),
    };
    let matcher = Matcher::new(text);
    let classes = match (per, &inside.class) {
        (Per::Function, Some(_)) => Some(selected_scopes(rule, Per::Class, root, text, &matcher)),
        _ => None,
    };
    let within = |n: &Node<'_>, outer: &Node<'_>| {
        outer.start_byte() <= n.start_byte() && n.end_byte() <= outer.end_byte()
    };
    let mut out: Vec<(Range<usize>, String)> = selected_scopes(rule, per, root, text, &matcher)
        .into_iter()
        .filter(|n| {
            classes
                .as_ref()
                .is_none_or(|cs| cs.iter().any(|c| within(n, c)))
        })
        .map(|n| {
            let header_end = n
                .child_by_field_name("name")
                .map_or(n.end_byte(), |name| name.end_byte());
            (n.start_byte()..header_end, "searched in here".to_string())
        })
        .collect();
    out.sort_by_key(|(r, _)| r.start);
    out
}
