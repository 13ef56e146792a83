//! `inside`: whether a candidate lies in the class, function and loop a rule asks for, and what
//! the loop header binds.

use tree_sitter::Node;

use crate::compile::CompiledRule;
use crate::pattern::matcher::{Bindings, Matcher};
use crate::python::definition_name;

/// Why a candidate is outside a rule's scope.
#[derive(Debug, Clone, PartialEq)]
pub enum ScopeMiss {
    /// No enclosing class selected by the rule.
    Class,
    /// No enclosing function selected by the rule (within the class, if one is asked for).
    Function,
    /// No enclosing loop whose header matches (within the function, if one is asked for).
    Loop,
}

/// The ancestors of `node`, innermost first, found by descending from `root`: tree-sitter's
/// `Node::parent` searches from the root on every call, so a walk up would be quadratic.
pub fn ancestors<'t>(root: Node<'t>, node: Node<'t>) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    let mut cursor = root.walk();
    while cursor.node() != node {
        let current = cursor.node();
        out.push(current);
        let found = cursor
            .goto_first_child_for_byte(node.start_byte())
            .is_some()
            && {
                // Among children ending past the start, step to the one that holds the node.
                loop {
                    let c = cursor.node();
                    if c.start_byte() <= node.start_byte() && node.end_byte() <= c.end_byte() {
                        break true;
                    }
                    if !cursor.goto_next_sibling() {
                        break false;
                    }
                }
            };
        if !found || cursor.node() == current {
            break;
        }
    }
    out.reverse();
    out
}

/// The bindings each admissible enclosing loop provides (one empty set where the rule has
/// no loop), innermost first; or why the candidate is out of scope.
pub fn scope_bindings<'t>(
    rule: &CompiledRule,
    root: Node<'t>,
    node: Node<'t>,
    source: &str,
    matcher: &Matcher<'_>,
) -> Result<Vec<Bindings<'t>>, ScopeMiss> {
    let inside = &rule.rule.inside;
    if inside.class.is_none() && inside.function.is_none() && rule.loop_pattern.is_none() {
        return Ok(vec![Bindings::default()]);
    }
    let ancestors = ancestors(root, node);
    // A decorator belongs to the definition it decorates (as in Python's own AST), so a
    // decorated_definition stands for its definition: `inside: {function: forward}` finds
    // forward's decorators too.
    let named = |n: &Node<'t>, kind: &str, filter: &crate::rules::model::NameFilter| {
        let definition = if n.kind() == "decorated_definition" {
            n.child_by_field_name("definition")
        } else {
            Some(*n)
        };
        definition.is_some_and(|d| {
            d.kind() == kind && definition_name(d, source).is_some_and(|name| filter.matches(name))
        })
    };
    // Index (into `ancestors`, innermost first) of the outermost scope a loop must lie within.
    let mut limit = ancestors.len();
    if let Some(class) = &inside.class {
        let at = ancestors
            .iter()
            .position(|n| named(n, "class_definition", class))
            .ok_or(ScopeMiss::Class)?;
        limit = at;
    }
    if let Some(function) = &inside.function {
        let at = ancestors[..limit]
            .iter()
            .position(|n| named(n, "function_definition", function))
            .ok_or(ScopeMiss::Function)?;
        limit = at;
    }
    let Some(header) = &rule.loop_pattern else {
        return Ok(vec![Bindings::default()]);
    };
    let mut seeds = Vec::new();
    for ancestor in &ancestors[..limit] {
        if ancestor.kind() != "for_statement" {
            continue;
        }
        // The candidate must be in the loop's body, not in its header.
        let in_body = ancestor.child_by_field_name("body").is_some_and(|b| {
            b.start_byte() <= node.start_byte() && node.end_byte() <= b.end_byte()
        });
        if !in_body {
            continue;
        }
        let (Some(left), Some(right)) = (
            ancestor.child_by_field_name("left"),
            ancestor.child_by_field_name("right"),
        ) else {
            continue;
        };
        let mut bindings = Bindings::default();
        if matcher.matches(&header.left, left, &mut bindings)
            && matcher.matches(&header.right, right, &mut bindings)
        {
            seeds.push(bindings);
        }
    }
    if seeds.is_empty() {
        Err(ScopeMiss::Loop)
    } else {
        Ok(seeds)
    }
}
