//! `inside`: whether a candidate lies in the class, function and loop a rule asks for, and what
//! the loop header binds.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use tree_sitter::Node;

use crate::compile::{CompiledRule, ScopePatterns};
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
    let mut out: Vec<Node<'t>> = crate::python::descent(root, node).collect();
    out.reverse();
    out
}

/// The bindings the candidate's scopes provide — what the selected class's and function's
/// predicates bound, then each admissible enclosing loop's header — innermost loop first (one
/// empty set where the rule asks for no scope); or why the candidate is out of scope.
pub fn scope_bindings<'t>(
    rule: &CompiledRule,
    root: Node<'t>,
    node: Node<'t>,
    source: &str,
    matcher: &Matcher<'_>,
    cache: &ScopeCache<'t>,
) -> Result<Vec<Bindings<'t>>, ScopeMiss> {
    let inside = &rule.rule.inside;
    if inside.class.is_none() && inside.function.is_none() && rule.loop_patterns.is_empty() {
        return Ok(vec![Bindings::default()]);
    }
    let ancestors = ancestors(root, node);
    // Index (into `ancestors`, innermost first) of the outermost scope a loop must lie within.
    let mut limit = ancestors.len();
    let mut seeds: Rc<Vec<Bindings<'t>>> = Rc::new(vec![Bindings::default()]);
    // The innermost scope of `kind` within `limit` whose name and predicates hold, and the
    // bindings they give; each outer seed is tried, so a metavariable bound by the class must
    // agree with what the function's predicates bind.
    let select = |kind: &str,
                  filter: &ScopeFilter,
                  patterns: &ScopePatterns,
                  limit: usize,
                  seeds: &[Bindings<'t>]| {
        ancestors[..limit].iter().enumerate().find_map(|(at, n)| {
            let d = definition(*n).filter(|d| d.kind() == kind)?;
            if !definition_name(d, source).is_some_and(|name| filter.matches_name(name)) {
                return None;
            }
            let mut out = Vec::new();
            for (k, seed) in seeds.iter().enumerate() {
                let key = (d.id(), std::ptr::from_ref(filter) as usize, k);
                let given = cache.seeds(key, || {
                    scope_seeds(d, filter, patterns, source, matcher, seed).unwrap_or_default()
                });
                out.extend(given.iter().cloned());
            }
            (!out.is_empty()).then(|| (at, Rc::new(out)))
        })
    };
    if let Some(class) = &inside.class {
        let (at, given) = select("class_definition", class, &rule.class_scope, limit, &seeds)
            .ok_or(ScopeMiss::Class)?;
        (limit, seeds) = (at, given);
    }
    if let Some(function) = &inside.function {
        let (at, given) = select(
            "function_definition",
            function,
            &rule.function_scope,
            limit,
            &seeds,
        )
        .ok_or(ScopeMiss::Function)?;
        (limit, seeds) = (at, given);
    }
    if rule.loop_patterns.is_empty() {
        return Ok(Rc::unwrap_or_clone(seeds));
    }
    let out = loop_seeds(rule, &ancestors[..limit], node, &seeds, matcher);
    if out.is_empty() {
        Err(ScopeMiss::Loop)
    } else {
        Ok(out)
    }
}

/// Each seed extended by the header of an enclosing loop (among `ancestors`) whose body holds
/// `node`: the first of the rule's header alternatives that fits binds.
fn loop_seeds<'t>(
    rule: &CompiledRule,
    ancestors: &[Node<'t>],
    node: Node<'t>,
    seeds: &[Bindings<'t>],
    matcher: &Matcher<'_>,
) -> Vec<Bindings<'t>> {
    let mut out = Vec::new();
    for ancestor in ancestors {
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
        for seed in seeds.iter() {
            // The first header alternative that fits this loop binds.
            let fitting = rule.loop_patterns.iter().find_map(|header| {
                let mut bindings = seed.clone();
                (matcher.matches(&header.left, left, &mut bindings)
                    && matcher.matches(&header.right, right, &mut bindings))
                .then_some(bindings)
            });
            out.extend(fitting);
        }
    }
    out
}

/// At most this many binding sets one scope predicate hands on: a `has` with metavariables
/// over a large class must not multiply every candidate's work without bound.
const MAX_SEEDS: usize = 64;

/// A definition, the scope filter asked of it, and which outer binding set it was asked with.
type SeedKey = (usize, usize, usize);

/// What the scope predicates of one file's definitions bound: every candidate inside a class
/// asks about the same class, and a predicate walks the class's whole body.
#[derive(Debug, Default)]
pub struct ScopeCache<'t>(RefCell<HashMap<SeedKey, Rc<Vec<Bindings<'t>>>>>);

impl<'t> ScopeCache<'t> {
    /// The binding sets for `key`, computed by `compute` the first time asked (none: the
    /// definition does not meet the predicates).
    fn seeds(
        &self,
        key: SeedKey,
        compute: impl FnOnce() -> Vec<Bindings<'t>>,
    ) -> Rc<Vec<Bindings<'t>>> {
        if let Some(known) = self.0.borrow().get(&key) {
            return known.clone();
        }
        let seeds = Rc::new(compute());
        self.0.borrow_mut().insert(key, seeds.clone());
        seeds
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
    scope_seeds(def, filter, patterns, source, matcher, &Bindings::default()).err()
}

/// What `filter`'s predicates bind in the class or function `def`, each set extending `seed`:
/// one set per distinct match of `has` (`seed` itself without one), less those for which
/// `lacks` occurs. `Err` says, in words, the first predicate `def` does not meet.
pub fn scope_seeds<'t>(
    def: Node<'t>,
    filter: &ScopeFilter,
    patterns: &ScopePatterns,
    source: &str,
    matcher: &Matcher<'_>,
    seed: &Bindings<'t>,
) -> Result<Vec<Bindings<'t>>, String> {
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
            return Err(format!("does not extend `{}`", base.value));
        }
    }
    let mut seeds = match &patterns.has {
        Some(has) => {
            let found = matcher.occurrences(has, def, seed, MAX_SEEDS);
            if found.is_empty() {
                return Err(format!("lacks `{}`", has.source.trim()));
            }
            if let Some(n) = filter.count
                && found.len() as u64 != n
            {
                return Err(format!(
                    "has {} of `{}`, wants exactly {n}",
                    found.len(),
                    has.source.trim()
                ));
            }
            let mut seen = HashSet::new();
            found
                .into_iter()
                .filter(|b| seen.insert(format!("{:?}", b.fingerprint(source))))
                .map(Bindings::named_only)
                .collect()
        }
        None => vec![seed.clone()],
    };
    for lacks in &patterns.lacks {
        seeds.retain(|s| !matcher.occurs_in(lacks, def, s));
        if seeds.is_empty() {
            return Err(format!("has `{}`", lacks.source.trim()));
        }
    }
    Ok(seeds)
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
