//! Optional statements in a sequence pattern: a statement whose line ends with the comment
//! `# optional` may or may not stand in the matched run (`A; [B]; C`, as in the fused
//! cross-entropy shapes, where one upcast line comes and goes between releases). The sequence
//! becomes its variants — every optional statement present first, then with fewer — tried in
//! that order like `match: {any: [...]}`, so a statement that is there is matched, and only the
//! metavariables every variant binds reach templates.

use tree_sitter::Node;

use super::{PatNode, PatternError};

/// The comment that marks a statement optional.
const MARK: &str = "# optional";

/// The most optional statements in one sequence: each doubles the variants tried.
const MAX_OPTIONAL: usize = 6;

/// Which of `statements` (the sequence's, in order) carry the `# optional` mark at the end of
/// their last line; `root` is the parse holding them and their comments. A mark anywhere else
/// (a compound statement's header, a nested block, a one-statement pattern) is an error at the
/// mark: it would be a plain comment, and the statement silently required.
pub(super) fn marked(
    root: Node<'_>,
    statements: &[Node<'_>],
    text: &str,
) -> Result<Vec<bool>, PatternError> {
    let marks = marks(root, text);
    let mut out = vec![false; statements.len()];
    for mark in marks {
        let row = mark.start_position().row;
        let at = statements
            .iter()
            .position(|s| s.end_position().row == row && s.end_byte() <= mark.start_byte());
        match at {
            Some(i) if statements.len() > 1 && mark.parent() == Some(root) => out[i] = true,
            _ => {
                return Err(PatternError {
                    range: mark.byte_range(),
                    reason: "`# optional` marks a statement of a sequence: it ends the last line of one of the pattern's top-level statements, in a pattern of several".into(),
                    metavar: false,
                });
            }
        }
    }
    Ok(out)
}

/// The `# optional` comments anywhere in the tree.
fn marks<'t>(root: Node<'t>, text: &str) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.kind() == "comment" && text[n.byte_range()].trim_end() == MARK {
            out.push(n);
        }
        let mut cursor = n.walk();
        stack.extend(n.children(&mut cursor));
    }
    out
}

/// The variants of `parts` (`optional[i]` saying which may be left out), most statements
/// first; an error where the marks leave no valid sequence. `at(i)` is the range of part `i`
/// in the pattern text, for errors.
pub(super) fn variants(
    parts: &[PatNode],
    optional: &[bool],
    at: impl Fn(usize) -> std::ops::Range<usize>,
) -> Result<Vec<Vec<PatNode>>, PatternError> {
    let which: Vec<usize> = (0..parts.len()).filter(|i| optional[*i]).collect();
    let error = |i: usize, reason: &str| PatternError {
        range: at(i),
        reason: reason.into(),
        metavar: false,
    };
    if let Some(&i) = which
        .iter()
        .find(|&&i| matches!(parts[i], PatNode::Multi(_)))
    {
        return Err(error(
            i,
            "`$$$` already matches any number of statements; it cannot be optional",
        ));
    }
    if which.first() == Some(&0) {
        return Err(error(
            0,
            "the first statement cannot be optional: runs would start at two places, with it and after it; start the sequence with a statement that is always there",
        ));
    }
    if which.len() == parts.len() {
        return Err(error(
            0,
            "every statement is optional: at least one must be there",
        ));
    }
    if which.len() > MAX_OPTIONAL {
        return Err(error(
            which[MAX_OPTIONAL],
            "more than 6 optional statements in one sequence (each doubles the variants tried)",
        ));
    }
    // Subsets of the optional statements left out, fewest first (then earlier ones kept).
    let mut dropped: Vec<u32> = (0..1u32 << which.len()).collect();
    dropped.sort_by_key(|m| (m.count_ones(), m.reverse_bits()));
    let mut out = Vec::new();
    for mask in dropped {
        let left_out = |i: usize| {
            which
                .iter()
                .position(|&w| w == i)
                .is_some_and(|bit| mask & (1 << bit) != 0)
        };
        let variant: Vec<PatNode> = (0..parts.len())
            .filter(|&i| !left_out(i))
            .map(|i| parts[i].clone())
            .collect();
        let multi = |p: Option<&PatNode>| matches!(p, Some(PatNode::Multi(_)));
        if multi(variant.first()) || multi(variant.last()) {
            let i = (0..parts.len()).find(|&i| left_out(i)).unwrap_or(0);
            return Err(error(
                i,
                "left out, this optional statement would leave `$$$` last; a sequence starts and ends with a statement",
            ));
        }
        out.push(variant);
    }
    Ok(out)
}
