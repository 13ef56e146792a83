//! Compiles a pattern tree into a tree-sitter query that finds candidate nodes.
//!
//! The query is deliberately looser than the pattern: it keeps the node kinds, the fields and
//! the literal leaves, and leaves out what a query cannot say well (sequence metavariables,
//! keyword arguments in any order, repeated metavariables). Every true match is a query match;
//! the matcher then decides exactly.

use std::fmt::Write;

use super::facts::lone_metavariable;
use super::{NodePattern, PatNode};

/// The capture that marks a candidate's root node.
pub const ROOT_CAPTURE: &str = "root";

/// The S-expression query for `root`, with its text predicates.
pub fn to_query(root: &PatNode) -> String {
    let mut body = String::new();
    let mut predicates = Vec::new();
    if let PatNode::Seq(parts) = root {
        // A run starts at a statement its first part matches.
        return to_query(&parts[0]);
    }
    if let PatNode::Any(alternatives) = root {
        // Candidates of any alternative's root kind: the matcher tries the alternatives.
        let mut kinds: Vec<&str> = alternatives
            .iter()
            .map(|a| match a {
                PatNode::Node(n) if n.named => n.kind.as_str(),
                _ => "_",
            })
            .collect();
        kinds.sort_unstable();
        kinds.dedup();
        if kinds.contains(&"_") {
            return format!("((_) @{ROOT_CAPTURE})");
        }
        let branches: Vec<String> = kinds.iter().map(|k| format!("({k})")).collect();
        return format!("([{}] @{ROOT_CAPTURE})", branches.join(" "));
    }
    if root.kind() == Some("decorator") {
        // `@f($$$A)` also matches a bare `@f`: the decorator's shape is left to the matcher.
        return format!("((decorator) @{ROOT_CAPTURE})");
    }
    if let PatNode::Node(n) = root {
        let alike = crate::python::grammar::alike_kinds(&n.kind);
        if !alike.is_empty() {
            // The same CPython node under another kind (an annotation's, a target's) has other
            // fields: the query keeps only the kinds, the matcher compares the rest.
            let kinds: Vec<String> = std::iter::once(n.kind.as_str())
                .chain(alike)
                .map(|k| format!("({k})"))
                .collect();
            return format!("([{}] @{ROOT_CAPTURE})", kinds.join(" "));
        }
    }
    write_node(root, &mut body, &mut predicates);
    let mut out = format!("({body} @{ROOT_CAPTURE}");
    for p in predicates {
        out.push(' ');
        out.push_str(&p);
    }
    out.push(')');
    out
}

fn write_node(node: &PatNode, out: &mut String, predicates: &mut Vec<String>) {
    match node {
        PatNode::Var(_) | PatNode::Multi(_) | PatNode::Any(_) | PatNode::Seq(_) => {
            out.push_str("(_)")
        }
        PatNode::Node(n) if !n.named => out.push('_'),
        // A tuple or list may have either kind anywhere: left to the matcher. (Below the root,
        // an expression is never an annotation's node, which stands only under `type`.)
        PatNode::Node(n) if crate::python::grammar::has_target_view(&n.kind) => out.push_str("(_)"),
        // `f($X)` also matches `f(x for x in y)`, whose generator is the argument list.
        PatNode::Node(n) if n.kind == "argument_list" && lone_metavariable(n).is_some() => {
            out.push_str("(_)")
        }
        PatNode::Node(n) => {
            if let Some(text) = &n.text {
                let capture = format!("@t{}", predicates.len());
                let _ = write!(out, "({}) {capture}", n.kind);
                predicates.push(format!("(#eq? {capture} \"{}\")", escape(text)));
                return;
            }
            let _ = write!(out, "({}", n.kind);
            // Each field once, and one child without a field: the query engine tries every
            // combination of siblings that fit the children it names, k of n siblings in
            // order (a dictionary pattern of 12 pairs took 40 s on a dictionary of 12, and 3
            // pairs of 30 still 3.5 s). The matcher compares the rest.
            let mut fields: Vec<&str> = Vec::new();
            let mut unnamed = false;
            let kept = n.children.iter().filter(|(field, c)| {
                if !constrains(n, c) {
                    return false;
                }
                match field {
                    Some(f) if fields.contains(&f.as_str()) => false,
                    Some(f) => {
                        fields.push(f);
                        true
                    }
                    None => !std::mem::replace(&mut unnamed, true),
                }
            });
            for (field, child) in kept {
                out.push(' ');
                if let Some(field) = field {
                    let _ = write!(out, "{field}: ");
                }
                write_node(child, out, predicates);
            }
            out.push(')');
        }
    }
}

/// Whether a child is kept in the query: tokens, sequence metavariables and keyword arguments
/// (which may stand in any order) are left to the matcher.
fn constrains(parent: &NodePattern, child: &PatNode) -> bool {
    match child {
        PatNode::Multi(_) => false,
        PatNode::Var(_) | PatNode::Any(_) | PatNode::Seq(_) => true,
        PatNode::Node(c) => {
            c.named && !(parent.kind == "argument_list" && c.kind == "keyword_argument")
        }
    }
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::Pattern;

    #[test]
    fn whisper_pattern_query() {
        let p = Pattern::compile("$OUT = $LAYER($$$ARGS)").unwrap();
        assert_eq!(
            to_query(&p.root),
            "((assignment left: (_) right: (call function: (_) arguments: (_))) @root)",
            "`($$$ARGS)` also stands for a generator that is the call's argument list"
        );
    }

    #[test]
    fn a_query_names_each_field_once_and_one_child_without_a_field() {
        let pairs: Vec<String> = (0..12).map(|i| format!("\"k{i}\": \"v{i}\"")).collect();
        let p = Pattern::compile(&format!("{{{}}}", pairs.join(", "))).unwrap();
        let q = to_query(&p.root);
        assert_eq!(q.matches("(pair").count(), 1, "{q}");
        tree_sitter::Query::new(&crate::python::language(), &q).expect("valid query");
    }

    #[test]
    fn literals_become_predicates_and_keywords_are_left_out() {
        let p = Pattern::compile("self.f($X, use_cache=True)").unwrap();
        let q = to_query(&p.root);
        assert!(q.contains("(#eq? @t0 \"self\")"), "{q}");
        assert!(!q.contains("keyword_argument"), "{q}");
        tree_sitter::Query::new(&crate::python::language(), &q).expect("valid query");
    }
}
