//! What the engine reports: per rule and match, and per file.

use std::ops::Range;

use super::PatchError;
use crate::compile::{CompiledRule, RuleId};
use crate::edit::Edit;
use crate::pattern::matcher::Bindings;
use crate::rules::model::Phase;
use crate::source::{LineCol, LineIndex};

/// What happened to one rule in one file.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuleStatus {
    /// The version gate is off.
    Inactive,
    /// `fixed_upstream` holds: the patch is no longer needed, and it is skipped.
    Retired,
    /// It matched and edited.
    Applied,
    /// It matched, but every match already had the wanted shape: the patch is redundant for
    /// this source, the signal that it can be retired for this upstream range.
    Redundant,
    /// A check-only rule (a pin) whose assertions held.
    Held,
    /// Nothing was edited, and some match was refused (under `on_refuse: warn` or `skip`):
    /// not redundant — the patch is still wanted there but cannot be made safely.
    Refused,
    /// Every match was left alone by a guard (`unless`, `not_inside`) that is not the rule's
    /// own output: another rule, or upstream, handles those sites.
    Guarded,
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

/// How much of a capture a report keeps: nested matches of a recursive pattern each capture
/// most of the file, and whole copies in every report would cost memory quadratic in it.
const SHOWN_CAPTURE: usize = 1024;

/// A capture's text as a report shows it: whole, or its first `SHOWN_CAPTURE` bytes and `…`.
fn shown(text: &str) -> String {
    if text.len() <= SHOWN_CAPTURE {
        return text.to_string();
    }
    let mut end = SHOWN_CAPTURE;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
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
    /// Why the action refused this site, where the rule's `on_refuse` left it alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// What one rule did in one file.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RuleReport {
    /// The rule's id.
    pub rule: String,
    /// The rule's place in the rule set.
    #[serde(skip)]
    pub index: RuleId,
    /// The phase it ran in.
    pub phase: Phase,
    /// Its planning step within the phase (rules with `after` run in later steps).
    pub step: usize,
    /// The outcome.
    pub status: RuleStatus,
    /// Why the rule is inactive, when it is; for a scoped deletion, what it counted in the
    /// scope's unit ("3 matches in 1 class", then "1 class cleared: nothing left to delete").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Its matches.
    pub matches: Vec<MatchReport>,
}

impl RuleReport {
    /// The report of `rule` (at `index`) with no matches: inactive, retired, or not yet run.
    pub(crate) fn bare(
        rule: &CompiledRule,
        index: RuleId,
        status: RuleStatus,
        reason: Option<String>,
    ) -> Self {
        RuleReport {
            rule: rule.id().to_string(),
            index,
            phase: rule.rule.phase,
            step: rule.step,
            status,
            reason,
            matches: Vec::new(),
        }
    }
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
    /// Drift of rules with `on_miss: warn` and refusals of rules with `on_refuse: warn`: to
    /// report, without failing.
    pub warnings: Vec<PatchError>,
    /// Byte ranges of `output` each rule's edits wrote, by rule id (see [`Survey::written`]).
    pub written: Vec<(String, Range<usize>)>,
}

impl Patched {
    /// Whether any edit was made.
    pub fn changed(&self) -> bool {
        self.rules.iter().any(|r| r.status == RuleStatus::Applied)
    }
}

/// Everything that happened in one file, failures included: what `matrix` reads.
#[derive(Debug, Default)]
pub struct Survey {
    /// The patched text, with the edits of the rules that did not fail.
    pub output: String,
    /// Every rule that selected the file, in the order the rules ran.
    pub rules: Vec<RuleReport>,
    /// Each failure with the rules it concerns, in the order found.
    pub errors: Vec<(Vec<RuleId>, PatchError)>,
    /// Drift of rules whose `on_miss` is `warn` or `skip`, and refusals of rules whose
    /// `on_refuse` is: reported, not failing the file.
    pub misses: Vec<(RuleId, PatchError)>,
    /// Byte ranges of the output each rule's edits wrote (imports left out): where its
    /// patched code is, for the runtime's liveness probes.
    pub written: Vec<(RuleId, Range<usize>)>,
}

impl Survey {
    /// Records where a step's edits wrote (`written`, by rule index, in its output) and moves
    /// what earlier steps wrote by that step's `shifts`.
    pub(crate) fn wrote(
        &mut self,
        written: Vec<(usize, Range<usize>)>,
        shifts: Option<&crate::edit::Shifts>,
    ) {
        if let Some(shifts) = shifts {
            for (_, range) in &mut self.written {
                *range = shifts.moved(range.start)..shifts.moved(range.end);
            }
        }
        let written = written.into_iter();
        self.written
            .extend(written.map(|(rule, range)| (RuleId(rule), range)));
    }

    /// The survey of a file nothing touched: its text, and the reports given.
    pub fn untouched(text: &str, rules: Vec<RuleReport>) -> Survey {
        Survey {
            output: text.to_string(),
            rules,
            ..Survey::default()
        }
    }
}

/// Locates byte ranges of one text as lines and columns.
pub(crate) struct Locator<'t> {
    text: &'t str,
    lines: LineIndex,
}

impl<'t> Locator<'t> {
    /// A locator for `text`.
    pub(crate) fn new(text: &'t str) -> Self {
        Self {
            text,
            lines: LineIndex::new(text),
        }
    }

    /// Where `range` starts and ends.
    pub(crate) fn locate(&self, range: &Range<usize>) -> (LineCol, LineCol) {
        (
            self.lines.line_col(self.text, range.start),
            self.lines.line_col(self.text, range.end),
        )
    }

    /// The report of a match at `range` with its bindings and edits.
    pub(crate) fn match_report(
        &self,
        range: Range<usize>,
        bindings: &Bindings<'_>,
        edits: &[Edit],
        guarded: bool,
    ) -> MatchReport {
        let (start, end) = self.locate(&range);
        MatchReport {
            range,
            start,
            end,
            bindings: bindings
                .named()
                .map(|(n, c)| (n.to_string(), shown(c.text(self.text))))
                .collect(),
            edits: edits
                .iter()
                .map(|e| {
                    let (start, end) = self.locate(&e.range);
                    EditReport {
                        range: e.range.clone(),
                        start,
                        end,
                        replacement: e.text.clone(),
                    }
                })
                .collect(),
            guarded,
            refused: None,
        }
    }
}
