//! `expect: {per: run, ...}`: a rule's matches counted over every file of one `apply` run, for
//! a rule across a tree whose files mostly hold none of its sites (a count per file could not
//! say "at least one somewhere").

use super::{Patched, RuleStatus};
use crate::compile::RuleSet;

/// One line per rule whose run total misses its `expect`: the drift, with the count and the
/// number of files it was found in. Rules inactive in every file (a version gate) are left out.
pub fn missed<'a, 'r>(
    rules: &'r RuleSet,
    patched: impl Iterator<Item = &'a Patched>,
) -> Vec<(&'r crate::compile::CompiledRule, String)> {
    let wanted: Vec<&crate::compile::CompiledRule> = rules
        .rules
        .iter()
        .filter(|r| r.rule.expect.is_some_and(|e| e.run))
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    // (matches, files with a match, files where it was active)
    let mut totals = vec![(0usize, 0usize, 0usize); wanted.len()];
    for p in patched {
        for report in &p.rules {
            let Some(i) = wanted.iter().position(|r| r.id() == report.rule) else {
                continue;
            };
            if report.status == RuleStatus::Inactive {
                continue;
            }
            totals[i].0 += report.matches.len();
            totals[i].1 += usize::from(!report.matches.is_empty());
            totals[i].2 += 1;
        }
    }
    wanted
        .iter()
        .zip(totals)
        .filter_map(|(rule, (matches, files, active))| {
            let expect = rule.rule.expect.expect("filtered on expect");
            (active > 0 && !expect.admits(matches as u64)).then(|| {
                let count = expect.to_string();
                let line = format!(
                    "drift: rule `{}` expects {} match(es) over the run, found {matches} in {files} of {active} file(s)",
                    rule.id(),
                    count.trim_end_matches(" over the run")
                );
                (*rule, line)
            })
        })
        .collect()
}
