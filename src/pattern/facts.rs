//! What every match of a pattern holds, read off the pattern before any search: the texts it
//! must contain and the node kinds it can stand at.

use super::{NodePattern, PatNode};

/// The identifiers and string contents every match of `root` contains (for prefiltering).
pub(super) fn literals_of(root: &PatNode) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    root.visit(&mut |n| {
        if let PatNode::Node(NodePattern {
            kind,
            text: Some(t),
            ..
        }) = n
            && matches!(kind.as_str(), "identifier" | "string_content")
            && !out.contains(t)
        {
            out.push(t.clone());
        }
    });
    out
}

/// The one metavariable a node pattern holds, tokens aside (`($X)`, `($$$A)`), if that is all
/// it holds: such an argument list also stands for a generator that is its call's argument
/// list (`f(x for x in y)`), for the matcher and for the query that finds its candidates.
pub(crate) fn lone_metavariable(n: &NodePattern) -> Option<&PatNode> {
    let mut inner = n
        .children
        .iter()
        .map(|(_, c)| c)
        .filter(|c| !matches!(c, PatNode::Node(t) if !t.named));
    match (inner.next(), inner.next()) {
        (Some(only @ (PatNode::Var(_) | PatNode::Multi(_))), None) => Some(only),
        _ => None,
    }
}

/// The kind ids a match of a pattern rooted at `root` stands at, where its root says.
pub(super) fn root_kinds(root: &PatNode) -> Option<Vec<u16>> {
    match root {
        PatNode::Node(n) => Some(n.kind_ids.to_vec()),
        PatNode::Any(alternatives) => {
            alternatives
                .iter()
                .try_fold(Vec::new(), |mut kinds, alternative| {
                    kinds.extend(root_kinds(alternative)?);
                    Some(kinds)
                })
        }
        PatNode::Seq(_) | PatNode::Var(_) | PatNode::Multi(_) => None,
    }
}
