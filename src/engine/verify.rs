//! Checks of a step's result before anything is kept: the patched text parses, and running the
//! rules on their own output changes nothing.

use super::outcome::{RuleStatus, Survey};
use super::parsed::{Parsed, error_span};
use super::schedule::Schedule;
use super::step::StepInput;
use super::{Engine, PatchError};
use crate::compile::RuleId;
use crate::edit::{self, PlannedEdit};
use crate::python::{describe_syntax_error, first_syntax_error};
use crate::source::{SourceFile, span};

/// Applies a step's ordered edits and parses the result; a result with a syntax error is
/// refused, naming every rule whose edits went in.
pub(crate) fn apply_and_reparse(
    engine: &Engine<'_>,
    input: &StepInput<'_>,
    planned: &[PlannedEdit],
) -> Result<(String, Parsed), (Vec<RuleId>, PatchError)> {
    let output = edit::apply(input.text, planned);
    let reparsed = if input.only_step && input.parsed.regions.is_some() {
        input.parsed.edited_regions(&output, planned)
    } else {
        input.parsed.reparse(input.text, planned, &output)
    };
    let Some(error) = first_syntax_error(reparsed.tree.root_node()) else {
        return Ok((output, reparsed));
    };
    let mut rules: Vec<RuleId> = planned.iter().map(|p| RuleId(p.rule)).collect();
    rules.sort_unstable();
    rules.dedup();
    let names: Vec<String> = rules
        .iter()
        .map(|&r| format!("`{}`", engine.rules.rule(r).id()))
        .collect();
    let error = PatchError::UnparseableResult {
        path: input.path.to_string(),
        reason: describe_syntax_error(error, &output),
        rules: names.join(", "),
        at: span(error_span(error, &output)),
        src: SourceFile::new(input.path, output.clone()).named_source(),
    };
    Err((rules, error))
}

/// Records a failure when running the rules on `survey`'s output (parsed as `output_tree`)
/// would edit it again: a patch must be a fixed point.
pub(crate) fn check_fixed_point(
    engine: &Engine<'_>,
    schedule: &Schedule<'_>,
    path: &str,
    survey: &mut Survey,
    output_tree: Parsed,
) {
    let again = engine
        .run(schedule, path, survey.output.clone(), output_tree, false)
        .0;
    let Some(report) = again.rules.iter().find(|r| r.status == RuleStatus::Applied) else {
        return;
    };
    let at = report
        .matches
        .iter()
        .find_map(|m| m.edits.first())
        .map_or(0..0, |e| e.range.clone());
    survey.errors.push((
        vec![report.index],
        PatchError::NotIdempotent {
            rule: report.rule.clone(),
            path: path.to_string(),
            src: SourceFile::new(path, survey.output.clone()).named_source(),
            at: span(at),
        },
    ));
}
