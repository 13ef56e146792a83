//! `inside`: whether a candidate lies in the class, function and loop a rule asks for, and what
//! the loop header binds.

use std::cell::RefCell;
use std::collections::HashMap;

use tree_sitter::Node;

use crate::compile::{CompiledRule, ScopePatterns};
use crate::pattern::Pattern;
use crate::pattern::matcher::{Bindings, Matcher};
use crate::python::definition_name;
use crate::rules::model::{Per, ScopeFilter};

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
    cache: &ScopeCache,
) -> Result<Vec<Bindings<'t>>, ScopeMiss> {
    let inside = &rule.rule.inside;
    if inside.class.is_none() && inside.function.is_none() && rule.loop_pattern.is_none() {
        return Ok(vec![Bindings::default()]);
    }
    let ancestors = ancestors(root, node);
    let selected = |n: &Node<'t>, kind: &str, filter: &ScopeFilter, patterns: &ScopePatterns| {
        definition(*n).is_some_and(|d| {
            d.kind() == kind
                && definition_name(d, source).is_some_and(|name| filter.matches_name(name))
                && cache.meets(d, filter, || {
                    unmet_predicate(d, filter, patterns, source, matcher).is_none()
                })
        })
    };
    // Index (into `ancestors`, innermost first) of the outermost scope a loop must lie within.
    let mut limit = ancestors.len();
    if let Some(class) = &inside.class {
        let at = ancestors
            .iter()
            .position(|n| selected(n, "class_definition", class, &rule.class_scope))
            .ok_or(ScopeMiss::Class)?;
        limit = at;
    }
    if let Some(function) = &inside.function {
        let at = ancestors[..limit]
            .iter()
            .position(|n| selected(n, "function_definition", function, &rule.function_scope))
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

/// Which definitions met which scope predicates, for one file: every candidate inside a class
/// asks about the same class, and a predicate walks the class's whole body.
#[derive(Debug, Default)]
pub struct ScopeCache(RefCell<HashMap<(usize, usize), bool>>);

impl ScopeCache {
    /// Whether `def` meets `filter`'s predicates, computed by `check` the first time asked.
    fn meets(&self, def: Node<'_>, filter: &ScopeFilter, check: impl FnOnce() -> bool) -> bool {
        if !filter.has_predicates() {
            return true;
        }
        let key = (def.id(), std::ptr::from_ref(filter) as usize);
        if let Some(&known) = self.0.borrow().get(&key) {
            return known;
        }
        let met = check();
        self.0.borrow_mut().insert(key, met);
        met
    }
}

/// The definition a node stands for: a decorated definition is its definition (a decorator
/// belongs to what it decorates, as in Python's own AST), anything else itself.
pub fn definition(node: Node<'_>) -> Option<Node<'_>> {
    if node.kind() == "decorated_definition" {
        node.child_by_field_name("definition")
    } else {
        Some(node)
    }
}

/// The first of `filter`'s predicates the class or function `def` does not meet, in words;
/// `None` when it meets them all (its name is not looked at here).
pub fn unmet_predicate(
    def: Node<'_>,
    filter: &ScopeFilter,
    patterns: &ScopePatterns,
    source: &str,
    matcher: &Matcher<'_>,
) -> Option<String> {
    if let Some(base) = &filter.extends {
        let bases = def.child_by_field_name("superclasses");
        let written = |n: Node<'_>| -> String {
            source[n.byte_range()]
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect()
        };
        let extends = bases.is_some_and(|list| {
            let mut cursor = list.walk();
            let written_bases: Vec<String> =
                list.named_children(&mut cursor).map(written).collect();
            written_bases.contains(&base.value)
        });
        if !extends {
            return Some(format!("does not extend `{}`", base.value));
        }
    }
    let holds = |pattern: &Pattern| matcher.occurs_in(&pattern.root, def, &Bindings::default());

    if let Some(has) = &patterns.has
        && !holds(has)
    {
        return Some(format!("lacks `{}`", has.source.trim()));
    }
    if let Some(lacks) = &patterns.lacks
        && holds(lacks)
    {
        return Some(format!("has `{}`", lacks.source.trim()));
    }
    None
}

/// The classes (or functions) a rule's `inside` selects in the tree, in document order: the
/// scopes `expect: {per: ...}` counts in (every class or function, where `inside` names none).
pub fn selected_scopes<'t>(
    rule: &CompiledRule,
    per: Per,
    root: Node<'t>,
    source: &str,
    matcher: &Matcher<'_>,
) -> Vec<Node<'t>> {
    let (kind, filter, patterns) = match per {
        Per::Class => (
            "class_definition",
            rule.rule.inside.class.as_ref(),
            &rule.class_scope,
        ),
        Per::Function => (
            "function_definition",
            rule.rule.inside.function.as_ref(),
            &rule.function_scope,
        ),
    };
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        let selected = node.kind() == kind
            && filter.is_none_or(|f| {
                definition_name(node, source).is_some_and(|name| f.matches_name(name))
                    && unmet_predicate(node, f, patterns, source, matcher).is_none()
            });
        if selected {
            out.push(node);
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    out
}
