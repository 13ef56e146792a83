//! The closing lines of `apply --check` and `apply --verify`: what a CI log is read by, so
//! each says exactly what happened — every file that would change, the files that failed,
//! and "cleanly" only where no rule drifted.

use super::{Outcome, Patched};

fn files(n: usize) -> &'static str {
    if n == 1 { "file" } else { "files" }
}

/// `--check`'s lines: each file that would change, then one closing line counting the files
/// that failed too (they hide no other file's change).
pub(super) fn check_lines(outcomes: &[Outcome]) {
    let changed = outcomes
        .iter()
        .filter(|o| o.result.as_ref().is_ok_and(Patched::changed));
    let mut count = 0;
    for o in changed {
        crate::cli::info(format!("would patch {}", o.file.display) + "\n");
        count += 1;
    }
    let failed = match outcomes.iter().filter(|o| o.result.is_err()).count() {
        0 => String::new(),
        n => format!("; {n} {} failed (above)", files(n)),
    };
    crate::cli::info(format!(
        "check: {count} of {} {} would change{failed}\n",
        outcomes.len(),
        files(outcomes.len())
    ));
}

/// `--verify`'s closing line: "every rule applies cleanly" only where no miss was warned about
/// and no rule drifted by selecting no target (`unselected`); otherwise the rules that did.
pub(super) fn verify_line(
    outcomes: &[Outcome],
    changed: &[(&Outcome, &Patched)],
    unselected: &[String],
) {
    let warned: Vec<String> = outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().ok())
        .flat_map(|p| p.warnings.iter().filter_map(|w| w.rule_id()))
        .map(|r| format!("`{r}`"))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let missing: Vec<String> = unselected.iter().map(|r| format!("`{r}`")).collect();
    let verdict = match (warned.is_empty(), missing.is_empty()) {
        (true, true) => "every rule applies cleanly".to_string(),
        (false, true) => format!("drift warned about in {}", warned.join(", ")),
        _ => format!(
            "not every rule applies: drift in {}",
            [missing, warned].concat().join(", ")
        ),
    };
    crate::cli::info(format!(
        "verify: {verdict} ({} of {} {} would change)\n",
        changed.len(),
        outcomes.len(),
        files(outcomes.len())
    ));
}
