//! Text edits, the lowest value of the pipeline: what an action plans, how the edits of one
//! step are put in order and checked for overlap, and how they are applied in one pass.

use std::ops::Range;

/// One planned text replacement.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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

impl Edit {
    /// The same edit narrowed to what it changes in `source`: the text it shares with what
    /// it replaces at either end is left alone. Narrow edits are what lets two rules edit a
    /// nested call, or a decorator and its neighbour, without overlapping.
    pub fn minimal(self, source: &str) -> Edit {
        let old = &source[self.range.clone()];
        let new = self.text.as_str();
        let mut prefix = old
            .bytes()
            .zip(new.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        while !old.is_char_boundary(prefix) || !new.is_char_boundary(prefix) {
            prefix -= 1;
        }
        let (old_rest, new_rest) = (&old[prefix..], &new[prefix..]);
        let mut suffix = old_rest
            .bytes()
            .rev()
            .zip(new_rest.bytes().rev())
            .take_while(|(a, b)| a == b)
            .count();
        while !old_rest.is_char_boundary(old_rest.len() - suffix)
            || !new_rest.is_char_boundary(new_rest.len() - suffix)
        {
            suffix -= 1;
        }
        Edit {
            range: self.range.start + prefix..self.range.end - suffix,
            text: new_rest[..new_rest.len() - suffix].to_string(),
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
/// Two insertions at one point overlap unless one rule made both: its matches' insertions
/// then go in the order it planned them (document order; `outline` of two methods of one
/// class puts both functions after the class).
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
            || (a.edit.range == b.edit.range && a.edit.range.is_empty() && a.rule != b.rule);
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

/// Where each of ordered, non-overlapping `edits` wrote in the text `apply` makes of them:
/// its rule and the byte range its replacement occupies there.
pub fn written(edits: &[PlannedEdit]) -> Vec<(usize, Range<usize>)> {
    let mut delta: isize = 0;
    edits
        .iter()
        .map(|p| {
            let start = p.edit.range.start.saturating_add_signed(delta);
            delta += p.edit.text.len() as isize - p.edit.range.len() as isize;
            (p.rule, start..start + p.edit.text.len())
        })
        .collect()
}

/// Where offsets of the old text land once `edits` are applied: a region grows or shrinks by
/// the edits inside it and moves by those before it. The size changes are summed once, so
/// each lookup is a binary search (summing per lookup made thousands of edits quadratic).
#[derive(Debug)]
pub struct Shifts {
    /// Each edit's start, ascending.
    starts: Vec<usize>,
    /// The size change of the edits up to and including each.
    sums: Vec<isize>,
}

impl Shifts {
    /// The shifts `edits` make.
    pub fn new(edits: &[PlannedEdit]) -> Self {
        let mut by_start: Vec<(usize, isize)> = edits
            .iter()
            .map(|p| {
                let delta = p.edit.text.len() as isize - p.edit.range.len() as isize;
                (p.edit.range.start, delta)
            })
            .collect();
        by_start.sort_by_key(|(start, _)| *start);
        let mut total = 0;
        let sums = by_start
            .iter()
            .map(|(_, d)| {
                total += d;
                total
            })
            .collect();
        Self {
            starts: by_start.into_iter().map(|(s, _)| s).collect(),
            sums,
        }
    }

    /// Where `offset` lands.
    pub fn moved(&self, offset: usize) -> usize {
        let before = self.starts.partition_point(|&s| s < offset);
        let delta = before.checked_sub(1).map_or(0, |i| self.sums[i]);
        offset.saturating_add_signed(delta)
    }
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
    fn written_ranges_are_where_each_replacement_lands() {
        let edits = vec![edit(0, 1..2, "xyz"), edit(1, 4..4, "!"), edit(2, 5..7, "")];
        let out = apply("abcdefgh", &edits);
        assert_eq!(out, "axyzcd!eh");
        let ranges = written(&edits);
        assert_eq!(ranges, vec![(0, 1..4), (1, 6..7), (2, 8..8)]);
        assert_eq!(&out[1..4], "xyz");
        assert_eq!(&out[6..7], "!");
    }

    #[test]
    fn offsets_move_by_the_edits_before_them() {
        // Given out of order: the shifts sort them.
        let edits = vec![edit(0, 5..7, ""), edit(0, 1..2, "xyz")];
        let shifts = Shifts::new(&edits);
        assert_eq!(shifts.moved(1), 1);
        assert_eq!(shifts.moved(3), 5);
        assert_eq!(shifts.moved(6), 6);
        assert_eq!(shifts.moved(8), 8);
    }

    #[test]
    fn a_minimal_edit_changes_the_same_and_touches_less() {
        let source = "f(a, x=1, b)é";
        let e = Edit {
            range: 2..11,
            text: "a, b".into(),
        };
        let m = e.clone().minimal(source);
        assert_eq!((m.range.clone(), m.text.as_str()), (5..10, ""));
        let apply_one = |e: Edit| {
            let mut s = source.to_string();
            s.replace_range(e.range, &e.text);
            s
        };
        assert_eq!(apply_one(e), apply_one(m));
        let accents = Edit {
            range: 0..source.len(),
            text: "f(a, x=1, b)è".into(),
        };
        let m = accents.minimal(source);
        assert_eq!(m.text, "è", "never splits a character");
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
