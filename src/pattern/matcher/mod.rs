//! Decides whether a syntax node matches a pattern, and what the metavariables bind.

use std::cell::Cell;

use tree_sitter::Node;

use super::{NodePattern, PatNode, Pattern};
use crate::python::{is_trivia, significant_children};

mod bindings;
mod mismatch;
use bindings::Key;
pub use bindings::{Bindings, Capture};
pub use mismatch::Mismatch;

/// The children of a node that a pattern's are compared with; most nodes have few.
type Targets<'t> = smallvec::SmallVec<[Node<'t>; 8]>;

/// A pattern in a sequence: a bare one, or a child pattern with its field.
trait AsPattern {
    fn pattern(&self) -> &PatNode;
}

impl AsPattern for &PatNode {
    fn pattern(&self) -> &PatNode {
        self
    }
}

impl AsPattern for (Option<String>, PatNode) {
    fn pattern(&self) -> &PatNode {
        &self.1
    }
}

/// Whether a match of `pattern` may stand at `node` or below it: the grammar's table of which
/// kinds hold which says, for instance, that no expression holds a statement, so a search for
/// a statement does not walk the expressions that make up most of a tree.
fn worth_entering(pattern: &Pattern, node: Node<'_>) -> bool {
    let Some(kinds) = &pattern.root_kinds else {
        return true;
    };
    let kind = node.kind_id();
    let table = crate::python::grammar::containment();
    kinds
        .iter()
        .any(|&k| k == kind || table.may_contain(kind, k))
}

/// The children of an annotation's `generic_type`, `union_type` or `member_type` as the
/// expression CPython reads there has them: a `type` wrapper is what it holds, and the
/// brackets of a `type_parameter` are the subscript's own (`list[int]` is `list`, `[`, `int`,
/// `]` as a `subscript`'s children are).
fn type_view_children<'t>(child: Node<'t>, targets: &mut Targets<'t>) {
    if is_trivia(&child) {
        return;
    }
    let kind = child.kind();
    if kind == "type_parameter" {
        let mut cursor = child.walk();
        for c in child.children(&mut cursor) {
            type_view_children(c, targets);
        }
    } else if kind == "type"
        && child.named_child_count() == 1
        && let Some(inner) = child.named_child(0)
    {
        targets.push(inner);
    } else {
        targets.push(child);
    }
}

/// How many node comparisons one candidate may cost before it is given up as no match;
/// sequence metavariables backtrack, and a hostile pattern must not hang the engine.
const STEP_BUDGET: u32 = 200_000;

/// Matches patterns against nodes of one source text.
pub struct Matcher<'s> {
    source: &'s str,
    steps: Cell<u32>,
}

impl<'s> Matcher<'s> {
    /// A matcher over `source`, the text the nodes come from.
    pub fn new(source: &'s str) -> Self {
        Self {
            source,
            steps: Cell::new(0),
        }
    }

    /// Whether `pattern` matches `node` or any named node below it, each try starting from
    /// `seed` (so metavariables it shares with the match must agree). Every match holds the
    /// pattern's literals: a node whose text lacks one (most definitions, for most patterns)
    /// needs no walk of its tree.
    pub fn occurs_in<'t>(&self, pattern: &Pattern, node: Node<'t>, seed: &Bindings<'t>) -> bool {
        if !self.may_hold(pattern, node) {
            return false;
        }
        // `matches` leaves the bindings as they were when it fails: one copy serves every try.
        let mut bindings = seed.clone();
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if self.matches(&pattern.root, n, &mut bindings) {
                return true;
            }
            let mut cursor = n.walk();
            stack.extend(
                n.named_children(&mut cursor)
                    .filter(|c| worth_entering(pattern, *c)),
            );
        }
        false
    }

    /// The bindings of each match of `pattern` at `node` or below, in document order, each
    /// extending `seed`; at most `limit` of them.
    pub fn occurrences<'t>(
        &self,
        pattern: &Pattern,
        node: Node<'t>,
        seed: &Bindings<'t>,
        limit: usize,
    ) -> Vec<Bindings<'t>> {
        let mut out = Vec::new();
        if !self.may_hold(pattern, node) {
            return out;
        }
        let mut bindings = seed.clone();
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if self.matches(&pattern.root, n, &mut bindings) {
                out.push(std::mem::replace(&mut bindings, seed.clone()));
                if out.len() >= limit {
                    break;
                }
            }
            let mut cursor = n.walk();
            let children: Vec<Node<'t>> = n
                .named_children(&mut cursor)
                .filter(|c| worth_entering(pattern, *c))
                .collect();
            stack.extend(children.into_iter().rev());
        }
        out
    }

    /// Whether `node`'s text holds every literal of `pattern` (else nothing in it matches).
    fn may_hold(&self, pattern: &Pattern, node: Node<'_>) -> bool {
        let text = self
            .source
            .as_bytes()
            .get(node.byte_range())
            .unwrap_or_default();
        pattern
            .literals
            .iter()
            .all(|l| memchr::memmem::find(text, l.as_bytes()).is_some())
    }

    /// Whether `node` matches `pattern`, extending `bindings` on success (and leaving them as
    /// they were on failure).
    pub fn matches<'t>(
        &self,
        pattern: &PatNode,
        node: Node<'t>,
        bindings: &mut Bindings<'t>,
    ) -> bool {
        self.steps.set(0);
        let checkpoint = bindings.checkpoint();
        let ok = self.node(pattern, node, bindings);
        if !ok {
            bindings.rollback(checkpoint);
        }
        ok
    }

    /// Matches `pattern` at `node`: for a statement sequence, against the run of statements
    /// starting at `node` (the shortest that matches). The last node of the match, extending
    /// `bindings` on success.
    pub fn matches_at<'t>(
        &self,
        pattern: &PatNode,
        node: Node<'t>,
        bindings: &mut Bindings<'t>,
    ) -> Option<Node<'t>> {
        let parts = match pattern {
            PatNode::Seq(parts) => parts,
            // Alternatives may be sequences too: the first that matches.
            PatNode::Any(alternatives)
                if alternatives.iter().any(|a| matches!(a, PatNode::Seq(_))) =>
            {
                return alternatives.iter().find_map(|a| {
                    let checkpoint = bindings.checkpoint();
                    let found = self.matches_at(a, node, bindings);
                    if found.is_none() {
                        bindings.rollback(checkpoint);
                    }
                    found
                });
            }
            _ => return self.matches(pattern, node, bindings).then_some(node),
        };
        self.steps.set(0);
        // The first statement decides cheaply whether a run can start here.
        if !self.node(&parts[0], node, &mut bindings.clone()) {
            return None;
        }
        let siblings = significant_children(node.parent()?);
        let start = siblings.iter().position(|s| *s == node)?;
        for end in start..siblings.len() {
            let checkpoint = bindings.checkpoint();
            let parts: Vec<&PatNode> = parts.iter().collect();
            if self.sequence(&parts, &siblings[start..=end], bindings) {
                return Some(siblings[end]);
            }
            bindings.rollback(checkpoint);
            if self.ran_out() {
                break;
            }
        }
        None
    }

    /// Whether the last [`Matcher::matches`] gave up on its step budget rather than finding a
    /// mismatch.
    pub fn ran_out(&self) -> bool {
        self.steps.get() > STEP_BUDGET
    }

    fn spend(&self) -> bool {
        let used = self.steps.get() + 1;
        self.steps.set(used);
        used <= STEP_BUDGET
    }

    fn bind<'t>(&self, name: &Option<String>, capture: Capture<'t>, b: &mut Bindings<'t>) -> bool {
        let Some(name) = name else {
            return true;
        };
        if let Some(existing) = b.get(name) {
            return existing.text(self.source) == capture.text(self.source);
        }
        b.entries.push((Key::Name(name.clone()), capture));
        true
    }

    fn node<'t>(&self, pattern: &PatNode, node: Node<'t>, b: &mut Bindings<'t>) -> bool {
        if !self.spend() {
            return false;
        }
        match pattern {
            PatNode::Var(name) => node.is_named() && self.bind(name, Capture::One(node), b),
            PatNode::Multi(name) => {
                node.is_named() && self.bind(name, Capture::Many(vec![node]), b)
            }
            PatNode::Node(p) => self.concrete(p, node, b),
            // A sequence spans several nodes: see `matches_run`.
            PatNode::Seq(_) => false,
            PatNode::Any(alternatives) => alternatives.iter().any(|a| {
                let checkpoint = b.checkpoint();
                let ok = self.node(a, node, b);
                if !ok {
                    b.rollback(checkpoint);
                }
                ok
            }),
        }
    }

    fn concrete<'t>(&self, p: &NodePattern, node: Node<'t>, b: &mut Bindings<'t>) -> bool {
        if p.kind == "argument_list" && node.kind() == "generator_expression" {
            return self.generator_argument(p, node, b);
        }
        if !p.kind_ids.contains(&node.kind_id()) {
            return false;
        }
        // A `case` pattern's list or tuple is no display (CPython's `MatchSequence`): only a
        // pattern written as a `case` pattern, of the same kinds, matches it.
        if p.kind != node.kind() && node.parent().is_some_and(|n| n.kind() == "case_pattern") {
            return false;
        }
        if let Some(text) = &p.text {
            return &self.source[node.byte_range()] == text;
        }
        if p.children.is_empty() {
            return node.child_count() == 0 || !p.named;
        }
        let targets = self.targets_for(p, node);
        let checkpoint = b.checkpoint();
        if p.kind == "decorator"
            && let Some(ok) = self.bare_decorator(p, &targets, b)
        {
            return ok;
        }
        let ok = if p.kind == "argument_list" && !p.ordered {
            let patterns: Vec<&PatNode> = p.children.iter().map(|(_, c)| c).collect();
            self.arguments(&patterns, &targets, b)
        } else {
            self.sequence(&p.children, &targets, b)
        };
        if !ok {
            b.rollback(checkpoint);
        } else if p.is_action_call {
            b.entries.push((Key::ActionCall, Capture::One(node)));
        }
        ok
    }

    /// The children of `node` to compare with `p`'s: a function pattern without a return
    /// annotation matches functions with one.
    fn targets_for<'t>(&self, p: &NodePattern, node: Node<'t>) -> Targets<'t> {
        let lenient = p.kind == "function_definition"
            && !p
                .children
                .iter()
                .any(|(f, _)| f.as_deref() == Some("return_type"));
        let return_type = lenient
            .then(|| node.child_by_field_name("return_type"))
            .flatten();
        let mut cursor = node.walk();
        let mut targets = Targets::new();
        // An expression pattern over an annotation's node (a pattern written as an annotation
        // has the same kinds as its target, and compares as is).
        let type_view =
            crate::python::grammar::is_type_view(node.kind_id()) && p.kind != node.kind();
        if cursor.goto_first_child() {
            loop {
                let c = cursor.node();
                let dropped = lenient && (c.kind() == "->" || Some(c) == return_type);
                if type_view {
                    type_view_children(c, &mut targets);
                } else if !is_trivia(&c) && !dropped {
                    targets.push(c);
                }
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        targets
    }

    /// `f($X)` or `f($$$A)` against `f(x for x in y)`: tree-sitter makes a generator that is
    /// a call's only argument the call's argument list itself (the parentheses are shared), so
    /// a list of one metavariable binds the generator, whose text reads as that argument.
    fn generator_argument<'t>(
        &self,
        p: &NodePattern,
        node: Node<'t>,
        b: &mut Bindings<'t>,
    ) -> bool {
        match super::facts::lone_metavariable(p) {
            Some(PatNode::Var(name)) => self.bind(name, Capture::One(node), b),
            Some(PatNode::Multi(name)) => self.bind(name, Capture::Many(vec![node]), b),
            _ => false,
        }
    }

    /// `@f($$$A)` against a bare `@f`: `Some(result)` when that case applies.
    fn bare_decorator<'t>(
        &self,
        p: &NodePattern,
        targets: &[Node<'t>],
        b: &mut Bindings<'t>,
    ) -> Option<bool> {
        let (_, PatNode::Node(call)) = p.children.last()? else {
            return None;
        };
        let target = targets.last()?;
        if call.kind != "call" || target.kind() == "call" {
            return None;
        }
        let function = call
            .children
            .iter()
            .find(|(f, _)| f.as_deref() == Some("function"))?;
        let (_, PatNode::Node(args)) = call
            .children
            .iter()
            .find(|(f, _)| f.as_deref() == Some("arguments"))?
        else {
            return None;
        };
        let only_sequences = args.children.iter().all(|(_, c)| {
            matches!(c, PatNode::Multi(_)) || c.kind().is_some_and(|k| k == "(" || k == ")")
        });
        if !only_sequences {
            return Some(false);
        }
        let checkpoint = b.checkpoint();
        if !self.node(&function.1, *target, b) {
            b.rollback(checkpoint);
            return Some(false);
        }
        for (_, c) in &args.children {
            if let PatNode::Multi(name) = c
                && !self.bind(name, Capture::Many(Vec::new()), b)
            {
                b.rollback(checkpoint);
                return Some(false);
            }
        }
        Some(true)
    }

    /// Matches a run of patterns against a run of nodes; `$$$` takes any number of nodes.
    fn sequence<'t, P: AsPattern>(
        &self,
        patterns: &[P],
        nodes: &[Node<'t>],
        b: &mut Bindings<'t>,
    ) -> bool {
        let Some((first, rest)) = patterns.split_first() else {
            return nodes.is_empty();
        };
        if let PatNode::Multi(name) = first.pattern() {
            // The fewest nodes that leave a match for the rest, so `$$$A, $X` binds `$X` last.
            let min_rest = rest
                .iter()
                .filter(|p| !matches!(p.pattern(), PatNode::Multi(_)))
                .count();
            if nodes.len() < min_rest {
                return false;
            }
            // With no other sequence after it, how many nodes it takes is already decided.
            let fixed = !rest
                .iter()
                .any(|p| matches!(p.pattern(), PatNode::Multi(_)));
            let first_take = if fixed { nodes.len() - min_rest } else { 0 };
            for take in first_take..=nodes.len() - min_rest {
                if !self.spend() {
                    return false;
                }
                let checkpoint = b.checkpoint();
                if self.bind(name, Capture::Many(nodes[..take].to_vec()), b)
                    && self.sequence(rest, &nodes[take..], b)
                {
                    return true;
                }
                b.rollback(checkpoint);
            }
            return false;
        }
        let Some((node, others)) = nodes.split_first() else {
            return false;
        };
        let checkpoint = b.checkpoint();
        if self.node(first.pattern(), *node, b) && self.sequence(rest, others, b) {
            return true;
        }
        b.rollback(checkpoint);
        false
    }

    /// Argument lists: keyword arguments of the pattern match keyword arguments of the call
    /// wherever they stand; everything else matches in order.
    fn arguments<'t>(
        &self,
        patterns: &[&PatNode],
        nodes: &[Node<'t>],
        b: &mut Bindings<'t>,
    ) -> bool {
        let (keywords, ordered): (Vec<&PatNode>, Vec<&PatNode>) = patterns
            .iter()
            .partition(|p| p.kind() == Some("keyword_argument"));
        let mut used = vec![false; nodes.len()];
        self.assign_keywords(&keywords, &ordered, nodes, &mut used, b)
    }

    fn assign_keywords<'t>(
        &self,
        keywords: &[&PatNode],
        ordered: &[&PatNode],
        nodes: &[Node<'t>],
        used: &mut [bool],
        b: &mut Bindings<'t>,
    ) -> bool {
        let Some((keyword, rest)) = keywords.split_first() else {
            let remaining: Vec<Node<'t>> = nodes
                .iter()
                .zip(used.iter())
                .filter(|(_, u)| !**u)
                .map(|(n, _)| *n)
                .collect();
            return self.sequence(ordered, &remaining, b);
        };
        for i in 0..nodes.len() {
            if used[i] || nodes[i].kind() != "keyword_argument" {
                continue;
            }
            let checkpoint = b.checkpoint();
            if self.node(keyword, nodes[i], b) {
                used[i] = true;
                if self.assign_keywords(rest, ordered, nodes, used, b) {
                    return true;
                }
                used[i] = false;
            }
            b.rollback(checkpoint);
        }
        false
    }
}

#[cfg(test)]
mod tests;
