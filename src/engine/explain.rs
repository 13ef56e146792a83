//! `explain --in`: every match of one rule in one file, and the near misses with the first
//! reason each failed — the answer to "why didn't my rule match?".

use std::ops::Range;

use miette::{Diagnostic, SourceSpan};
use thiserror::Error;
use tree_sitter::Node;

use super::outcome::Locator;
use super::parsed::parse_target;
use super::scope::unmet_predicate;
use super::scope::{ScopeCache, ScopeMiss, scope_bindings};
use super::{Engine, MatchReport, PatchError, Target, gate_reason};
use crate::compile::ScopePatterns;
use crate::compile::{CompiledRule, RuleId};
use crate::pattern::PatNode;
use crate::pattern::matcher::{Bindings, Matcher};
use crate::python::definition_name;
use crate::rules::model::ScopeFilter;
use crate::source::{SourceFile, span};
use crate::versions::Gate;

/// The score of a candidate that passed the scopes and failed in the pattern, plus the depth
/// it got to: above every scope miss.
const PATTERN_MISS: u32 = 3000;
/// A score from here up: the candidate stands in the rule's class and function.
const IN_SCOPE: u32 = 2000;
/// Added to a scope's score where the definition is named right but misses a predicate.
const PREDICATE_MISS: u32 = 500;

/// How many near misses `explain` shows.
pub const NEAR_MISSES_SHOWN: usize = 5;

/// A node that fits the pattern's root but failed, with the first reason.
#[derive(Debug, Error, Diagnostic)]
#[error("near miss for rule `{rule}`: {reason}")]
#[diagnostic(severity(Advice), code(regraft::explain::near_miss))]
pub struct NearMiss {
    /// The rule.
    pub rule: String,
    /// The first reason it failed.
    pub reason: String,
    /// The candidate's range.
    pub candidate: Range<usize>,
    /// Where it failed.
    pub at: Range<usize>,
    /// How far it got (scopes passed, then pattern depth); higher is nearer.
    pub score: u32,
    #[source_code]
    src: crate::source::Source,
    #[label("fails here")]
    label: SourceSpan,
}

/// What one rule finds in one file.
#[derive(Debug)]
pub struct Explanation {
    /// Why the rule would not run on this file, if it would not (version gate, `files`).
    pub inactive: Vec<String>,
    /// Its matches.
    pub matches: Vec<MatchReport>,
    /// The nearest misses, nearest first.
    pub near_misses: Vec<NearMiss>,
}

impl Engine<'_> {
    /// Explains rule `index` on `target`.
    pub fn explain(&self, index: usize, target: Target<'_>) -> Result<Explanation, PatchError> {
        // Read as `survey` reads it: lone `\r` line ends as `\n` (same offsets).
        let lf = super::lone_cr_as_lf(target)?;
        let target = Target {
            path: target.path,
            source: lf.as_deref().unwrap_or(target.source),
        };
        let rule = &self.rules.rules[index];
        let text = target.source;
        let file = SourceFile::new(target.path, text);
        let tree = parse_target(target)?;
        let mut inactive = Vec::new();
        match self.versions.gate(&rule.rule) {
            Gate::Open => {}
            gate => inactive.push(format!("version gate: {}", gate_reason(&gate))),
        }
        if !rule.selects(target.path) {
            let globs: Vec<&str> = rule.rule.files.iter().map(|f| f.value.as_str()).collect();
            inactive.push(format!(
                "files: `{}` is not selected by {}",
                target.path,
                globs.join(", ")
            ));
        }
        let root = tree.root_node();
        let found = self
            .find(text, None, None, root, &[RuleId(index)])
            .remove(0);
        let locator = Locator::new(text);
        let matches = found
            .iter()
            .map(|m| {
                let range = m.node.start_byte()..m.last.end_byte();
                locator.match_report(range, &m.bindings, &[], m.guarded)
            })
            .collect::<Vec<_>>();
        let matched: Vec<usize> = found.iter().map(|m| m.node.id()).collect();
        let mut near = near_misses(rule, root, text, &matched);
        near.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.start.cmp(&b.0.start)));
        // Ranked by how much of the pattern they meet; the tail that met far less than the
        // nearest (two or more levels shallower) is cut.
        if let Some(best) = near
            .iter()
            .map(|n| n.2)
            .filter(|s| *s >= PATTERN_MISS)
            .max()
        {
            near.retain(|n| n.2 < PATTERN_MISS || n.2 + 1 >= best);
        }
        // Where a candidate stands in the rule's scopes (its class and function), one in a
        // class or function of another name is beside the point: only those are shown.
        if near.iter().any(|n| n.2 >= IN_SCOPE) {
            near.retain(|n| n.2 >= IN_SCOPE || n.2 % 1000 == PREDICATE_MISS);
        }
        // Several candidates failing at the same place for the same reason are one near miss.
        let mut seen = std::collections::HashSet::new();
        near.retain(|(_, at, _, reason)| seen.insert((at.clone(), reason.clone())));
        near.truncate(NEAR_MISSES_SHOWN);
        let near_misses = near
            .into_iter()
            .map(|(candidate, mismatch_at, score, reason)| NearMiss {
                rule: rule.id().to_string(),
                label: span(mismatch_at.clone()),
                reason,
                candidate,
                at: mismatch_at,
                score,
                src: file.named_source(),
            })
            .collect();
        Ok(Explanation {
            inactive,
            matches,
            near_misses,
        })
    }
}

/// (candidate, where it failed, score, reason) for every node of the pattern root's kind that
/// holds one of the pattern's literals and did not match.
fn near_misses(
    rule: &CompiledRule,
    root: Node<'_>,
    text: &str,
    matched: &[usize],
) -> Vec<(Range<usize>, Range<usize>, u32, String)> {
    // A run is found at its first statement.
    // A run is found at its first statement (an optional statement's variants share it).
    fn found_at(root: &PatNode) -> &PatNode {
        match root {
            PatNode::Seq(parts) => &parts[0],
            PatNode::Any(alternatives) => alternatives.first().map_or(root, found_at),
            root => root,
        }
    }
    let Some(kind) = found_at(&rule.pattern.root).kind() else {
        return Vec::new();
    };
    let matcher = Matcher::new(text);
    let head = head_identifier(&rule.pattern.root);
    let mut out = Vec::new();
    let mut cursor = root.walk();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        stack.extend(node.named_children(&mut cursor));
        if node.kind() != kind || matched.contains(&node.id()) {
            continue;
        }
        if let Some(head) = &head
            && !text[node.byte_range()].contains(head.as_str())
        {
            continue;
        }
        let (at, score, reason) =
            match scope_bindings(rule, root, node, text, &matcher, &ScopeCache::default()) {
                Ok(seeds) => {
                    let mut bindings = seeds.into_iter().next().unwrap_or_default();
                    match matcher.why_not(&rule.pattern.root, node, &mut bindings) {
                        Some(m) => (m.at, PATTERN_MISS + m.depth, m.reason),
                        None => continue,
                    }
                }
                Err(miss) => {
                    // With no name to mention (`$LAYER(...)`), a node in the wrong scope is a
                    // near miss only if it has the pattern's shape: every call is not.
                    if head.is_none()
                        && !matcher.matches(&rule.pattern.root, node, &mut Default::default())
                    {
                        continue;
                    }
                    scope_reason(rule, node, text, &matcher, &miss)
                }
            };
        out.push((node.byte_range(), at, score, reason));
    }
    out
}

/// The name a candidate must mention to count as a near miss: the callee of the pattern's
/// first call (`layer` in `self.layer(...)`), when that is written out rather than a metavariable.
fn head_identifier(root: &PatNode) -> Option<String> {
    let PatNode::Node(n) = root else { return None };
    if n.kind == "call" {
        let (_, function) = n
            .children
            .iter()
            .find(|(f, _)| f.as_deref() == Some("function"))?;
        return match function {
            PatNode::Node(f) if f.text.is_some() => f.text.clone(),
            PatNode::Node(f) if f.kind == "attribute" => match f.children.last() {
                Some((_, PatNode::Node(a))) => a.text.clone(),
                _ => None,
            },
            _ => None,
        };
    }
    n.children.iter().find_map(|(_, c)| head_identifier(c))
}

fn enclosing<'t>(node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    std::iter::successors(node.parent(), |n| n.parent()).find(|n| n.kind() == kind)
}

fn scope_reason(
    rule: &CompiledRule,
    node: Node<'_>,
    text: &str,
    matcher: &Matcher<'_>,
    miss: &ScopeMiss,
) -> (Range<usize>, u32, String) {
    let inside = &rule.rule.inside;
    let wanted = |what: &'static str| Wanted {
        what,
        filter: if what == "class" {
            inside.class.as_ref()
        } else {
            inside.function.as_ref()
        },
        patterns: if what == "class" {
            &rule.class_scope
        } else {
            &rule.function_scope
        },
    };
    match miss {
        ScopeMiss::Class => definition_reason(node, text, matcher, &wanted("class"), 0),
        ScopeMiss::Function => definition_reason(node, text, matcher, &wanted("function"), 1000),
        ScopeMiss::Loop => loop_reason(rule, node, matcher),
    }
}

/// The class or function a rule wants around its matches.
struct Wanted<'r> {
    /// `class` or `function`.
    what: &'static str,
    filter: Option<&'r ScopeFilter>,
    patterns: &'r ScopePatterns,
}

/// Why `node` is not inside the wanted class or function, scored `score`: the nearest such
/// definition has another name, or (named right) misses one of the rule's predicates.
fn definition_reason(
    node: Node<'_>,
    text: &str,
    matcher: &Matcher<'_>,
    wanted: &Wanted<'_>,
    score: u32,
) -> (Range<usize>, u32, String) {
    let what = wanted.what;
    let description = wanted.filter.map(|f| f.to_string()).unwrap_or_default();
    let (keyword, kind) = if what == "class" {
        ("class", "class_definition")
    } else {
        ("def", "function_definition")
    };
    match enclosing(node, kind) {
        Some(d) => {
            let name = definition_name(d, text).unwrap_or("?");
            let header = d
                .child_by_field_name("name")
                .map_or(d.byte_range(), |n| n.byte_range());
            let unmet = wanted
                .filter
                .filter(|f| f.matches_name(name))
                .and_then(|f| unmet_predicate(d, f, wanted.patterns, text, matcher));
            // Named right but missing a predicate is nearer than named otherwise.
            match unmet {
                Some(unmet) => (
                    header,
                    score + PREDICATE_MISS,
                    format!("{what} `{name}` {unmet}"),
                ),
                None => (
                    header,
                    score,
                    format!("inside `{keyword} {name}`, rule wants {what} {description}"),
                ),
            }
        }
        None => (
            node.byte_range(),
            score,
            format!("not inside a {what}; rule wants {what} {description}"),
        ),
    }
}

/// Why `node` is not in the body of a loop whose header fits the rule's `inside.loop` (the
/// first alternative's reason, where none fits).
fn loop_reason(
    rule: &CompiledRule,
    node: Node<'_>,
    matcher: &Matcher<'_>,
) -> (Range<usize>, u32, String) {
    let Some(first) = rule.loop_patterns.first() else {
        return (node.byte_range(), 2000, "out of scope".into());
    };
    let wanted: Vec<String> = rule
        .loop_patterns
        .iter()
        .map(|p| format!("`{}`", p.source.trim()))
        .collect();
    let wanted = wanted.join(" or ");
    let Some(for_node) =
        std::iter::successors(node.parent(), |n| n.parent()).find(|n| n.kind() == "for_statement")
    else {
        return (
            node.byte_range(),
            2000,
            format!("not inside a loop {wanted}"),
        );
    };
    let mismatch = |pattern: &crate::pattern::LoopPattern| {
        let mut bindings = Bindings::default();
        let parts = [
            (&pattern.left, for_node.child_by_field_name("left")),
            (&pattern.right, for_node.child_by_field_name("right")),
        ];
        parts
            .into_iter()
            .find_map(|(p, n)| matcher.why_not(p, n?, &mut bindings))
    };
    if rule.loop_patterns.iter().any(|p| mismatch(p).is_none()) {
        return (
            node.byte_range(),
            2000,
            format!("not in the body of a loop {wanted}"),
        );
    }
    let m = mismatch(first).expect("no alternative fits");
    (
        m.at,
        2000 + m.depth,
        format!("the enclosing loop does not fit {wanted}: {}", m.reason),
    )
}
