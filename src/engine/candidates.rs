//! The parse stage's one decision: from the schedule and the literal scan, whether a file needs
//! no parse at all (no rule can match it), a parse of only the statements that could hold a
//! match, or a parse of the whole file.

use std::ops::Range;

use super::outcome::{RuleReport, RuleStatus};
use super::probe::{inactive_reason, probe};
use super::schedule::Schedule;
use super::{Engine, Target};
use crate::compile::Locator;
use crate::prefilter::{Anchor, Hits};
use crate::python::regions::{LogicalLines, statement_regions_in, top_level_regions};
use crate::versions::Gate;

/// What the file is parsed as.
pub(crate) enum ParseChoice {
    /// Nothing: no rule can match, and these are the reports a run would give.
    Untouched(Vec<RuleReport>),
    /// The statements at these byte ranges alone (every open rule is statement-local).
    Regions(Vec<Range<usize>>),
    /// The whole file.
    Whole,
}

/// Decides how `target` is parsed, given its literal scan (`None`: the prefilter is off, and
/// every selected file is parsed whole).
pub(crate) fn choose(
    engine: &Engine<'_>,
    schedule: &Schedule<'_>,
    target: Target<'_>,
    hits: Option<&Hits>,
) -> ParseChoice {
    let Some(hits) = hits else {
        return ParseChoice::Whole;
    };
    if !needs_parse(engine, schedule, target, hits) {
        return ParseChoice::Untouched(unmatched_reports(engine, schedule, target.source));
    }
    match candidate_statements(engine, schedule, target, hits) {
        Some(regions) => ParseChoice::Regions(regions),
        None => ParseChoice::Whole,
    }
}

/// Whether any rule could match `target` (by the prefilter), or needs the parse to report that
/// it did not.
fn needs_parse(
    engine: &Engine<'_>,
    schedule: &Schedule<'_>,
    target: Target<'_>,
    hits: &Hits,
) -> bool {
    let possible = engine.rules.prefilter.possible(hits);
    schedule.open().any(|id| {
        let rule = engine.rules.rule(id);
        // Structural probes decide between inactive and no-match only on the tree.
        let structural = rule.when_has.is_some() || rule.when_lacks.is_some();
        probe(rule, target.source, None).is_ok()
            && (possible[id.0] || structural || rule.rule.expect.is_some_and(|e| e.min > 0))
    })
}

/// The reports of a file no rule can match: what a run would say, without parsing.
fn unmatched_reports(engine: &Engine<'_>, schedule: &Schedule<'_>, text: &str) -> Vec<RuleReport> {
    schedule
        .order
        .iter()
        .map(|(id, gate)| {
            let rule = engine.rules.rule(*id);
            let reason = inactive_reason(rule, gate, text, None);
            let status = match (reason.is_some(), gate) {
                (false, _) => RuleStatus::NoMatch,
                (true, Gate::Retired { .. }) => RuleStatus::Retired,
                (true, _) => RuleStatus::Inactive,
            };
            RuleReport::bare(rule, *id, status, reason)
        })
        .collect()
}

/// The statements of `target` that could hold a match of a rule that runs on it, when every
/// such rule has a `Locator` (statement-local rules: the statements; scoped ones: the
/// top-level statements); `None` otherwise.
fn candidate_statements(
    engine: &Engine<'_>,
    schedule: &Schedule<'_>,
    target: Target<'_>,
    hits: &Hits,
) -> Option<Vec<Range<usize>>> {
    let mut anchored = Vec::new();
    let mut lines_assign = Vec::new();
    let mut assignments = Vec::new();
    let mut top_level = Vec::new();
    for id in schedule.open() {
        match engine.rules.rule(id).locator? {
            Locator::Anchor { assignment } => {
                anchored.push(id.0);
                lines_assign.push(assignment);
            }
            Locator::Assignment { shape } => assignments.push(shape),
            Locator::TopLevel => top_level.push(id.0),
        }
    }
    let mut anchors = engine.rules.prefilter.anchors(hits, &anchored)?;
    for (anchor, assignment) in anchors.iter_mut().zip(lines_assign) {
        anchor.assignment = assignment;
    }
    let lines = LogicalLines::scan(target.source)?;
    let regions = statement_regions_in(&lines, target.source, &anchors, &assignments)?;
    if top_level.is_empty() {
        return Some(regions);
    }
    // With a scoped rule in the schedule every region is its whole top-level statement: what
    // an earlier step writes in a statement may be a match a later scoped rule (or the check
    // of the fixed point, on the edited regions) sees only with its class and function.
    let mut anchors = engine.rules.prefilter.statement_anchors(hits, &top_level)?;
    // Every line of the statement regions: one region may hold several top-level statements
    // (adjacent ones are merged), and a match in any of them was missed where only the
    // region's start was given (`x = layer(x, True)` then `out = decoder_layer(h)`, with a
    // scoped rule beside).
    anchors.push(Anchor::at(lines.starts_within(&regions).collect()));
    Some(top_level_regions(&lines, target.source, &anchors))
}
