//! `family: NAME`: rules that patch one thing across version ranges. Their ranges must neither
//! overlap (two members would patch one release twice) nor leave a hole inside the family's
//! overall range (a release in the middle would go unpatched, silently).

use std::collections::BTreeMap;

use version_ranges::Ranges;

use crate::rules::error::{RuleError, RuleErrorKind};
use crate::rules::model::Rule;

type Range = Ranges<pep440_rs::Version>;

/// Warnings for every family whose members' ranges overlap or leave a hole.
pub(super) fn families(rules: &[Rule]) -> Vec<RuleError> {
    let mut by_family: BTreeMap<&str, Vec<&Rule>> = BTreeMap::new();
    for rule in rules {
        if let Some(family) = &rule.family {
            by_family.entry(&family.value).or_default().push(rule);
        }
    }
    let mut out = Vec::new();
    for (family, members) in by_family {
        let mut packages: Vec<&str> = members
            .iter()
            .flat_map(|r| r.requires.iter().map(|q| q.package.value.as_str()))
            .collect();
        packages.sort_unstable();
        packages.dedup();
        for package in packages {
            out.extend(check(family, package, &members));
        }
    }
    out
}

/// A member's range for `package`: what its `requires` admits (every version where it says
/// nothing of the package).
fn range_of(rule: &Rule, package: &str) -> Range {
    rule.requires
        .iter()
        .filter(|q| q.package.value == package)
        .fold(Range::full(), |acc, q| {
            acc.intersection(&q.specifiers.value.clone().into())
        })
}

fn check(family: &str, package: &str, members: &[&Rule]) -> Vec<RuleError> {
    let mut out = Vec::new();
    let ranges: Vec<Range> = members.iter().map(|r| range_of(r, package)).collect();
    for i in 0..members.len() {
        for j in i + 1..members.len() {
            let both = ranges[i].intersection(&ranges[j]);
            if !both.is_empty() {
                out.push(finding(
                    members[j],
                    family,
                    format!(
                        "its {package} range overlaps `{}`'s where both hold: {both}",
                        members[i].id.value
                    ),
                ));
            }
        }
    }
    let union = ranges.iter().fold(Range::empty(), |acc, r| acc.union(r));
    if let Some((low, high)) = union.bounding_range() {
        let hull = Range::from_range_bounds((low.cloned(), high.cloned()));
        let hole = hull.intersection(&union.complement());
        if !hole.is_empty() {
            out.push(finding(
                members[0],
                family,
                format!("no member covers {package} {hole}, inside the family's range {hull}"),
            ));
        }
    }
    out
}

fn finding(rule: &Rule, family: &str, reason: String) -> RuleError {
    let span = rule
        .family
        .as_ref()
        .map_or(rule.id.span.clone(), |f| f.span.clone());
    RuleError::new(
        RuleErrorKind::FamilyRanges {
            family: family.to_string(),
            reason,
        },
        &rule.origin.file,
        span,
    )
}
