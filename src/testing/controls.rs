//! Negative controls: a case a rule passes is run again with what the rule matched taken away
//! — every matched statement deleted, then moved into a string — and the rule must then fail.
//! A pin or an `expect` that still passes there cannot fail at all (a superset test, a count
//! with no floor), and says nothing when upstream changes.

use crate::compile::RuleSet;
use crate::engine::{Engine, Patched, RuleStatus, Target};

/// One way of taking the matches away.
#[derive(Debug, Clone, Copy)]
enum Mutation {
    /// Each matched statement becomes `pass`.
    Deleted,
    /// Each matched statement becomes a string holding its text (a docstring-like literal).
    InString,
}

impl Mutation {
    fn describe(self) -> &'static str {
        match self {
            Mutation::Deleted => "deleted",
            Mutation::InString => "moved into a string",
        }
    }
}

/// Why a negative control of a passing case survived, if one did: the rule `id` still passed
/// with every statement it matched in `before` (as `patched` reports) taken away.
pub(super) fn survived(
    set: &RuleSet,
    engine: &Engine<'_>,
    id: &str,
    path: &str,
    before: &str,
    patched: &Patched,
) -> Option<String> {
    let rule = set.rules.iter().find(|r| r.id() == id)?;
    let wants_matches = rule.rule.expect.is_some_and(|e| e.min > 0);
    let report = patched.rules.iter().find(|r| r.rule == id)?;
    // Matches of a later step lie in text the case never held; a rule that did not run here
    // has nothing to take away.
    // A deletion's applied shape is the absence it leaves: with the statement gone the rule
    // reads as already applied, by design (a `--check` after `--write` must pass), so taking
    // the match away proves nothing either way.
    let clears = matches!(rule.applied, Some(crate::compile::Applied::Absence));
    if !wants_matches
        || clears
        || report.step != 0
        || report.matches.is_empty()
        || matches!(report.status, RuleStatus::Inactive | RuleStatus::Retired)
    {
        return None;
    }
    let lines = statement_lines(before, report.matches.iter().map(|m| m.range.clone()));
    for mutation in [Mutation::Deleted, Mutation::InString] {
        let Some(mutant) = mutate(before, &lines, mutation) else {
            continue;
        };
        let outcome = engine.patch(Target {
            path,
            source: &mutant,
        });
        let Ok(p) = outcome else { continue };
        let missed = crate::engine::totals::missed(set, std::iter::once(&p))
            .into_iter()
            .any(|(r, _)| r.id() == id);
        let still = p.rules.iter().find(|r| r.rule == id);
        let failed = missed || still.is_some_and(|r| r.status == RuleStatus::Failed);
        if !failed {
            return Some(format!(
                "negative control: with the {} statement(s) it matched {} (lines {}), rule `{id}` still passes: nothing shows it can fail when upstream changes; give `expect` a floor or narrow the pattern",
                lines.len(),
                mutation.describe(),
                lines
                    .iter()
                    .map(|(a, b)| if a == b {
                        format!("{a}")
                    } else {
                        format!("{a}-{b}")
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    None
}

/// The 1-based line spans holding the byte ranges, merged, in order.
fn statement_lines(
    text: &str,
    ranges: impl Iterator<Item = std::ops::Range<usize>>,
) -> Vec<(usize, usize)> {
    let line_of = |at: usize| text[..at.min(text.len())].matches('\n').count() + 1;
    let mut spans: Vec<(usize, usize)> = ranges
        .map(|r| {
            (
                line_of(r.start),
                line_of(r.end.saturating_sub(1).max(r.start)),
            )
        })
        .collect();
    spans.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (a, b) in spans {
        match merged.last_mut() {
            Some(last) if a <= last.1 + 1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
}

/// `text` with each span of lines replaced as `mutation` says; `None` where the result does
/// not parse (a match inside a larger statement: that control cannot be made by lines).
fn mutate(text: &str, spans: &[(usize, usize)], mutation: Mutation) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for &(a, b) in spans {
        let (a, b) = (a - 1, b.min(lines.len()) - 1);
        for line in lines.get(at..a)? {
            out.push_str(line);
        }
        let first = lines.get(a)?;
        let indent: String = first
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        let end = if lines.get(b)?.ends_with("\r\n") {
            "\r\n"
        } else {
            "\n"
        };
        match mutation {
            Mutation::Deleted => out.push_str(&format!("{indent}pass{end}")),
            Mutation::InString => {
                let original: String = lines[a..=b].concat();
                let literal = serde_json::to_string(original.trim()).ok()?;
                out.push_str(&format!("{indent}{literal}{end}"));
            }
        }
        at = b + 1;
    }
    for line in lines.get(at..)? {
        out.push_str(line);
    }
    let tree = crate::python::parse(&out);
    (!tree.root_node().has_error()).then_some(out)
}
