//! What the rule set precomputes for finding candidates fast: which rules are rooted in each
//! node kind, below which kinds each may stand, and what an assignment rule's statements hold.

use super::CompiledRule;
use crate::pattern::{NodePattern, PatNode};
use crate::python;
use crate::python::regions::AssignmentShape;

/// Whether a pattern rooted at `root` is an assignment (alone or as a statement) with its `=`:
/// tree-sitter-python has assignments only in expression statements (or chained in other
/// assignments), so that `=` stands outside all brackets of the statement's logical line.
pub(super) fn assigns_at_top(root: &NodePattern) -> bool {
    let assignment = match (root.kind.as_str(), root.children.as_slice()) {
        ("assignment", _) => root,
        ("expression_statement", [(_, PatNode::Node(only))]) if only.kind == "assignment" => only,
        _ => return false,
    };
    assignment
        .children
        .iter()
        .any(|(_, c)| matches!(c, PatNode::Node(t) if t.kind == "=" && !t.named))
}

/// What the logical line of every match of an assignment pattern rooted at `root` shows.
pub(super) fn assignment_shape(root: &PatNode) -> AssignmentShape {
    AssignmentShape {
        punctuation: pattern_punctuation(root),
        closes_with: closing_bracket(root),
    }
}

/// The bracket a pattern ends with, where its last token is one: a node that matches it ends
/// with the same token, since matching compares tokens of the same kind in order (only commas,
/// comments and line continuations are passed over, and the region scan skips the last two).
fn closing_bracket(pattern: &PatNode) -> Option<u8> {
    let PatNode::Node(node) = pattern else {
        return None;
    };
    match node.children.last() {
        Some((_, last)) => closing_bracket(last),
        None if !node.named && matches!(node.kind.as_str(), ")" | "]" | "}") => {
            Some(node.kind.as_bytes()[0])
        }
        None => None,
    }
}

/// The punctuation of a pattern's tokens, leaving out strings (whose parts are text, and whose
/// interpolations the region scan does not look into).
fn pattern_punctuation(root: &PatNode) -> u32 {
    let PatNode::Node(node) = root else {
        return 0;
    };
    if node.kind == "string" {
        return 0;
    }
    let own = if node.named {
        0
    } else {
        crate::python::regions::punctuation(&node.kind)
    };
    node.children
        .iter()
        .fold(own, |mask, (_, child)| mask | pattern_punctuation(child))
}

/// For each node kind id of tree-sitter-python, the rules whose pattern root has that kind; a
/// pattern rooted in a metavariable can start at any named node.
pub(super) fn by_root_kind(rules: &[CompiledRule]) -> Vec<Vec<usize>> {
    let language = python::language();
    let mut by_kind: Vec<Vec<usize>> = vec![Vec::new(); language.node_kind_count()];
    for (i, rule) in rules.iter().enumerate() {
        // Where a match is found: a sequence's first statement, each alternative's root.
        fn roots(root: &PatNode) -> Vec<&PatNode> {
            match root {
                PatNode::Any(alternatives) => alternatives.iter().flat_map(roots).collect(),
                PatNode::Seq(parts) => vec![&parts[0]],
                root => vec![root],
            }
        }
        let roots = roots(&rule.pattern.root);
        for root in roots {
            match root {
                PatNode::Node(n) => {
                    for &id in n.kind_ids {
                        by_kind[usize::from(id)].push(i);
                    }
                }
                PatNode::Var(Some(name)) | PatNode::Multi(Some(name))
                    if let Some(kinds) = constrained_kinds(rule, name) =>
                {
                    // `where: {$X: {kind: ...}}` on a bare metavariable: only those kinds.
                    for &id in kinds {
                        by_kind[usize::from(id)].push(i);
                    }
                }
                _ => {
                    for (id, rules) in by_kind.iter_mut().enumerate() {
                        if language.node_kind_is_named(id as u16) {
                            rules.push(i);
                        }
                    }
                }
            }
        }
    }
    for rules in &mut by_kind {
        rules.dedup();
    }
    by_kind
}

/// The kinds `where` allows for the metavariable `name` of `rule`, if it says.
fn constrained_kinds<'r>(rule: &'r CompiledRule, name: &str) -> Option<&'r [u16]> {
    rule.constraints
        .iter()
        .find(|c| c.name == name)
        .and_then(|c| c.kinds.as_deref())
}

/// For each kind id, the rules rooted in some kind that may stand below it.
pub(super) fn rooted_below(by_root_kind: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let table = crate::python::grammar::containment();
    // Only kinds some rule is rooted in: every pair of kinds cost ~73,000 table lookups per
    // set, which dominated `lint` (it compiles each rule alone) on packs of thousands.
    let rooted: Vec<(u16, &Vec<usize>)> = by_root_kind
        .iter()
        .enumerate()
        .filter(|(_, rules)| !rules.is_empty())
        .map(|(inner, rules)| (inner as u16, rules))
        .collect();
    (0..by_root_kind.len())
        .map(|outer| {
            let mut rules: Vec<usize> = rooted
                .iter()
                .filter(|(inner, _)| table.may_contain(outer as u16, *inner))
                .flat_map(|(_, rules)| rules.iter().copied())
                .collect();
            rules.sort_unstable();
            rules.dedup();
            rules
        })
        .collect()
}
