//! What a site must satisfy besides its pattern: where it stands (`at`) and what it bound
//! (`where`). Asked of matches and of the shapes a rule's patch left (already applied).

use tree_sitter::Node;

use crate::compile::CompiledRule;
use crate::pattern::matcher::{Bindings, Capture, Matcher};

/// Whether the match from `node` to `last` stands where the rule's `at` asks: its statement at
/// module level (`top_level`), its last statement the last of its block (`last`; comments
/// after it do not count).
pub(super) fn stands_at<'t>(
    rule: &CompiledRule,
    root: Node<'t>,
    node: Node<'t>,
    last: Node<'t>,
) -> bool {
    use crate::rules::model::Position;
    // The statement holding `n` and the block (or module) it stands in.
    let statement = |n: Node<'t>| {
        let s = crate::python::enclosing_statement(root, n);
        s.parent().map(|p| (s, p))
    };
    rule.rule.at.iter().all(|position| match position {
        Position::TopLevel => statement(node).is_some_and(|(_, p)| p.kind() == "module"),
        // A `;` ending the line is no statement.
        Position::Last => statement(last).is_some_and(|(s, p)| {
            let children = crate::python::significant_children(p);
            children.into_iter().rfind(|n| n.is_named()) == Some(s)
        }),
    })
}

/// Whether what the match bound meets the rule's `where` conditions.
pub(super) fn constraints_hold(
    rule: &CompiledRule,
    bindings: &Bindings<'_>,
    text: &str,
    matcher: &Matcher<'_>,
    unbound_holds: bool,
) -> bool {
    rule.constraints.iter().all(|c| {
        let Some(capture) = bindings.get(&c.name) else {
            return unbound_holds;
        };
        let bound = capture.text(text);
        let node = match capture {
            Capture::One(node) => Some(*node),
            Capture::Many(nodes) if nodes.len() == 1 => Some(nodes[0]),
            Capture::Many(_) => None,
        };
        c.regex.as_ref().is_none_or(|re| re.is_match(bound))
            && c.not_regex.as_ref().is_none_or(|re| !re.is_match(bound))
            && c.kinds
                .as_ref()
                .is_none_or(|kinds| node.is_some_and(|n| kinds.contains(&n.kind_id())))
            && (c.not_kinds.is_empty() || node.is_some_and(|n| !c.not_kinds.contains(&n.kind_id())))
            && c.has.as_ref().is_none_or(|pattern| {
                node.is_some_and(|n| matcher.occurs_in(pattern, n, &Bindings::default()))
            })
    })
}
