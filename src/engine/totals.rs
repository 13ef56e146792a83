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

/// One line per rule with `reached_from` whose matched sites no call from its entry points
/// reaches in the release the files belong to (found above each file: the folder holding the
/// entry points' package). What `apply --verify` adds to applying: taking effect.
pub fn unreached<'a, 'r>(
    rules: &'r RuleSet,
    patched: impl Iterator<Item = (&'a std::path::Path, &'a Patched)>,
) -> Vec<(&'r crate::compile::CompiledRule, String)> {
    use std::collections::BTreeMap;
    use std::path::PathBuf;
    let wanted: Vec<&crate::compile::CompiledRule> = rules
        .rules
        .iter()
        .filter(|r| !r.rule.reached_from.is_empty())
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    // Per rule, per release folder: the sites it matched.
    let mut sites: Vec<BTreeMap<PathBuf, Vec<(PathBuf, usize)>>> =
        vec![BTreeMap::new(); wanted.len()];
    for (path, p) in patched {
        for report in &p.rules {
            let Some(i) = wanted.iter().position(|r| r.id() == report.rule) else {
                continue;
            };
            if !matches!(report.status, RuleStatus::Applied | RuleStatus::Redundant) {
                continue;
            }
            let entry = &wanted[i].rule.reached_from[0].value;
            let package = entry.split('.').next().unwrap_or_default();
            let dir = path.parent().unwrap_or(std::path::Path::new("."));
            let root = crate::reach::Program::root_for(dir, package);
            let file = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
            let root = std::path::absolute(&root).unwrap_or(root);
            sites
                .get_mut(i)
                .expect("one map per rule")
                .entry(root)
                .or_default()
                .extend(report.matches.iter().map(|m| (file.clone(), m.start.line)));
        }
    }
    let mut programs: BTreeMap<PathBuf, crate::reach::Program> = BTreeMap::new();
    let mut out = Vec::new();
    for (rule, by_root) in wanted.iter().zip(sites) {
        let entries: Vec<String> = rule
            .rule
            .reached_from
            .iter()
            .map(|e| e.value.clone())
            .collect();
        for (root, sites) in by_root {
            let program = programs
                .entry(root.clone())
                .or_insert_with(|| crate::reach::Program::new(root.clone()));
            let verdict = program.reach(&entries, &sites);
            if matches!(verdict, crate::reach::Verdict::Unreached { .. }) {
                out.push((
                    *rule,
                    format!(
                        "drift: rule `{}` is unreached in {}: {}",
                        rule.id(),
                        root.display(),
                        verdict.message(&entries)
                    ),
                ));
            }
        }
    }
    out
}
