//! Sites where a rule's patch is already in place (`--write`, then `--check`): the shape its
//! action leaves, or, for a deletion, the scopes it cleared.

use tree_sitter::Node;

use super::found::Found;
use super::scope;
use crate::compile::CompiledRule;
use crate::pattern::matcher::{Bindings, Matcher};

/// The sites of `applied` (the shape the rule's action leaves) in the rule's scopes, as
/// guarded matches: the patch already applied there.
pub(super) fn applied_sites<'t>(
    rule: &CompiledRule,
    applied: &crate::pattern::Pattern,
    root: Node<'t>,
    text: &str,
    matcher: &Matcher<'_>,
    cache: &scope::ScopeCache<'t>,
) -> Vec<Found<'t>> {
    let mut out = Vec::new();
    // Only subtrees holding the shape's longest literal can hold a site: the walk enters no
    // other (a whole-tree walk per rule and step made an `after:` chain quadratic). Literals,
    // not words of the text: a word of a template's comment is no part of its code's node.
    let word = applied
        .literals
        .iter()
        .filter(|w| !w.is_empty())
        .max_by_key(|w| w.len());
    let at: Option<Vec<usize>> =
        word.map(|w| memchr::memmem::find_iter(text.as_bytes(), w).collect());
    let may_hold = |n: &Node<'_>| {
        at.as_ref().is_none_or(|at| {
            let i = at.partition_point(|&o| o < n.start_byte());
            at.get(i).is_some_and(|&o| o < n.end_byte())
        })
    };
    let mut stack = vec![root];
    let mut cursor = root.walk();
    while let Some(node) = stack.pop() {
        let before = stack.len();
        stack.extend(node.named_children(&mut cursor).filter(|c| may_hold(c)));
        stack[before..].reverse();
        // The shape alone first: cheap, and it fails almost everywhere.
        if applied.root.kind().is_some_and(|k| k != node.kind())
            || matcher
                .matches_at(&applied.root, node, &mut Bindings::default())
                .is_none()
        {
            continue;
        }
        let Ok(seeds) = scope::scope_bindings(rule, root, node, text, matcher, cache) else {
            continue;
        };
        // Where the rule's own sites must stand and what they must bind (as far as the shape
        // binds the names `where` tests) hold for its output too: a shape elsewhere is no
        // patch of this rule's.
        let site = seeds.into_iter().find_map(|mut bindings| {
            let last = matcher.matches_at(&applied.root, node, &mut bindings)?;
            (super::site::stands_at(rule, root, node, last)
                && super::site::constraints_hold(rule, &bindings, text, matcher, true))
            .then_some((last, bindings))
        });
        if let Some((last, bindings)) = site {
            out.push(Found {
                node,
                last,
                bindings,
                guarded: true,
                applied: true,
                ambiguous: Vec::new(),
            });
        }
    }
    out
}

/// The classes or functions a `delete` rule's `inside` selects, where its match is absent:
/// sites the deletion already cleared, each reported at the definition's name.
pub(super) fn cleared_scopes<'t>(
    rule: &CompiledRule,
    root: Node<'t>,
    text: &str,
    matcher: &Matcher<'_>,
    cache: &scope::ScopeCache<'t>,
) -> Vec<Found<'t>> {
    let inside = &rule.rule.inside;
    let (innermost, filter) = match (&inside.function, &inside.class) {
        (Some(f), _) => ("function_definition", f),
        (None, Some(c)) => ("class_definition", c),
        (None, None) => return Vec::new(),
    };
    let mut out = Vec::new();
    for node in crate::python::named_descendants(root) {
        if node.kind() != innermost {
            continue;
        }
        // This definition is the scope (its name selected), and its body lies within every
        // scope and predicate of the rule.
        let (Some(body), Some(name)) = (
            node.child_by_field_name("body"),
            node.child_by_field_name("name"),
        ) else {
            continue;
        };
        if !filter.matches_name(&text[name.byte_range()]) {
            continue;
        }
        if let Ok(seeds) = scope::scope_bindings(rule, root, body, text, matcher, cache)
            && !holds_near_miss(rule, node, matcher)
        {
            out.push(Found {
                node: name,
                last: name,
                bindings: seeds.into_iter().next().unwrap_or_default(),
                guarded: true,
                applied: true,
                ambiguous: Vec::new(),
            });
        }
    }
    out
}

/// Whether `scope` holds code close to the rule's pattern (of its kind, and alike past its
/// first level: `@torch.no_grad()` for `@torch.compile($$$A)`): upstream changed the code
/// rather than the deletion removing it, so the absence is drift, not the patch in place.
fn holds_near_miss(rule: &CompiledRule, scope: Node<'_>, matcher: &Matcher<'_>) -> bool {
    let Some(kind) = rule.pattern.root.kind() else {
        return false;
    };
    crate::python::named_descendants(scope).any(|node| {
        node.kind() == kind
            && matcher
                .why_not(&rule.pattern.root, node, &mut Bindings::default())
                .is_some_and(|m| m.depth >= 2)
    })
}

/// For a deletion scoped by `inside`, what its summary counts in the scope's own unit, so the
/// run that deletes and the run that finds it done count the same thing: "3 matches in 1
/// class", then "1 class cleared: nothing left to delete". `None` for other rules.
pub(super) fn deletion_count(
    rule: &CompiledRule,
    matches: &[Found<'_>],
    status: &crate::engine::outcome::RuleStatus,
) -> Option<String> {
    use crate::engine::outcome::RuleStatus;
    let inside = &rule.rule.inside;
    let (kind, unit) = match (&inside.function, &inside.class) {
        (Some(_), _) => ("function_definition", "function"),
        (None, Some(_)) => ("class_definition", "class"),
        (None, None) => return None,
    };
    let shape = crate::actions::unit(&rule.rule.action)
        .applied_shape(&rule.rule.action.args, &rule.pattern.source);
    if !matches!(shape, crate::actions::AppliedShape::Absent) || matches.is_empty() {
        return None;
    }
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "es" });
    let scopes = |n: usize| {
        format!(
            "{n} {unit}{}",
            if n == 1 {
                ""
            } else if unit == "class" {
                "es"
            } else {
                "s"
            }
        )
    };
    match status {
        RuleStatus::Applied => {
            let mut around: Vec<usize> = matches
                .iter()
                .filter_map(|m| {
                    std::iter::successors(m.node.parent(), |n| n.parent())
                        .find(|n| n.kind() == kind)
                        .map(|n| n.id())
                })
                .collect();
            around.sort_unstable();
            around.dedup();
            Some(format!(
                "{} in {}",
                plural(matches.len(), "match"),
                scopes(around.len())
            ))
        }
        RuleStatus::Redundant if matches.iter().all(|m| m.applied) => Some(format!(
            "{} cleared: nothing left to delete",
            scopes(matches.len())
        )),
        _ => None,
    }
}
