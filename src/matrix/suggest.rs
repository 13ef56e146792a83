//! `matrix --suggest`: version bounds for rules, from the statuses the matrix saw.

use super::{MatrixTarget, Row, Status};

/// For each rule, the bounds its row suggests, one line each: `fixed_upstream` from the first
/// release of a run of `redundant` that lasts to the newest release; `requires` bounds where
/// it is `missing` on the oldest or the newest releases only (the shape it patches is not yet
/// there, or gone). Releases are ordered by version, per package.
pub fn suggestions(rows: &[Row], targets: &[MatrixTarget]) -> Vec<String> {
    let mut rules: Vec<&str> = Vec::new();
    for row in rows {
        if !rules.contains(&row.rule.as_str()) {
            rules.push(&row.rule);
        }
    }
    let mut packages: Vec<&str> = targets.iter().map(|t| t.package.as_str()).collect();
    packages.dedup();
    let mut out = Vec::new();
    for package in packages {
        let mut releases: Vec<&MatrixTarget> =
            targets.iter().filter(|t| t.package == package).collect();
        releases.sort_by(|a, b| a.version.cmp(&b.version));
        for rule in &rules {
            let statuses: Vec<(String, Status)> = releases
                .iter()
                .filter_map(|t| {
                    let label = t.label();
                    rows.iter()
                        .find(|r| r.rule == *rule && r.target == label)
                        .map(|r| (t.version.to_string(), r.status))
                })
                .collect();
            out.extend(for_rule(rule, package, &statuses));
        }
    }
    out
}

/// What a bound from the releases the matrix saw is: the change lies after `before` and at or
/// before `from`, and a release between them, unseen, may be where it happened.
fn sampled(rule: &str, package: &str, before: &str, from: &str) -> String {
    format!(
        "; a bound from the releases shown: the change is after {before} and at or before {from} — `regraft bisect {rule} --fetch '{package}>={before},<={from}'` finds the release"
    )
}

fn for_rule(rule: &str, package: &str, statuses: &[(String, Status)]) -> Vec<String> {
    let mut out = Vec::new();
    let is = |s: &Status, wanted: Status| *s == wanted;
    let applies = |s: &Status| matches!(s, Status::Ok);
    // A run of `redundant` up to the newest release, after a release where it applied.
    let tail = statuses
        .iter()
        .rev()
        .take_while(|(_, s)| is(s, Status::Redundant))
        .count();
    if tail > 0 && tail < statuses.len() && applies(&statuses[statuses.len() - tail - 1].1) {
        let from = &statuses[statuses.len() - tail].0;
        let before = &statuses[statuses.len() - tail - 1].0;
        out.push(format!(
            "`{rule}`: add fixed_upstream: {{{package}: \">={from}\"}} (redundant from {package} {from} on){}",
            sampled(rule, package, before, from)
        ));
    }
    let missing_tail = statuses
        .iter()
        .rev()
        .take_while(|(_, s)| is(s, Status::Missing))
        .count();
    if missing_tail > 0
        && missing_tail < statuses.len()
        && applies(&statuses[statuses.len() - missing_tail - 1].1)
    {
        let from = &statuses[statuses.len() - missing_tail].0;
        let before = &statuses[statuses.len() - missing_tail - 1].0;
        out.push(format!(
            "`{rule}`: bound requires with {package} \"<{from}\" (missing from {package} {from} on: the shape it patches is gone, or moved){}",
            sampled(rule, package, before, from)
        ));
    }
    let missing_head = statuses
        .iter()
        .take_while(|(_, s)| is(s, Status::Missing))
        .count();
    if missing_head > 0 && missing_head < statuses.len() && applies(&statuses[missing_head].1) {
        let from = &statuses[missing_head].0;
        let before = &statuses[missing_head - 1].0;
        out.push(format!(
            "`{rule}`: bound requires with {package} \">={from}\" (missing before {package} {from}: the shape it patches is not there yet){}",
            sampled(rule, package, before, from)
        ));
    }
    out
}
