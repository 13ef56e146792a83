//! Per pin, whether any release of the matrix made it fail: a pin that held everywhere has not
//! been shown able to fail by these releases (its negative controls in `regraft test` must).

use super::Row;
use crate::compile::RuleSet;

/// One line per pin (check rule): the releases where it failed, or that it held on every
/// release where it was active.
pub fn pin_lines(rules: &RuleSet, rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    for rule in rules.rules.iter().filter(|r| r.rule.action.is_check()) {
        let id = rule.id();
        let mine: Vec<&Row> = rows.iter().filter(|r| r.rule == id).collect();
        let active: Vec<&&Row> = mine
            .iter()
            .filter(|r| !matches!(r.status, super::Status::Inactive | super::Status::Retired))
            .collect();
        if active.is_empty() {
            continue;
        }
        let failed: Vec<&str> = active
            .iter()
            .filter(|r| r.status.is_failure())
            .map(|r| r.target.as_str())
            .collect();
        out.push(if failed.is_empty() {
            format!(
                "pin `{id}` held on all {} release(s) where it is active: none of them shows it can fail",
                active.len()
            )
        } else {
            format!(
                "pin `{id}` failed on {} of {} release(s) where it is active: {}",
                failed.len(),
                active.len(),
                failed.join(", ")
            )
        });
    }
    out
}
