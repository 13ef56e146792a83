//! `regraft bisect`: the first release where a rule's status changes, found in O(log n)
//! fetches, with the upstream change around the code the rule looked at.

use std::path::Path;

use pep440_rs::Version;

use super::{MatrixTarget, Row, run};
use crate::compile::RuleSet;
use crate::error::Error;
use crate::fetch::{Fetcher, Selection};
use crate::versions::VersionEnv;

/// How many lines around a site count as "what the rule looked at".
const AROUND: usize = 30;

/// What `bisect` found.
#[derive(Debug)]
pub struct Bisection {
    /// The rule.
    pub rule: String,
    /// The package.
    pub package: String,
    /// How many releases the selection holds.
    pub releases: usize,
    /// How many of them were surveyed.
    pub looked_at: usize,
    /// The rule's cell on the oldest selected release, when nothing changed; else on the
    /// last release with the oldest's status.
    pub good: (Version, Row),
    /// The first release whose status differs, and its cell; `None` when none does.
    pub bad: Option<(Version, Row)>,
    /// The upstream diff between the two, restricted to hunks near the good release's sites.
    pub diff: String,
}

/// Bisects `rule` over the releases `selection` admits, as `pick` takes them (oldest first):
/// the whole asked range unless told otherwise, sampled in O(log n) fetches.
pub fn bisect(
    rules: &RuleSet,
    rule: &str,
    selection: &Selection,
    pick: crate::fetch::Pick,
    with: &VersionEnv,
    fetcher: &Fetcher,
) -> Result<Bisection, Error> {
    if !rules.rules.iter().any(|r| r.id() == rule) {
        return Err(Error::Usage(format!("no rule `{rule}` in the rules given")));
    }
    let (releases, _) = fetcher.pick(selection, pick)?;
    let package = selection.package.clone();
    let looked_at = std::cell::Cell::new(0);
    let cell = |version: &Version| -> Result<Row, Error> {
        looked_at.set(looked_at.get() + 1);
        let target = MatrixTarget {
            package: package.clone(),
            version: version.clone(),
            dir: fetcher.tree(&package, version)?,
        };
        let matrix = run(rules, std::slice::from_ref(&target), with)?;
        Ok(matrix
            .rows
            .into_iter()
            .find(|r| r.rule == rule)
            .expect("the rule has a row"))
    };
    let first = cell(&releases[0])?;
    let last_index = releases.len() - 1;
    let last = cell(&releases[last_index])?;
    if last.status == first.status {
        return Ok(Bisection {
            rule: rule.to_string(),
            package,
            releases: releases.len(),
            looked_at: looked_at.get(),
            good: (releases[0].clone(), first),
            bad: None,
            diff: String::new(),
        });
    }
    // The oldest has the first status, the newest another: narrow to the boundary.
    let (mut lo, mut hi) = (0, last_index);
    let (mut lo_row, mut hi_row) = (first, last);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let row = cell(&releases[mid])?;
        if row.status == lo_row.status {
            (lo, lo_row) = (mid, row);
        } else {
            (hi, hi_row) = (mid, row);
        }
    }
    let good_dir = fetcher.tree(&package, &releases[lo])?;
    let bad_dir = fetcher.tree(&package, &releases[hi])?;
    let diff = site_diff(&lo_row, &good_dir, &bad_dir);
    Ok(Bisection {
        rule: rule.to_string(),
        package,
        releases: releases.len(),
        looked_at: looked_at.get(),
        good: (releases[lo].clone(), lo_row),
        bad: Some((releases[hi].clone(), hi_row)),
        diff,
    })
}

/// The unified diff, file by file, of the hunks within `AROUND` lines of a site the rule
/// matched in the good release.
fn site_diff(good: &Row, good_dir: &Path, bad_dir: &Path) -> String {
    let mut files: Vec<&str> = good.sites.iter().map(|(f, _)| f.as_str()).collect();
    files.dedup();
    let mut out = String::new();
    for file in files {
        let old = std::fs::read_to_string(good_dir.join(file)).unwrap_or_default();
        let Ok(new) = std::fs::read_to_string(bad_dir.join(file)) else {
            out.push_str(&format!("{file}: removed\n"));
            continue;
        };
        let lines: Vec<usize> = good
            .sites
            .iter()
            .filter(|(f, _)| f == file)
            .map(|(_, l)| *l)
            .collect();
        let near = |range: std::ops::Range<usize>| {
            lines
                .iter()
                .any(|l| range.start <= l + AROUND && l.saturating_sub(AROUND) <= range.end)
        };
        let diff = similar::TextDiff::from_lines(&old, &new);
        let mut shown = false;
        for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
            let old_range = hunk
                .ops()
                .first()
                .zip(hunk.ops().last())
                .map_or(0..0, |(a, b)| {
                    a.old_range().start + 1..b.old_range().end + 1
                });
            if near(old_range) {
                if !shown {
                    out.push_str(&format!("--- a/{file}\n+++ b/{file}\n"));
                    shown = true;
                }
                out.push_str(&hunk.to_string());
            }
        }
    }
    out
}
