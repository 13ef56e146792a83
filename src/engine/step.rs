//! One planning step: the active rules of one phase and step find their matches on one tree,
//! plan their edits, drop conflicting ones, and the edits are applied and checked together.

use std::ops::Range;

use super::diagnose::{action_error, drift, drift_in_scope};
use super::find::Found;
use super::outcome::{Locator, MatchReport, RuleReport, RuleStatus};
use super::parsed::Parsed;
use super::{Engine, PatchError, repair, scope, verify};
use crate::actions::{self, ActionFailure, Signatures, Site};
use crate::compile::{CompiledRule, RuleId};
use crate::edit::{self, Edit, PlannedEdit, Shifts};
use crate::pattern::matcher::{Bindings, Matcher};
use crate::prefilter::Hits;
use crate::rules::model::{Expect, Policy};
use crate::source::{SourceFile, span};

/// What one step runs on.
pub(crate) struct StepInput<'a> {
    /// The target's path.
    pub path: &'a str,
    /// The text the step plans on.
    pub text: &'a str,
    /// Its literal scan, where one was made already (the file as read).
    pub hits: Option<&'a Hits>,
    /// Its tree.
    pub parsed: &'a Parsed,
    /// The rules of this step, sorted.
    pub active: &'a [RuleId],
    /// Whether `expect` counts are checked (not on the fixed-point re-run).
    pub check_expect: bool,
    /// Whether this is the only step: then only the edited regions are re-parsed.
    pub only_step: bool,
}

/// What one step did.
#[derive(Default)]
pub(crate) struct StepOutcome {
    /// A report for each rule of the step, in order.
    pub reports: Vec<RuleReport>,
    /// Failures with the rules they concern; those rules' edits were left out.
    pub errors: Vec<(Vec<RuleId>, PatchError)>,
    /// Drift of rules whose `on_miss` is `warn` or `skip`.
    pub misses: Vec<(RuleId, PatchError)>,
    /// The new text and its tree, when the step changed anything.
    pub next: Option<(String, Parsed)>,
    /// Where, in the new text, each rule's edits wrote (the imports they need left out: those
    /// run at import, not where the rule patched).
    pub written: Vec<(usize, Range<usize>)>,
    /// How the step's edits move offsets of the text it ran on.
    pub shifts: Option<Shifts>,
}

/// What one rule planned in a step.
struct RulePlan {
    report: RuleReport,
    edits: Vec<PlannedEdit>,
    error: Option<PatchError>,
    /// Failures the rule's policies turn into reports: drift, refused sites.
    misses: Vec<PatchError>,
}

impl RulePlan {
    /// The plan of a rule that has found nothing yet.
    fn new(rule: &CompiledRule, id: RuleId) -> Self {
        Self {
            report: RuleReport::bare(rule, id, RuleStatus::NoMatch, None),
            edits: Vec::new(),
            error: None,
            misses: Vec::new(),
        }
    }

    /// Records a failure under `policy`: an error fails the rule (the first one is reported);
    /// `warn` and `skip` make it a miss the rule's report carries.
    fn record(&mut self, error: PatchError, policy: Policy) {
        match policy {
            Policy::Error => {
                self.error.get_or_insert(error);
            }
            Policy::Warn | Policy::Skip => self.misses.push(error),
        }
    }
}

impl Engine<'_> {
    /// Runs one step.
    pub(crate) fn step(&self, input: &StepInput<'_>) -> StepOutcome {
        let root = input.parsed.tree.root_node();
        let found = self.find(
            input.text,
            input.hits,
            input.parsed.regions.as_deref(),
            root,
            input.active,
        );
        let locator = Locator::new(input.text);
        let mut signatures = Signatures::new(input.path, self.signature_context, self.modules);
        if input.parsed.regions.is_some() {
            // The tree holds some statements only: module-level names are read elsewhere.
            signatures = signatures.over_regions();
        }
        let mut out = StepOutcome::default();
        let mut planned: Vec<PlannedEdit> = Vec::new();
        let mut failed: Vec<RuleId> = Vec::new();
        for (&id, matches) in input.active.iter().zip(&found) {
            let plan = self.plan_rule(id, matches, input, &locator, &mut signatures);
            out.errors.extend(plan.error.map(|e| (vec![id], e)));
            out.misses.extend(plan.misses.into_iter().map(|e| (id, e)));
            if plan.report.status == RuleStatus::Failed {
                failed.push(id);
            } else {
                planned.extend(plan.edits);
            }
            out.reports.push(plan.report);
        }
        repair::keep_blocks_filled(&mut planned, root, input.text);
        // Narrowed to what they change, edits of nested or neighbouring matches that do not
        // really overlap no longer look as if they did.
        for p in &mut planned {
            p.edit = std::mem::take(&mut p.edit).minimal(input.text);
        }
        self.drop_conflicts(input, &mut planned, &mut failed, &mut out.errors);
        let import = self.plan_imports(input, &mut planned, &mut failed, &mut out.errors);
        let imported = import.is_some();
        mark_failed(&mut out.reports, &failed);
        if planned.is_empty() {
            return out;
        }
        // Imports go in the file's header, outside the regions the step parsed.
        let regions_only = input.only_step && input.parsed.regions.is_some() && !imported;
        let names = verify::Names {
            provided: self.provided(&planned),
            imported: self.imported(&planned),
            path: input.path,
        };
        match verify::apply_and_reparse(input.text, input.parsed, regions_only, &planned, &names) {
            Ok(next) => {
                out.next = Some(next);
                out.written = edit::written(&planned)
                    .into_iter()
                    .zip(&planned)
                    .filter(|(_, p)| import.as_ref() != Some(&p.edit.range))
                    .map(|(w, _)| w)
                    .collect();
                out.shifts = Some(Shifts::new(&planned));
            }
            Err(rejected) => {
                let (rules, error) = self.unparseable(input.path, &planned, rejected);
                mark_failed(&mut out.reports, &rules);
                out.errors.push((rules, error));
            }
        }
        out
    }

    /// The failure of a step whose result does not parse, naming every rule whose edits went
    /// in.
    fn unparseable(
        &self,
        path: &str,
        planned: &[PlannedEdit],
        rejected: verify::Rejected,
    ) -> (Vec<RuleId>, PatchError) {
        let mut rules: Vec<RuleId> = planned.iter().map(|p| RuleId(p.rule)).collect();
        rules.sort_unstable();
        rules.dedup();
        let names: Vec<String> = rules
            .iter()
            .map(|&r| format!("`{}`", self.rules.rule(r).id()))
            .collect();
        let (path, reason, named, at, src) = (
            path.to_string(),
            rejected.reason,
            names.join(", "),
            span(rejected.at),
            SourceFile::new(path, rejected.output).named_source(),
        );
        let error = match rejected.kind {
            verify::Rejection::Name => PatchError::UnresolvedName {
                path,
                reason,
                rules: named,
                src,
                at,
                others: rejected.also.into_iter().map(span).collect(),
            },
            verify::Rejection::Attribute => PatchError::UnknownAttribute {
                path,
                reason,
                rules: named,
                src,
                at,
            },
            verify::Rejection::Syntax => PatchError::UnparseableResult {
                path,
                reason,
                rules: named,
                at,
                src,
            },
        };
        (rules, error)
    }

    /// Checks one rule's match count and plans its edits at each unguarded match.
    fn plan_rule(
        &self,
        id: RuleId,
        matches: &[Found<'_>],
        input: &StepInput<'_>,
        locator: &Locator<'_>,
        signatures: &mut Signatures,
    ) -> RulePlan {
        let rule = self.rules.rule(id);
        let file = || SourceFile::new(input.path, input.text);
        let mut plan = RulePlan::new(rule, id);
        let (mut failed, declined) = self.expect_missed(rule, matches, input, &mut plan);
        let mut written = 0usize;
        for m in matches {
            let range = m.node.start_byte()..m.last.end_byte();
            let in_declined = declined
                .iter()
                .any(|d| d.start <= range.start && range.end <= d.end);
            if m.guarded || in_declined {
                let report = locator.match_report(range, &Bindings::default(), &[], true);
                plan.report.matches.push(report);
                continue;
            }
            let mut refused = None;
            let planned =
                misread(m, input.text).map_or_else(|| plan_edits(rule, m, input, signatures), Err);
            let edits = match planned {
                Ok(Some(edits)) => edits,
                // `when.signature` leaves this site alone: it counts, as a guarded match does.
                Ok(None) => {
                    let report = locator.match_report(range, &m.bindings, &[], true);
                    plan.report.matches.push(report);
                    continue;
                }
                // A pin that does not hold is drift, under `on_miss`.
                Err(f) if rule.rule.action.is_check() => {
                    plan.record(action_error(rule, &file(), f), rule.rule.on_miss);
                    failed = true;
                    Vec::new()
                }
                // The rule's policy leaves a refused site alone; its other sites still apply.
                Err(f) if rule.rule.on_refuse != Policy::Error => {
                    refused = Some(f.reason.clone());
                    plan.misses.push(action_error(rule, &file(), f));
                    Vec::new()
                }
                Err(f) => {
                    plan.record(action_error(rule, &file(), f), Policy::Error);
                    failed = true;
                    Vec::new()
                }
            };
            written += edits.iter().map(|e| e.text.len()).sum::<usize>();
            if let Some(error) = over_budget(rule, input, written, &range) {
                plan.record(error, Policy::Error);
                plan.edits.clear();
                failed = true;
                break;
            }
            let mut report = locator.match_report(range, &m.bindings, &edits, false);
            report.refused = refused;
            plan.report.matches.push(report);
            let edits = edits
                .into_iter()
                .map(|edit| PlannedEdit { rule: id.0, edit });
            plan.edits.extend(edits);
        }
        let applied = matches.iter().any(|m| m.applied);
        plan.report.status = status(rule, &plan.report.matches, failed, applied);
        plan.report.reason = super::applied::deletion_count(rule, matches, &plan.report.status);
        plan
    }

    /// Records a missed `expect` in `plan`: whether it fails the rule, and the classes or
    /// functions it declines. Counted per scope under `on_miss: warn|skip`, a scope that
    /// misses is declined alone (warned about); the others still apply.
    fn expect_missed(
        &self,
        rule: &CompiledRule,
        matches: &[Found<'_>],
        input: &StepInput<'_>,
        plan: &mut RulePlan,
    ) -> (bool, Vec<Range<usize>>) {
        let file = || SourceFile::new(input.path, input.text);
        let policy = rule.rule.on_miss;
        // Scopes declined under `on_miss: warn|skip` stay declined when the fixed point is
        // checked (which counts nothing else), or that check would edit them.
        let declines = |e: &Expect| e.per.is_some() && policy != Policy::Error;
        let Some(expect) = rule
            .rule
            .expect
            .filter(|e| (input.check_expect || declines(e)) && self.counts_expect(rule))
        else {
            return (false, Vec::new());
        };
        let mut misses = missed_expect(rule, expect, matches, input, &file);
        if misses.is_empty() {
            return (false, Vec::new());
        }
        if declines(&expect) {
            let mut declined = Vec::new();
            for (miss, scope) in misses {
                if input.check_expect {
                    plan.record(miss, policy);
                }
                declined.extend(scope);
            }
            return (false, declined);
        }
        let (mut miss, _) = misses.swap_remove(0);
        if rule.unwitnessed
            && matches.is_empty()
            && let PatchError::Drift { scope, .. } = &mut miss
        {
            // Patched or drifted, this rule cannot tell: its output is no evidence either way,
            // and an unmet `expect` stays what it is.
            scope.push_str(
                "; its template is a bare capture or holds no code of its own, so nothing counts as already patched: a file it patched cannot be told from one that drifted (`on_miss: warn` where patched files are expected)",
            );
        }
        plan.record(miss, policy);
        (true, Vec::new())
    }

    /// Orders the planned edits; two rules whose edits overlap both fail, and the others
    /// still apply.
    fn drop_conflicts(
        &self,
        input: &StepInput<'_>,
        planned: &mut Vec<PlannedEdit>,
        failed: &mut Vec<RuleId>,
        errors: &mut Vec<(Vec<RuleId>, PatchError)>,
    ) {
        while let Err((a, b)) = edit::order(planned) {
            let (first, second) = (RuleId(a.rule), RuleId(b.rule));
            errors.push((
                vec![first, second],
                PatchError::Conflict {
                    first: self.rules.rule(first).id().to_string(),
                    second: self.rules.rule(second).id().to_string(),
                    path: input.path.to_string(),
                    src: SourceFile::new(input.path, input.text).named_source(),
                    first_at: span(a.edit.range.clone()),
                    second_at: span(b.edit.range.clone()),
                },
            ));
            planned.retain(|p| p.rule != a.rule && p.rule != b.rule);
            failed.extend([first, second]);
        }
    }
}

/// The refusal of a match that rests on a node (its own, or one of its captures') that
/// tree-sitter reads otherwise than CPython (see `python::misread`).
fn misread(m: &Found<'_>, text: &str) -> Option<ActionFailure> {
    use crate::pattern::matcher::Capture;
    let captured = m.bindings.named().flat_map(|(_, c)| match c {
        Capture::One(n) => vec![*n],
        Capture::Many(nodes) => nodes.clone(),
    });
    let (node, reading) = std::iter::once(m.node)
        .chain(captured)
        .find_map(|n| crate::python::misread::misread(n).map(|r| (n, r)))?;
    Some(ActionFailure {
        reason: format!(
            "tree-sitter reads `{}` otherwise than CPython does ({reading}): a match resting on it would edit the wrong code",
            text[node.byte_range()].lines().next().unwrap_or("")
        ),
        labels: vec![(node.byte_range(), "CPython reads this otherwise".into())],
        help: Some("regraft leaves this site alone: match the statement around it".into()),
    })
}

/// The edits `rule`'s action plans at match `m`, checked against `preserve_lines`, with the
/// file's line ends; `None` where the rule's `when.signature` probe does not hold there.
fn plan_edits(
    rule: &CompiledRule,
    m: &Found<'_>,
    input: &StepInput<'_>,
    signatures: &mut Signatures,
) -> Result<Option<Vec<Edit>>, ActionFailure> {
    let text = input.text;
    let action = m.action(rule, text);
    // A metavariable the action reads, bound two ways by the scopes around the match.
    let reads = |name: &str| {
        let var = format!("${name}");
        action.args.snippets().iter().any(|t| {
            t.text.match_indices(&var).any(|(at, _)| {
                !t.text[at + var.len()..]
                    .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            })
        })
    };
    // A run that a keyword anchor was taken out of cannot be written back as its text.
    let broken = m
        .bindings
        .named()
        .find(|(n, c)| !c.is_contiguous() && reads(n));
    if let Some((name, capture)) = broken {
        return Err(ActionFailure {
            reason: format!(
                "`$$${name}` holds arguments on both sides of a keyword the pattern names: written back, its text would carry that keyword along"
            ),
            labels: vec![(
                capture.byte_range().unwrap_or(m.node.byte_range()),
                "these arguments".into(),
            )],
            help: Some(
                "write the keyword after the run in the call, or match the arguments without it"
                    .into(),
            ),
        });
    }
    if let Some((name, one, other)) = m.ambiguous.iter().find(|(n, _, _)| reads(n)) {
        let first_line = |t: &str| t.lines().next().unwrap_or("").to_string();
        return Err(ActionFailure {
            reason: format!(
                "the scopes around this match bind `${name}` both to `{}` and to `{}`: which one holds is decided when the code runs",
                first_line(one),
                first_line(other)
            ),
            labels: vec![(m.node.start_byte()..m.last.end_byte(), "this match".into())],
            help: Some(
                "the engine does not guess: make the scope predicate single out one binding".into(),
            ),
        });
    }
    let site = Site {
        source: text,
        root: input.parsed.tree.root_node(),
        node: m.node,
        last: m.last,
        bindings: &m.bindings,
    };
    if let Some(probe) = &rule.rule.when.signature
        && actions::probe_signature(probe, &site, signatures)?.is_some()
    {
        return Ok(None);
    }
    let edits = actions::plan(action, &site, signatures)?;
    if rule.rule.preserve_lines {
        keeps_lines(&edits, text)?;
    }
    // A file with Windows line ends gets them in inserted code too. (Only edits that write a
    // line end ask: the search for the file's first one scans a one-line file whole, once per
    // site.)
    let crlf = edits.iter().any(|e| e.text.contains('\n'))
        && text.find('\n').is_some_and(|i| text[..i].ends_with('\r'));
    Ok(Some(if crlf {
        edits.into_iter().map(Edit::to_crlf).collect()
    } else {
        edits
    }))
}

/// The refusal once a rule's replacements in one file pass `write_budget`: nested matches of a
/// recursive pattern each copy a large capture, quadratic in the file; refused before it costs
/// more.
fn over_budget(
    rule: &CompiledRule,
    input: &StepInput<'_>,
    written: usize,
    at: &std::ops::Range<usize>,
) -> Option<PatchError> {
    let budget = write_budget(input.text.len());
    (written > budget).then(|| {
        let failure = ActionFailure {
            reason: format!(
                "its replacements would write more than {} MiB for a file of {} KiB: nested matches each copy a large capture",
                budget >> 20,
                input.text.len() >> 10
            ),
            labels: vec![(at.clone(), "matches nest here".into())],
            help: Some(
                "narrow the pattern so matches do not nest (e.g. a `where` on the capture)".into(),
            ),
        };
        action_error(rule, &SourceFile::new(input.path, input.text), failure)
    })
}

/// How many bytes of replacement text one rule may write in a file of `len` bytes: far more
/// than any real patch (sixteen copies of the file, at least 4 MiB), far less than the
/// quadratic total of nested matches that each copy their capture.
fn write_budget(len: usize) -> usize {
    (len * 16).max(4 << 20)
}

/// The drift errors when `matches` miss `expect`: one for the whole file, or one for each
/// class or function that misses it (with its range) when `expect` counts per scope.
fn missed_expect(
    rule: &CompiledRule,
    expect: Expect,
    matches: &[Found<'_>],
    input: &StepInput<'_>,
    file: &dyn Fn() -> SourceFile,
) -> Vec<(PatchError, Option<Range<usize>>)> {
    let root = input.parsed.tree.root_node();
    if expect.run {
        // Counted over the whole run by its caller (`apply`, `matrix`), not in one file.
        return Vec::new();
    }
    let Some(per) = expect.per else {
        let admitted = expect.admits(matches.len() as u64);
        return (!admitted)
            .then(|| {
                (
                    drift(rule, &file(), root, matches, &expect.to_string()),
                    None,
                )
            })
            .into_iter()
            .collect();
    };
    let matcher = Matcher::new(input.text);
    let scopes = scope::selected_scopes(rule, per, root, input.text, &matcher);
    scopes
        .into_iter()
        .filter_map(|def| {
            let range = def.byte_range();
            let count = matches
                .iter()
                .filter(|m| range.start <= m.node.start_byte() && m.last.end_byte() <= range.end)
                .count() as u64;
            (!expect.admits(count)).then(|| {
                (
                    drift_in_scope(rule, &file(), def, count, expect),
                    Some(range),
                )
            })
        })
        .collect()
}

/// A rule's status in one step from its matches.
/// A rule's status from its matches; `applied`: some match is a site of the shape its action
/// leaves (the patch already in place).
fn status(rule: &CompiledRule, matches: &[MatchReport], failed: bool, applied: bool) -> RuleStatus {
    if failed {
        RuleStatus::Failed
    } else if matches.is_empty() {
        RuleStatus::NoMatch
    } else if rule.rule.action.is_check() {
        RuleStatus::Held
    } else if matches.iter().any(|m| !m.edits.is_empty()) {
        RuleStatus::Applied
    } else if matches.iter().any(|m| m.refused.is_some()) {
        RuleStatus::Refused
    } else if matches.iter().all(|m| m.guarded) && !rule.guard_is_own_output && !applied {
        RuleStatus::Guarded
    } else {
        RuleStatus::Redundant
    }
}

/// Marks the reports of `failed` rules as failed.
fn mark_failed(reports: &mut [RuleReport], failed: &[RuleId]) {
    for r in reports {
        if failed.contains(&r.index) {
            r.status = RuleStatus::Failed;
        }
    }
}

/// `preserve_lines`: each edit must replace as many line breaks as it writes, so every line
/// outside it keeps its number (tracebacks and `inspect.getsource` stay aligned).
fn keeps_lines(edits: &[Edit], text: &str) -> Result<(), ActionFailure> {
    for e in edits {
        let before = text[e.range.clone()].matches('\n').count();
        let after = e.text.matches('\n').count();
        if before != after {
            return Err(ActionFailure {
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
