//! Puts the edits of all rules of one phase in order, finds overlaps, and applies them in one pass.

use super::actions::Edit;

/// An edit and the rule (index into the rule set) that planned it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedEdit {
    /// The planning rule.
    pub rule: usize,
    /// The edit.
    pub edit: Edit,
}

/// Sorts `edits` by position and drops exact duplicates; returns the first overlapping pair.
pub fn order(edits: &mut Vec<PlannedEdit>) -> Result<(), (PlannedEdit, PlannedEdit)> {
    edits.sort_by(|a, b| {
        (a.edit.range.start, a.edit.range.end, a.rule).cmp(&(
            b.edit.range.start,
            b.edit.range.end,
            b.rule,
        ))
    });
    edits.dedup_by(|b, a| a.edit == b.edit);
    for pair in edits.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let overlaps = b.edit.range.start < a.edit.range.end
            || (a.edit.range == b.edit.range && a.edit.range.is_empty());
        if overlaps {
            return Err((a.clone(), b.clone()));
        }
    }
    Ok(())
}

/// Applies ordered, non-overlapping edits to `source`.
pub fn apply(source: &str, edits: &[PlannedEdit]) -> String {
    let mut out = String::with_capacity(source.len() + 64);
    let mut at = 0;
    for e in edits {
        out.push_str(&source[at..e.edit.range.start]);
        out.push_str(&e.edit.text);
        at = e.edit.range.end;
    }
    out.push_str(&source[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(rule: usize, range: std::ops::Range<usize>, text: &str) -> PlannedEdit {
        PlannedEdit {
            rule,
            edit: Edit {
                range,
                text: text.into(),
            },
        }
    }

    #[test]
    fn overlapping_edits_conflict_and_duplicates_merge() {
        let mut edits = vec![edit(1, 4..6, "x"), edit(0, 0..5, "y")];
        let (a, b) = order(&mut edits).unwrap_err();
        assert_eq!((a.rule, b.rule), (0, 1));
        let mut same = vec![edit(0, 0..2, "z"), edit(1, 0..2, "z"), edit(0, 3..4, "w")];
        order(&mut same).unwrap();
        assert_eq!(same.len(), 2);
        assert_eq!(apply("abcdef", &same), "zcwef");
    }
}
