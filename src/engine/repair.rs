//! What no single action can see: the combined edits of a step leaving a block with no
//! statement. Each `delete` turns a block's only statement into `pass`, but several deletions
//! (of one rule's matches or of several rules) can empty a block together; then the first of
//! them writes `pass` instead, so the block keeps a body.

use std::ops::Range;

use tree_sitter::Node;

use crate::edit::PlannedEdit;
use crate::python::significant_children;

/// Rewrites `planned` (ordered, non-overlapping) so that no block of `root` is left empty.
pub(crate) fn keep_blocks_filled(planned: &mut [PlannedEdit], root: Node<'_>, text: &str) {
    // A deletion writes no code: nothing, or the comments of what it removed.
    let deletions: Vec<usize> = (0..planned.len())
        .filter(|&i| {
            planned[i]
                .edit
                .text
                .lines()
                .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
        })
        .collect();
    let mut blocks: Vec<Node<'_>> = Vec::new();
    for &i in &deletions {
        if let Some(block) =
            statement_at(root, text, &planned[i].edit.range).and_then(|s| s.parent())
            && block.kind() == "block"
            && !blocks.contains(&block)
        {
            blocks.push(block);
        }
    }
    for block in blocks {
        let statements = significant_children(block);
        let covering = |s: &Node<'_>| {
            deletions.iter().copied().find(|&i| {
                let r = &planned[i].edit.range;
                r.start <= s.start_byte() && s.end_byte() <= r.end
            })
        };
        let covered: Vec<Option<usize>> = statements.iter().map(covering).collect();
        if statements.is_empty() || covered.iter().any(Option::is_none) {
            continue;
        }
        let first = covered[0].expect("all covered");
        let statement = statements[0];
        let edit = &mut planned[first].edit;
        // The comments kept, then `pass` at the statement's indentation.
        let mut replacement = edit.text.clone();
        replacement.push_str(&text[edit.range.start..statement.start_byte()]);
        replacement.push_str("pass");
        if text[..edit.range.end].ends_with('\n') {
            replacement.push('\n');
        }
        edit.text = replacement;
    }
}

/// The statement a deletion of `range` removes: the outermost node starting at the range's
/// first code character that lies within the range and stands in a block.
fn statement_at<'t>(root: Node<'t>, text: &str, range: &Range<usize>) -> Option<Node<'t>> {
    let deleted = &text[range.clone()];
    let offset = range.start + (deleted.len() - deleted.trim_start().len());
    let mut node = root.descendant_for_byte_range(offset, offset)?;
    loop {
        let parent = node.parent()?;
        if matches!(parent.kind(), "block" | "module") {
            return Some(node);
        }
        node = parent;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::{Edit, apply};

    fn delete(range: Range<usize>) -> PlannedEdit {
        PlannedEdit {
            rule: 0,
            edit: Edit {
                range,
                text: String::new(),
            },
        }
    }

    #[test]
    fn deleting_every_statement_of_a_block_leaves_pass() {
        let text = "def f(q, k):\n    if q:\n        q = q.c()\n        k = k.c()\n    return q\n";
        let tree = crate::python::parse(text);
        let line = |s: &str| {
            let start = text.find(s).unwrap();
            let line_start = text[..start].rfind('\n').unwrap() + 1;
            line_start..start + s.len() + 1
        };
        let mut planned = vec![delete(line("q = q.c()")), delete(line("k = k.c()"))];
        keep_blocks_filled(&mut planned, tree.root_node(), text);
        assert_eq!(
            apply(text, &planned),
            "def f(q, k):\n    if q:\n        pass\n    return q\n"
        );
        // One of two statements deleted: nothing to repair.
        let mut one = vec![delete(line("k = k.c()"))];
        keep_blocks_filled(&mut one, tree.root_node(), text);
        assert_eq!(one[0].edit.text, "");
    }
}
