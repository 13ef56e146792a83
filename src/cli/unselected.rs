//! Rules whose `files` select none of the targets: drift where they expect matches there (as
//! `matrix` says missing), a warning or a note otherwise.

use super::err;
use crate::compile::RuleSet;
use crate::error::Error;
use crate::targets::TargetFile;

/// Rules whose `files` select none of the targets. Under `--check` (a CI's drift check), one
/// that expects matches there is drift, as `matrix` calls it missing (exit 3, as every drift),
/// and any other is a warning; otherwise (a pack applied to some of its files) it is said
/// under `-v`. The ids of the rules that drifted.
pub(super) fn report(rules: &RuleSet, files: &[TargetFile], check: bool) -> Vec<String> {
    let mut drifted = Vec::new();
    if files.is_empty() {
        return drifted;
    }
    // Each file's selection once, for every rule (a search per rule matched its globs against
    // every file again).
    let mut selected = vec![false; rules.rules.len()];
    for file in files {
        for (any, here) in selected.iter_mut().zip(rules.selecting(&file.display)) {
            *any |= here;
        }
    }
    for (rule, _) in rules
        .rules
        .iter()
        .zip(selected)
        .filter(|(r, selected)| !r.rule.files.is_empty() && !selected)
    {
        let globs: Vec<&str> = rule.rule.files.iter().map(|g| g.value.as_str()).collect();
        let expects = rule.rule.expect.is_some_and(|e| e.min > 0)
            && rule.rule.on_miss == crate::rules::model::Policy::Error;
        let line = format!(
            "rule `{}` selects no file of the targets (files: {})",
            rule.id(),
            globs.join(", ")
        );
        if expects && check {
            err(format!(
                "error: drift: rule `{}` is missing: it {}, and it expects matches there\n",
                rule.id(),
                line.trim_start_matches(&format!("rule `{}` ", rule.id()))
            ));
            drifted.push(rule.id().to_string());
        } else if check {
            err(format!("warning: {line}\n"));
        } else {
            super::detail(format!("{line}\n"));
        }
    }
    drifted
}

/// Stdin has no path for `files` globs to select: says which rules therefore did not run, and
/// refuses when one of them expects matches (its drift check would pass by not running).
pub(super) fn note_stdin(rules: &RuleSet) -> Result<(), Error> {
    let expecting: Vec<&str> = rules
        .rules
        .iter()
        .filter(|r| !r.rule.files.is_empty() && r.rule.expect.is_some_and(|e| e.min > 0))
        .map(|r| r.id())
        .collect();
    if !expecting.is_empty() {
        return Err(Error::Usage(format!(
            "stdin has no path, so rule(s) {} (which select files by `files` and expect \
             matches) cannot run: give --stdin-filename PATH",
            expecting.join(", ")
        )));
    }
    let skipped: Vec<&str> = rules
        .rules
        .iter()
        .filter(|r| !r.rule.files.is_empty())
        .map(|r| r.id())
        .collect();
    if !skipped.is_empty() {
        super::info(format!(
            "note: stdin has no path, so rules that select files by `files` did not run: {} \
             (give --stdin-filename PATH)\n",
            skipped.join(", ")
        ));
    }
    Ok(())
}
