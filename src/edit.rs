//! Text edits, the lowest value of the pipeline: what an action plans, how the edits of one
//! step are put in order and checked for overlap, and how they are applied in one pass.

use std::ops::Range;

/// One planned text replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// The bytes replaced.
    pub range: Range<usize>,
    /// What replaces them.
    pub text: String,
}

impl Edit {
    /// The same edit with `\r\n` line breaks, for a file written with Windows line ends.
    pub fn to_crlf(self) -> Edit {
        Edit {
            range: self.range,
            text: self.text.replace("\r\n", "\n").replace('\n', "\r\n"),
        }
    }
}

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

/// Where `offset` (a region's start or end) lands once `edits` are applied: a region grows or
/// shrinks by the edits inside it and moves by those before it.
pub fn moved(edits: &[PlannedEdit], offset: usize) -> usize {
    let delta: isize = edits
        .iter()
        .filter(|p| p.edit.range.start < offset)
        .map(|p| p.edit.text.len() as isize - p.edit.range.len() as isize)
        .sum();
    offset.saturating_add_signed(delta)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(rule: usize, range: Range<usize>, text: &str) -> PlannedEdit {
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

    #[test]
    fn offsets_move_by_the_edits_before_them() {
        let edits = vec![edit(0, 1..2, "xyz"), edit(0, 5..7, "")];
        assert_eq!(moved(&edits, 1), 1);
        assert_eq!(moved(&edits, 3), 5);
        assert_eq!(moved(&edits, 8), 8);
    }

    #[test]
    fn crlf_edits_have_no_lone_line_feed() {
        let e = Edit {
            range: 0..0,
            text: "a\nb\r\nc".into(),
        };
        assert_eq!(e.to_crlf().text, "a\r\nb\r\nc");
    }
}
