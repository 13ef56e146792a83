//! The per-file pipeline: gate → find candidates → check scopes and patterns → plan edits →
//! check expectations and conflicts → apply → verify the result parses and is a fixed point.

pub mod actions;
pub mod arglist;
pub mod error;
pub mod explain;
pub mod scope;
pub mod signature;

use std::collections::HashSet;
use std::ops::Range;

use miette::LabeledSpan;
use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, QueryCursor, Tree};

use crate::compile::{CompiledRule, Locator, RuleSet};
use crate::edit::{self, Edit, PlannedEdit};
use crate::pattern::matcher::{Bindings, Matcher};
use crate::pattern::query::ROOT_CAPTURE;
use crate::python::{self, definition_name, describe_syntax_error, first_syntax_error};
use crate::rules::error::{RuleError, RuleErrorKind};
use crate::rules::model::{OnMiss, Phase};
use crate::source::{LineCol, LineIndex, SourceFile, span};
use crate::versions::{Gate, VersionEnv};
use actions::{Signatures, Site};
pub use error::PatchError;

/// A file to patch: the path rules' `files` globs see, and its text.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The path, `/`-separated, as shown in reports and matched by globs.
    pub path: &'a str,
    /// The file's text.
    pub source: &'a str,
}

/// What happened to one rule in one file.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuleStatus {
    /// The version gate is off.
    Inactive,
    /// It matched and edited.
    Applied,
    /// It matched, but every match already had the wanted shape: the patch is redundant for
    /// this source, the signal that it can be retired for this upstream range.
    Redundant,
    /// It found nothing (and expects nothing, or expects nothing in particular).
    NoMatch,
    /// It failed: drift, a conflict, an action that cannot apply, or an unparseable result.
    Failed,
}

/// One edit, located in the text its phase ran on.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct EditReport {
    /// Byte range replaced.
    pub range: Range<usize>,
    /// Where the range starts.
    pub start: LineCol,
    /// Where the range ends.
    pub end: LineCol,
    /// The new text.
    pub replacement: String,
}

fn pairs_as_map<S: serde::Serializer>(pairs: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(pairs.len()))?;
    for (k, v) in pairs {
        map.serialize_entry(k, v)?;
    }
    map.end()
}

/// One match of a rule.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MatchReport {
    /// Byte range of the matched node.
    pub range: Range<usize>,
    /// Where it starts.
    pub start: LineCol,
    /// Where it ends.
    pub end: LineCol,
    /// What each named metavariable bound, in binding order (a JSON object).
    #[serde(serialize_with = "pairs_as_map")]
    pub bindings: Vec<(String, String)>,
    /// The edits made at this match.
    pub edits: Vec<EditReport>,
    /// Whether `unless` or `not_inside` left this match alone (it is already patched).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub guarded: bool,
}

/// What one rule did in one file.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RuleReport {
    /// The rule's id.
    pub rule: String,
    /// The phase it ran in.
    pub phase: Phase,
    /// Its planning step within the phase (rules with `after` run in later steps).
    pub step: usize,
    /// The outcome.
    pub status: RuleStatus,
    /// Why the rule is inactive, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Its matches.
    pub matches: Vec<MatchReport>,
}

impl serde::Serialize for Phase {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// The outcome of patching one file.
#[derive(Debug)]
pub struct Patched {
    /// The patched text (equal to the input when nothing changed).
    pub output: String,
    /// Every rule that selected the file, in the order the rules ran.
    pub rules: Vec<RuleReport>,
    /// Drift of rules with `on_miss: warn`: to report, without failing.
    pub warnings: Vec<PatchError>,
}

impl Patched {
    /// Whether any edit was made.
    pub fn changed(&self) -> bool {
        self.rules.iter().any(|r| r.status == RuleStatus::Applied)
    }
}

/// Everything that happened in one file, failures included: what `matrix` reads.
#[derive(Debug)]
pub struct Survey {
    /// The patched text, with the edits of the rules that did not fail.
    pub output: String,
    /// Every rule that selected the file, in the order the rules ran.
    pub rules: Vec<RuleReport>,
    /// Each failure with the indexes of the rules it concerns, in the order found.
    pub errors: Vec<(Vec<usize>, PatchError)>,
    /// Drift of rules whose `on_miss` is `warn` or `skip`: reported, not failing the file.
    pub misses: Vec<(usize, PatchError)>,
}

/// Applies a rule set under given versions, one file at a time; shareable across threads.
#[derive(Debug, Clone, Copy)]
pub struct Engine<'r> {
    rules: &'r RuleSet,
    versions: &'r VersionEnv,
    phase: Option<Phase>,
    prefilter: bool,
    /// Every rule selects every file, whatever its `files` globs say.
    all_files: bool,
    /// Source searched for `kwargs_to_positional` signatures the target lacks.
    signature_context: Option<&'r str>,
}

struct Found<'t> {
    node: Node<'t>,
    bindings: Bindings<'t>,
    /// `unless` or `not_inside` found: the match counts but is left as it is.
    guarded: bool,
}

impl<'r> Engine<'r> {
    /// An engine for `rules` with package `versions`; `phase` limits it to one phase.
    pub fn new(rules: &'r RuleSet, versions: &'r VersionEnv, phase: Option<Phase>) -> Self {
        Self {
            rules,
            versions,
            phase,
            prefilter: true,
            all_files: false,
            signature_context: None,
        }
    }

    /// Lets every rule select every file: for source that has no file name (a class's source
    /// patched at run time), where `files` globs have nothing to match.
    pub fn selecting_all_files(mut self) -> Self {
        self.all_files = true;
        self
    }

    /// Looks up `kwargs_to_positional` signatures in `context` when the target does not define
    /// them: a class patched at run time calls layers defined elsewhere in its module.
    pub fn with_signature_context(mut self, context: &'r str) -> Self {
        self.signature_context = Some(context);
        self
    }

    /// Refuses rules that would run but whose required package has no known version: such a
    /// rule can be neither applied nor skipped with confidence.
    pub fn check_versions_known(&self) -> Result<(), RuleError> {
        for (rule, gate) in self.gates() {
            if let Gate::Unknown { requirement } = gate {
                let package = requirement.package.value.clone();
                return Err(RuleError::new(
                    RuleErrorKind::UnknownVersion {
                        rule: rule.id().to_string(),
                        package: package.clone(),
                    },
                    &rule.rule.origin.file,
                    requirement.package.span.clone(),
                )
                .with_help(format!(
                    "pass --with {package}=VERSION or --site-packages DIR (versions= in Python)"
                )));
            }
        }
        Ok(())
    }

    /// Whether `rule` looks at the file at `path`.
    fn selects(&self, rule: &CompiledRule, path: &str) -> bool {
        self.all_files || rule.selects(path)
    }

    /// Turns the literal prefilter and statement regions off (every selected file is parsed
    /// whole); for tests that check they never change an outcome.
    pub fn without_prefilter(mut self) -> Self {
        self.prefilter = false;
        self
    }

    /// The rules this engine runs, with their version gates.
    pub fn gates(&self) -> impl Iterator<Item = (&'r CompiledRule, Gate<'r>)> + '_ {
        self.rules
            .rules
            .iter()
            .filter(move |r| self.phase.is_none_or(|p| r.rule.phase == p))
            .map(|r| (r, self.versions.gate(&r.rule)))
    }

    /// Patches one file: every phase in order, each on the output of the one before. The first
    /// failure of any rule fails the file.
    pub fn patch(&self, target: Target<'_>) -> Result<Patched, PatchError> {
        let mut survey = self.survey(target)?;
        if !survey.errors.is_empty() {
            return Err(survey.errors.swap_remove(0).1);
        }
        let warnings = survey
            .misses
            .into_iter()
            .filter(|(rule, _)| self.rules.rules[*rule].rule.on_miss == OnMiss::Warn)
            .map(|(_, e)| e)
            .collect();
        Ok(Patched {
            output: survey.output,
            rules: survey.rules,
            warnings,
        })
    }

    /// Runs every rule on one file and records each rule's failure instead of stopping at the
    /// first: a failing rule's edits are left out and the others still apply. Only a target
    /// that does not parse is an error here.
    pub fn survey(&self, target: Target<'_>) -> Result<Survey, PatchError> {
        let selected =
            self.rules.rules.iter().any(|r| {
                self.phase.is_none_or(|p| r.rule.phase == p) && self.selects(r, target.path)
            });
        if !selected {
            // No rule looks at this file: it is not even parsed.
            return Ok(Survey {
                output: target.source.to_string(),
                rules: Vec::new(),
                errors: Vec::new(),
                misses: Vec::new(),
            });
        }
        if self.prefilter && !self.needs_parse(target) {
            return Ok(Survey {
                output: target.source.to_string(),
                rules: self.unmatched_reports(target.path, target.source),
                errors: Vec::new(),
                misses: Vec::new(),
            });
        }
        if self.prefilter
            && let Some(survey) = self.survey_regions(target)
        {
            return Ok(survey);
        }
        let tree = parse_target(target)?;
        Ok(self.survey_parsed(
            target,
            Parsed {
                tree,
                regions: None,
            },
        ))
    }

    /// Surveys a file from a parse of only the statements that could hold a match, where every
    /// active rule is statement-local (see `CompiledRule::locator`). `None` sends the file to a
    /// whole parse: a rule that is not local, a region that does not parse cleanly, or any
    /// failure or miss, which a whole parse describes with the file's full context.
    fn survey_regions(&self, target: Target<'_>) -> Option<Survey> {
        let regions = self.candidate_statements(target)?;
        let tree = python::parse_regions(target.source, &regions)?;
        let survey = self.survey_parsed(
            target,
            Parsed {
                tree,
                regions: Some(regions),
            },
        );
        (survey.errors.is_empty() && survey.misses.is_empty()).then_some(survey)
    }

    /// The statements of `target` that could hold a match of a rule that runs on it, when
    /// every such rule is statement-local.
    fn candidate_statements(&self, target: Target<'_>) -> Option<Vec<Range<usize>>> {
        let mut anchored = Vec::new();
        let mut assignments = Vec::new();
        for (i, gate) in self.running_order(target.path) {
            if gate != Gate::Open {
                continue;
            }
            match self.rules.rules[i].locator? {
                Locator::Anchor => anchored.push(i),
                Locator::Assignment { punctuation } => assignments.push(punctuation),
            }
        }
        let anchors = self.rules.prefilter.anchors(target.source, &anchored)?;
        crate::regions::statement_regions(target.source, &anchors, &assignments)
    }

    /// Runs the rules on a parsed file, then checks that running them on their own output
    /// changes nothing.
    fn survey_parsed(&self, target: Target<'_>, parsed: Parsed) -> Survey {
        let (mut survey, output_tree) =
            self.run(target.path, target.source.to_string(), parsed, true);
        if survey.output != target.source && survey.errors.is_empty() {
            // Applying the rules to their own output must change nothing.
            let (again, _) = self.run(target.path, survey.output.clone(), output_tree, false);
            if let Some(report) = again.rules.iter().find(|r| r.status == RuleStatus::Applied) {
                let at = report
                    .matches
                    .iter()
                    .find_map(|m| m.edits.first())
                    .map_or(0..0, |e| e.range.clone());
                let index = self.index_of(&report.rule);
                survey.errors.push((
                    vec![index],
                    PatchError::NotIdempotent {
                        rule: report.rule.clone(),
                        path: target.path.to_string(),
                        src: SourceFile::new(target.path, survey.output.clone()).named_source(),
                        at: span(at),
                    },
                ));
            }
        }
        survey
    }

    /// The rules that run on `path`, phase by phase, in the order `run` visits them: in each
    /// phase the gated-off ones first, then the active ones by planning step.
    fn running_order(&self, path: &str) -> Vec<(usize, Gate<'r>)> {
        let mut out = Vec::new();
        for phase in Phase::ALL {
            if self.phase.is_some_and(|p| p != phase) {
                continue;
            }
            let mut active = Vec::new();
            for (i, r) in self.rules.rules.iter().enumerate() {
                if r.rule.phase != phase || !self.selects(r, path) {
                    continue;
                }
                match self.versions.gate(&r.rule) {
                    Gate::Open => active.push(i),
                    gate => out.push((i, gate)),
                }
            }
            active.sort_by_key(|&i| (self.rules.rules[i].step, i));
            out.extend(active.into_iter().map(|i| (i, Gate::Open)));
        }
        out
    }

    /// Whether any rule could match `target` (by the prefilter), or needs the parse to report
    /// that it did not.
    fn needs_parse(&self, target: Target<'_>) -> bool {
        let possible = self.rules.prefilter.possible(target.source);
        self.running_order(target.path)
            .into_iter()
            .any(|(i, gate)| {
                let rule = &self.rules.rules[i];
                // Structural probes decide between inactive and no-match only on the tree.
                let structural = rule.when_has.is_some() || rule.when_lacks.is_some();
                gate == Gate::Open
                    && probe(rule, target.source, None).is_ok()
                    && (possible[i] || structural || rule.rule.expect.is_some_and(|e| e.min > 0))
            })
    }

    /// The reports of a file no rule can match: what `run` would say, without parsing.
    fn unmatched_reports(&self, path: &str, text: &str) -> Vec<RuleReport> {
        self.running_order(path)
            .into_iter()
            .map(|(i, gate)| {
                let rule = &self.rules.rules[i];
                let reason = match &gate {
                    Gate::Open => probe(rule, text, None).err(),
                    gate => Some(gate_reason(gate)),
                };
                let open = reason.is_none();
                RuleReport {
                    rule: rule.id().to_string(),
                    phase: rule.rule.phase,
                    step: rule.step,
                    status: if open {
                        RuleStatus::NoMatch
                    } else {
                        RuleStatus::Inactive
                    },
                    reason,
                    matches: Vec::new(),
                }
            })
            .collect()
    }

    fn index_of(&self, id: &str) -> usize {
        self.rules
            .rules
            .iter()
            .position(|r| r.id() == id)
            .expect("reports name rules of this set")
    }

    /// Runs every phase; returns the survey and the tree of its output text.
    fn run(
        &self,
        path: &str,
        mut text: String,
        mut parsed: Parsed,
        check_expect: bool,
    ) -> (Survey, Parsed) {
        let mut reports = Vec::new();
        let mut errors = Vec::new();
        let mut misses = Vec::new();
        // With one planning step in all, the text after it is only checked, not planned on:
        // where every rule is statement-local, the statements it edited are all there is to
        // re-parse and check (every other statement is as it was, and gave no edit).
        let groups: HashSet<(Phase, usize)> = self
            .running_order(path)
            .into_iter()
            .filter(|(_, gate)| *gate == Gate::Open)
            .map(|(i, _)| (self.rules.rules[i].rule.phase, self.rules.rules[i].step))
            .collect();
        let only_edits = groups.len() == 1;
        for phase in Phase::ALL {
            if self.phase.is_some_and(|p| p != phase) {
                continue;
            }
            let selected: Vec<usize> = (0..self.rules.rules.len())
                .filter(|&i| {
                    let r = &self.rules.rules[i];
                    r.rule.phase == phase && self.selects(r, path)
                })
                .collect();
            if selected.is_empty() {
                continue;
            }
            let mut active = Vec::new();
            for &i in &selected {
                let reason = match self.versions.gate(&self.rules.rules[i].rule) {
                    Gate::Open => {
                        probe(&self.rules.rules[i], &text, Some(parsed.tree.root_node())).err()
                    }
                    gate => Some(gate_reason(&gate)),
                };
                match reason {
                    None => active.push(i),
                    Some(reason) => reports.push(RuleReport {
                        rule: self.rules.rules[i].id().to_string(),
                        phase,
                        step: self.rules.rules[i].step,
                        status: RuleStatus::Inactive,
                        reason: Some(reason),
                        matches: Vec::new(),
                    }),
                }
            }
            // Rules that run `after` others see their output: one parse per step.
            let last_step = active.iter().map(|&i| self.rules.rules[i].step).max();
            for step in 0..=last_step.unwrap_or(0) {
                let group: Vec<usize> = active
                    .iter()
                    .copied()
                    .filter(|&i| self.rules.rules[i].step == step)
                    .collect();
                if group.is_empty() {
                    continue;
                }
                let next = self.run_phase(
                    path,
                    &text,
                    &parsed,
                    only_edits,
                    phase,
                    &group,
                    check_expect,
                    &mut reports,
                    &mut errors,
                    &mut misses,
                );
                if let Some((next, next_parsed)) = next {
                    text = next;
                    parsed = next_parsed;
                }
            }
        }
        let survey = Survey {
            output: text,
            rules: reports,
            errors,
            misses,
        };
        (survey, parsed)
    }

    /// Runs one phase; returns the new text if anything changed. Failures go to `errors` with
    /// the rules they concern, and those rules' edits are left out.
    #[allow(clippy::too_many_arguments)]
    fn run_phase(
        &self,
        path: &str,
        text: &str,
        parsed: &Parsed,
        only_edits: bool,
        phase: Phase,
        active: &[usize],
        check_expect: bool,
        reports: &mut Vec<RuleReport>,
        errors: &mut Vec<(Vec<usize>, PatchError)>,
        misses: &mut Vec<(usize, PatchError)>,
    ) -> Option<(String, Parsed)> {
        let root = parsed.tree.root_node();
        let found = self.find(text, root, active);
        // The text is copied into a diagnostic's source only when one is made.
        let file = || SourceFile::new(path, text);
        let lines = LineIndex::new(text);
        let locate =
            |r: &Range<usize>| (lines.line_col(text, r.start), lines.line_col(text, r.end));
        let mut signatures = Signatures::new(self.signature_context);
        let mut planned: Vec<PlannedEdit> = Vec::new();
        let first_report = reports.len();
        // A file with Windows line ends gets them in inserted code too.
        let crlf = text.find('\n').is_some_and(|i| text[..i].ends_with('\r'));
        let mut failed: Vec<usize> = Vec::new();
        for (&rule_index, matches) in active.iter().zip(&found) {
            let rule = &self.rules.rules[rule_index];
            let mut status = None;
            if check_expect
                && let Some(expect) = rule.rule.expect
                && !expect.admits(matches.len() as u64)
            {
                let miss = drift(rule, &file(), root, matches, &expect.to_string());
                match rule.rule.on_miss {
                    OnMiss::Error => errors.push((vec![rule_index], miss)),
                    OnMiss::Warn | OnMiss::Skip => misses.push((rule_index, miss)),
                }
                status = Some(RuleStatus::Failed);
            }
            let mut match_reports = Vec::new();
            let mut rule_edits = Vec::new();
            for m in matches {
                if m.guarded {
                    let (start, end) = locate(&m.node.byte_range());
                    match_reports.push(MatchReport {
                        range: m.node.byte_range(),
                        start,
                        end,
                        bindings: Vec::new(),
                        edits: Vec::new(),
                        guarded: true,
                    });
                    continue;
                }
                let site = Site {
                    source: text,
                    root,
                    node: m.node,
                    bindings: &m.bindings,
                };
                let planned_edits = actions::plan(&rule.rule.action, &site, &mut signatures)
                    .and_then(|edits| {
                        if rule.rule.preserve_lines {
                            keeps_lines(&edits, text)?;
                        }
                        Ok(edits)
                    });
                let edits = match planned_edits {
                    Ok(edits) if crlf => edits.into_iter().map(Edit::to_crlf).collect(),
                    Ok(edits) => edits,
                    Err(f) => {
                        if status.is_none() {
                            errors.push((vec![rule_index], action_error(rule, &file(), f)));
                        }
                        status = Some(RuleStatus::Failed);
                        Vec::new()
                    }
                };
                let (start, end) = locate(&m.node.byte_range());
                match_reports.push(MatchReport {
                    range: m.node.byte_range(),
                    start,
                    end,
                    bindings: m
                        .bindings
                        .named()
                        .map(|(n, c)| (n.to_string(), c.text(text).to_string()))
                        .collect(),
                    edits: edits.iter().map(|e| edit_report(e, &locate)).collect(),
                    guarded: false,
                });
                rule_edits.extend(edits.into_iter().map(|edit| PlannedEdit {
                    rule: rule_index,
                    edit,
                }));
            }
            let status = status.unwrap_or(if match_reports.is_empty() {
                RuleStatus::NoMatch
            } else if match_reports.iter().any(|m| !m.edits.is_empty()) {
                RuleStatus::Applied
            } else {
                RuleStatus::Redundant
            });
            if status == RuleStatus::Failed {
                failed.push(rule_index);
            } else {
                planned.extend(rule_edits);
            }
            reports.push(RuleReport {
                rule: rule.id().to_string(),
                phase,
                step: rule.step,
                status,
                reason: None,
                matches: match_reports,
            });
        }
        // Two rules whose edits overlap both fail; the others still apply.
        while let Err((a, b)) = edit::order(&mut planned) {
            errors.push((
                vec![a.rule, b.rule],
                PatchError::Conflict {
                    first: self.rules.rules[a.rule].id().to_string(),
                    second: self.rules.rules[b.rule].id().to_string(),
                    path: path.to_string(),
                    src: file().named_source(),
                    first_at: span(a.edit.range.clone()),
                    second_at: span(b.edit.range.clone()),
                },
            ));
            planned.retain(|p| p.rule != a.rule && p.rule != b.rule);
            failed.extend([a.rule, b.rule]);
        }
        let mark_failed = |reports: &mut Vec<RuleReport>, failed: &[usize]| {
            for r in &mut reports[first_report..] {
                if failed.iter().any(|&f| self.rules.rules[f].id() == r.rule) {
                    r.status = RuleStatus::Failed;
                }
            }
        };
        mark_failed(reports, &failed);
        if planned.is_empty() {
            return None;
        }
        let output = edit::apply(text, &planned);
        let reparsed = if only_edits && parsed.regions.is_some() {
            parsed.edited_regions(&output, &planned)
        } else {
            parsed.reparse(text, &planned, &output)
        };
        if let Some(error) = first_syntax_error(reparsed.tree.root_node()) {
            let mut rules: Vec<usize> = planned.iter().map(|p| p.rule).collect();
            rules.sort_unstable();
            rules.dedup();
            errors.push((
                rules.clone(),
                PatchError::UnparseableResult {
                    path: path.to_string(),
                    reason: describe_syntax_error(error, &output),
                    rules: rules
                        .iter()
                        .map(|&r| format!("`{}`", self.rules.rules[r].id()))
                        .collect::<Vec<_>>()
                        .join(", "),
                    at: span(error_span(error, &output)),
                    src: SourceFile::new(path, output.clone()).named_source(),
                },
            ));
            mark_failed(reports, &rules);
            return None;
        }
        Some((output, reparsed))
    }

    /// Where the candidate query runs: the top-level statements holding an anchor literal of
    /// the active rules, merged; `None` when a rule has no anchor (its matches could be
    /// anywhere). Walking only those statements finds every match, since each match contains
    /// its rule's anchor.
    fn anchored_ranges(
        &self,
        text: &str,
        root: Node<'_>,
        active: &[usize],
    ) -> Option<Vec<Range<usize>>> {
        let offsets = self.rules.prefilter.anchor_offsets(text, active)?;
        let mut ranges: Vec<Range<usize>> = Vec::new();
        for offset in offsets {
            if ranges.last().is_some_and(|r| r.contains(&offset)) {
                continue;
            }
            let Some(statement) = root.first_child_for_byte(offset) else {
                continue;
            };
            let range = statement.byte_range();
            match ranges.last_mut() {
                Some(last) if last.end >= range.start => last.end = last.end.max(range.end),
                _ => ranges.push(range),
            }
        }
        Some(ranges)
    }

    /// The candidates of the active rules (by slot in `active`): the query's matches where it
    /// runs over a few anchored statements (or everywhere, with the prefilter off), else one walk
    /// of the whole tree over node kinds. Both yield every node a rule's pattern could match;
    /// the exact matcher decides.
    fn candidates<'t>(&self, text: &str, root: Node<'t>, active: &[usize]) -> Vec<Vec<Node<'t>>> {
        if !self.prefilter {
            return self.query_candidates(text, root, active, std::iter::once(0..text.len()));
        }
        match self.anchored_ranges(text, root, active) {
            Some(ranges) => self.query_candidates(text, root, active, ranges),
            None => self.walk_candidates(root, active),
        }
    }

    /// One walk of the tree looking every node's kind up in the rule set, entering only nodes
    /// below which some active rule's root may stand.
    fn walk_candidates<'t>(&self, root: Node<'t>, active: &[usize]) -> Vec<Vec<Node<'t>>> {
        let mut candidates: Vec<Vec<Node<'t>>> = vec![Vec::new(); active.len()];
        let mut cursor = root.walk();
        loop {
            let node = cursor.node();
            let kind = usize::from(node.kind_id());
            // ERROR nodes carry an id past the language's kinds: no rule is rooted there, and
            // anything may stand below them.
            for rule in self.rules.by_root_kind.get(kind).into_iter().flatten() {
                if let Ok(slot) = active.binary_search(rule) {
                    candidates[slot].push(node);
                }
            }
            let worth_entering = self
                .rules
                .rooted_below
                .get(kind)
                .is_none_or(|rules| rules.iter().any(|r| active.binary_search(r).is_ok()));
            if worth_entering && cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    return candidates;
                }
            }
        }
    }

    /// The root captures of the shared query's matches within `ranges`.
    fn query_candidates<'t>(
        &self,
        text: &str,
        root: Node<'t>,
        active: &[usize],
        ranges: impl IntoIterator<Item = Range<usize>>,
    ) -> Vec<Vec<Node<'t>>> {
        let mut candidates: Vec<Vec<Node<'t>>> = vec![Vec::new(); active.len()];
        let query = &self.rules.query;
        let root_capture = query
            .capture_index_for_name(ROOT_CAPTURE)
            .expect("every pattern captures its root");
        let mut seen: HashSet<(usize, usize)> = HashSet::new();
        let mut cursor = QueryCursor::new();
        for range in ranges {
            cursor.set_byte_range(range);
            let mut matches = cursor.matches(query, root, text.as_bytes());
            while let Some(m) = matches.next() {
                let Ok(slot) = active.binary_search(&m.pattern_index) else {
                    continue;
                };
                for capture in m.captures().iter().filter(|c| c.index == root_capture) {
                    if seen.insert((slot, capture.node.id())) {
                        candidates[slot].push(capture.node);
                    }
                }
            }
        }
        candidates
    }

    /// Every match of each active rule, in document order.
    fn find<'t>(&self, text: &str, root: Node<'t>, active: &[usize]) -> Vec<Vec<Found<'t>>> {
        let candidates = self.candidates(text, root, active);
        let matcher = Matcher::new(text);
        candidates
            .into_iter()
            .zip(active)
            .map(|(mut nodes, &rule_index)| {
                let rule = &self.rules.rules[rule_index];
                nodes.sort_by_key(|n| (n.start_byte(), std::cmp::Reverse(n.end_byte())));
                nodes
                    .into_iter()
                    .filter_map(|node| {
                        // The pattern alone first: cheap, and most candidates of a whole-tree
                        // walk fail it; scopes (and the bindings they seed) only for the rest.
                        let mut alone = Bindings::default();
                        let matched = matcher.matches(&rule.pattern.root, node, &mut alone);
                        if !matched && !matcher.ran_out() {
                            return None;
                        }
                        let seeds = scope::scope_bindings(rule, root, node, text, &matcher).ok()?;
                        if matched && rule.loop_pattern.is_none() {
                            // No loop seeds the bindings: the pattern's alone are the match's.
                            let guarded = guarded(rule, root, node, &alone, &matcher);
                            return Some(Found {
                                node,
                                bindings: alone,
                                guarded,
                            });
                        }
                        seeds.into_iter().find_map(|mut bindings| {
                            if !matcher.matches(&rule.pattern.root, node, &mut bindings) {
                                return None;
                            }
                            let guarded = guarded(rule, root, node, &bindings, &matcher);
                            Some(Found {
                                node,
                                bindings,
                                guarded,
                            })
                        })
                    })
                    .collect()
            })
            .collect()
    }
}

/// A file's syntax tree and, where only some statements were parsed, which.
struct Parsed {
    tree: Tree,
    /// The byte ranges parsed; `None` for the whole file.
    regions: Option<Vec<Range<usize>>>,
}

impl Parsed {
    /// Of this region parse, the regions `edits` (ordered, in old-text offsets, within the
    /// regions) changed, moved to `new_text`'s offsets and parsed alone; a whole parse where
    /// they do not parse cleanly.
    fn edited_regions(&self, new_text: &str, edits: &[PlannedEdit]) -> Parsed {
        let regions: Vec<Range<usize>> = self
            .regions
            .iter()
            .flatten()
            .filter(|r| {
                edits
                    .iter()
                    .any(|p| r.start <= p.edit.range.start && p.edit.range.end <= r.end)
            })
            .map(|r| edit::moved(edits, r.start)..edit::moved(edits, r.end))
            .collect();
        Parsed::regions_or_whole(new_text, regions, |regions| {
            python::parse_regions(new_text, regions)
        })
    }

    /// `regions` parsed by `parse`, or, where they do not parse cleanly, the whole text.
    fn regions_or_whole(
        text: &str,
        regions: Vec<Range<usize>>,
        parse: impl FnOnce(&[Range<usize>]) -> Option<Tree>,
    ) -> Parsed {
        match parse(&regions) {
            Some(tree) => Parsed {
                tree,
                regions: Some(regions),
            },
            None => Parsed {
                tree: python::parse(text),
                regions: None,
            },
        }
    }

    /// The tree of `new_text`, the result of applying `edits` (ordered, in `old_text` offsets,
    /// and within the parsed regions) to `old_text`. Regions that no longer parse cleanly give
    /// way to a whole parse, which pins down what the edits broke.
    fn reparse(&self, old_text: &str, edits: &[PlannedEdit], new_text: &str) -> Parsed {
        let Some(regions) = &self.regions else {
            let tree = python::reparse(&self.tree, old_text, edits, new_text, None)
                .expect("a whole parse always yields a tree");
            return Parsed {
                tree,
                regions: None,
            };
        };
        let regions: Vec<Range<usize>> = regions
            .iter()
            .map(|r| edit::moved(edits, r.start)..edit::moved(edits, r.end))
            .collect();
        Parsed::regions_or_whole(new_text, regions, |regions| {
            python::reparse(&self.tree, old_text, edits, new_text, Some(regions))
        })
    }
}

/// Parses a target, refusing one that does not parse with a diagnostic at its first error.
fn parse_target(target: Target<'_>) -> Result<Tree, PatchError> {
    let tree = python::parse(target.source);
    match first_syntax_error(tree.root_node()) {
        None => Ok(tree),
        Some(error) => Err(PatchError::TargetSyntax {
            path: target.path.to_string(),
            reason: describe_syntax_error(error, target.source),
            src: SourceFile::new(target.path, target.source).named_source(),
            at: span(error_span(error, target.source)),
        }),
    }
}

/// Checks a rule's `when` probes on a file: the text probes always, the structural ones when
/// the tree is given. `Err` says which probe failed.
fn probe(rule: &CompiledRule, text: &str, root: Option<Node<'_>>) -> Result<(), String> {
    let when = &rule.rule.when;
    if let Some(c) = &when.contains
        && !text.contains(c.value.as_str())
    {
        return Err(format!("when: the file does not contain `{}`", c.value));
    }
    if let Some(c) = &when.lacks_text
        && text.contains(c.value.as_str())
    {
        return Err(format!("when: the file contains `{}`", c.value));
    }
    let Some(root) = root else { return Ok(()) };
    let found = |pattern: &crate::pattern::Pattern| {
        let matcher = Matcher::new(text);
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            if matcher.matches(&pattern.root, n, &mut Bindings::default()) {
                return true;
            }
            let mut cursor = n.walk();
            stack.extend(n.named_children(&mut cursor));
        }
        false
    };
    if let Some(p) = &rule.when_has
        && !found(p)
    {
        return Err(format!("when: the file has no `{}`", p.source.trim()));
    }
    if let Some(p) = &rule.when_lacks
        && found(p)
    {
        return Err(format!("when: the file has `{}`", p.source.trim()));
    }
    Ok(())
}

/// `preserve_lines`: each edit must replace as many line breaks as it writes, so every line
/// outside it keeps its number (tracebacks and `inspect.getsource` stay aligned).
fn keeps_lines(edits: &[Edit], text: &str) -> Result<(), actions::ActionFailure> {
    for e in edits {
        let before = text[e.range.clone()].matches('\n').count();
        let after = e.text.matches('\n').count();
        if before != after {
            return Err(actions::ActionFailure {
                reason: format!(
                    "`preserve_lines` is set, but this edit turns {} line(s) into {}",
                    before + 1,
                    after + 1
                ),
                labels: vec![(e.range.clone(), "this edit".into())],
                help: Some(
                    "write the template to fit the lines it replaces, or drop `preserve_lines`"
                        .into(),
                ),
            });
        }
    }
    Ok(())
}

/// Whether `unless` occurs within the match, or `not_inside` around it (both seeded with the
/// match's bindings, so shared metavariables must agree).
fn guarded<'t>(
    rule: &CompiledRule,
    root: Node<'t>,
    node: Node<'t>,
    bindings: &Bindings<'t>,
    matcher: &Matcher<'_>,
) -> bool {
    if let Some(unless) = &rule.unless {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if matcher.matches(&unless.root, n, &mut bindings.clone()) {
                return true;
            }
            let mut cursor = n.walk();
            stack.extend(n.named_children(&mut cursor));
        }
    }
    if let Some(outer) = &rule.not_inside {
        for n in scope::ancestors(root, node) {
            if matcher.matches(&outer.root, n, &mut bindings.clone()) {
                return true;
            }
        }
    }
    false
}

fn error_span(error: Node<'_>, text: &str) -> Range<usize> {
    let r = error.byte_range();
    if r.is_empty() {
        // A MISSING node is empty: point at the character before it, or the end.
        let start = r.start.min(text.len());
        let prev = text[..start].char_indices().last().map_or(0, |(i, _)| i);
        prev..start.max(prev + 1).min(text.len().max(1))
    } else {
        r
    }
}

/// Why a version gate is not open, in one line.
pub fn gate_reason(gate: &Gate<'_>) -> String {
    match gate {
        Gate::Open => String::new(),
        Gate::Closed {
            requirement,
            version,
        } => format!(
            "{} {} does not satisfy {}",
            requirement.package.value, version, requirement.specifiers.value
        ),
        Gate::Unknown { requirement } => {
            format!("the version of {} is not known", requirement.package.value)
        }
    }
}

fn edit_report(e: &Edit, locate: &impl Fn(&Range<usize>) -> (LineCol, LineCol)) -> EditReport {
    let (start, end) = locate(&e.range);
    EditReport {
        range: e.range.clone(),
        start,
        end,
        replacement: e.text.clone(),
    }
}

fn action_error(rule: &CompiledRule, file: &SourceFile, f: actions::ActionFailure) -> PatchError {
    PatchError::Action {
        rule: rule.id().to_string(),
        action: rule.rule.action.name().to_string(),
        path: file.name().to_string(),
        reason: f.reason,
        src: file.named_source(),
        labels: f
            .labels
            .into_iter()
            .map(|(r, l)| LabeledSpan::new_with_span(Some(l), span(r)))
            .collect(),
        help: f.help,
    }
}

/// A description of where a rule looks, for drift reports.
pub fn describe_scope(rule: &CompiledRule) -> String {
    let inside = &rule.rule.inside;
    let mut parts = Vec::new();
    if let Some(c) = &inside.class {
        parts.push(format!("class {c}"));
    }
    if let Some(f) = &inside.function {
        parts.push(format!("function {f}"));
    }
    if let Some(l) = &rule.loop_pattern {
        parts.push(format!("loop `{}`", l.source.trim()));
    }
    let scope = if parts.is_empty() {
        "the whole file".to_string()
    } else {
        parts.join(" › ")
    };
    format!("searched {scope} for `{}`", rule.pattern.source.trim())
}

fn drift(
    rule: &CompiledRule,
    file: &SourceFile,
    root: Node<'_>,
    matches: &[Found<'_>],
    expected: &str,
) -> PatchError {
    let text = file.text();
    let mut labels: Vec<LabeledSpan> = if matches.is_empty() {
        scope_nodes(rule, root, text)
            .into_iter()
            .map(|(r, l)| LabeledSpan::new_with_span(Some(l), span(r)))
            .collect()
    } else {
        matches
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let r = m.node.byte_range();
                let first_line = r.start..text[r.clone()].find('\n').map_or(r.end, |n| r.start + n);
                LabeledSpan::new_with_span(Some(format!("match {}", i + 1)), span(first_line))
            })
            .collect()
    };
    let mut scope = describe_scope(rule);
    if labels.is_empty() && matches.is_empty() {
        if let Some(c) = &rule.rule.inside.class {
            scope.push_str(&format!("; this file has no class {c}"));
        } else if let Some(f) = &rule.rule.inside.function {
            scope.push_str(&format!("; this file has no function {f}"));
        }
        labels.push(LabeledSpan::new_with_span(
            Some("nothing matched in this file".into()),
            span(
                0..text
                    .find('\n')
                    .unwrap_or(text.len())
                    .max(usize::from(!text.is_empty())),
            ),
        ));
    }
    PatchError::Drift {
        rule: rule.id().to_string(),
        path: file.name().to_string(),
        expected: expected.to_string(),
        found: matches.len() as u64,
        src: file.named_source(),
        labels,
        scope,
    }
}

/// The definition headers in `root` that a rule's `inside` selects (innermost scope asked for).
fn scope_nodes(rule: &CompiledRule, root: Node<'_>, text: &str) -> Vec<(Range<usize>, String)> {
    let inside = &rule.rule.inside;
    let (kind, filter) = match (&inside.function, &inside.class) {
        (Some(f), _) => ("function_definition", f),
        (None, Some(c)) => ("class_definition", c),
        (None, None) => return Vec::new(),
    };
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.kind() == kind && definition_name(node, text).is_some_and(|n| filter.matches(n)) {
            let in_class = inside.class.as_ref().is_none_or(|c| {
                kind == "class_definition"
                    || std::iter::successors(node.parent(), |n| n.parent()).any(|a| {
                        a.kind() == "class_definition"
                            && definition_name(a, text).is_some_and(|n| c.matches(n))
                    })
            });
            if in_class {
                let header_end = node
                    .child_by_field_name("name")
                    .map_or(node.end_byte(), |n| n.end_byte());
                out.push((
                    node.start_byte()..header_end,
                    "searched in here".to_string(),
                ));
            }
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    out.sort_by_key(|(r, _)| r.start);
    out
}
