//! What a replaced or deleted piece of code says that its replacement does not: the comments
//! inside it, kept on lines of their own above the statement.

use std::ops::Range;

use tree_sitter::Node;

use super::Site;
use crate::edit::Edit;
use crate::python::enclosing_statement;
use crate::python::node_indent;

/// `edit`, replacing the match, and the comments in the match that `template` does not account
/// for — not inside a capture it writes back, not written in it — kept on lines of their own
/// above the statement, as `delete` keeps them: a comment says why, and replacing the code
/// does not answer it.
pub(super) fn with_comments_kept(site: &Site<'_, '_>, template: &str, mut edit: Edit) -> Vec<Edit> {
    let source = site.source;
    if !source[site.range()].contains('#') {
        return vec![edit];
    }
    let written: Vec<Range<usize>> = site
        .bindings
        .named()
        .filter(|(name, _)| mentions(template, name))
        .filter_map(|(_, capture)| capture.byte_range())
        .collect();
    let comments: Vec<&str> = inner_comment_nodes(site.node, site.last)
        .into_iter()
        .filter(|c| {
            !written
                .iter()
                .any(|w| w.start <= c.start_byte() && c.end_byte() <= w.end)
        })
        .map(|c| &source[c.byte_range()])
        .filter(|c| !template.contains(c.trim()))
        .collect();
    if comments.is_empty() {
        return vec![edit];
    }
    let statement = enclosing_statement(site.root, site.node);
    let line_start = crate::python::node_line_start(statement);
    let indent = node_indent(source, statement);
    if source[line_start..edit.range.start].trim().is_empty() {
        let above: String = comments.iter().map(|c| format!("{c}\n{indent}")).collect();
        edit.text = above + &edit.text;
        return vec![edit];
    }
    let above: String = comments.iter().map(|c| format!("{indent}{c}\n")).collect();
    vec![
        Edit {
            range: line_start..line_start,
            text: above,
        },
        edit,
    ]
}

/// Whether `template` writes the metavariable `name` (`$NAME` or `$$$NAME`, as a whole word).
fn mentions(template: &str, name: &str) -> bool {
    let needle = format!("${name}");
    template.match_indices(&needle).any(|(at, _)| {
        !template[at + needle.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The comment nodes from `node` to `last` (siblings, or one node), in order.
pub(super) fn inner_comment_nodes<'t>(node: Node<'t>, last: Node<'t>) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    let mut stack: Vec<Node<'_>> = match node.parent().filter(|_| node != last) {
        Some(parent) => {
            let mut cursor = parent.walk();
            let run: Vec<Node<'_>> = parent
                .children(&mut cursor)
                .filter(|c| node.start_byte() <= c.start_byte() && c.end_byte() <= last.end_byte())
                .collect();
            run.into_iter().rev().collect()
        }
        None => vec![node],
    };
    while let Some(n) = stack.pop() {
        if n.kind() == "comment" {
            out.push(n);
            continue;
        }
        let mut cursor = n.walk();
        let children: Vec<Node<'_>> = n.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    out
}
