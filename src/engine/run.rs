//! Running the schedule on a parsed text: each phase in order, and in each phase each planning
//! step (`after`) on the output of the one before, one parse per step.

use super::Engine;
use super::outcome::{RuleReport, RuleStatus, Survey};
use super::parsed::Parsed;
use super::probe::inactive_reason;
use super::schedule::Schedule;
use super::step::StepInput;
use crate::compile::RuleId;
use crate::prefilter::Hits;
use crate::versions::Gate;

impl Engine<'_> {
    /// Runs every phase on `text` (parsed as `parsed`; `hits` its literal scan, if made);
    /// returns the survey and the tree of its output. `check_expect` is off for the re-run
    /// that checks the output is a fixed point.
    pub(crate) fn run(
        &self,
        schedule: &Schedule<'_>,
        path: &str,
        mut text: String,
        mut hits: Option<&Hits>,
        mut parsed: Parsed,
        check_expect: bool,
    ) -> (Survey, Parsed) {
        let mut survey = Survey::default();
        for phase in &schedule.phases {
            // Rules that run `after` others see their output: one parse per step. Each step's
            // gates and `when` probes are read on the text that step sees, so a probe may
            // test for what an earlier step wrote.
            let last_step = phase
                .selected
                .iter()
                .map(|(id, _)| self.rules.rule(*id).step)
                .max();
            for step in 0..=last_step.unwrap_or(0) {
                let mut group: Vec<RuleId> = Vec::new();
                for (id, gate) in &phase.selected {
                    let rule = self.rules.rule(*id);
                    if rule.step != step {
                        continue;
                    }
                    let root = Some(parsed.tree.root_node());
                    match inactive_reason(rule, gate, &text, root) {
                        None => group.push(*id),
                        Some(reason) => {
                            let status = match gate {
                                Gate::Retired { .. } => RuleStatus::Retired,
                                _ => RuleStatus::Inactive,
                            };
                            survey
                                .rules
                                .push(RuleReport::bare(rule, *id, status, Some(reason)));
                        }
                    }
                }
                if group.is_empty() {
                    continue;
                }
                let outcome = self.step(&StepInput {
                    path,
                    text: &text,
                    hits,
                    parsed: &parsed,
                    active: &group,
                    check_expect,
                    only_step: schedule.single_step,
                });
                survey.rules.extend(outcome.reports);
                survey.errors.extend(outcome.errors);
                survey.misses.extend(outcome.misses);
                survey.wrote(outcome.written, outcome.shifts.as_ref());
                if let Some((next, next_parsed)) = outcome.next {
                    text = next;
                    parsed = next_parsed;
                    // The scan was of the text as read.
                    hits = None;
                }
            }
        }
        // Reports in the schedule's order, as a file that is never parsed lists them.
        // (A rank per rule, computed once: a search per comparison was quadratic in the pack.)
        let mut rank = vec![usize::MAX; self.rules.rules.len()];
        for (at, (id, _)) in schedule.order.iter().enumerate() {
            rank[id.0] = at;
        }
        survey.rules.sort_by_key(|r| rank[r.index.0]);
        survey.output = text;
        (survey, parsed)
    }
}
