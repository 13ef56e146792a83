//! Metavariables bound in several places of one rule must agree; this finds names whose
//! bindings can never (or only by accident) agree.

use crate::compile::CompiledRule;
use crate::pattern::PatNode;
use crate::rules::error::{RuleError, RuleErrorKind};
use crate::rules::model::{Rule, Snippet};

/// One place a metavariable stands.
struct Occurrence<'r> {
    name: String,
    /// `$$$NAME` (a run of nodes) rather than `$NAME`.
    run: bool,
    /// Where only a name can stand (an attribute's name, a def's or class's name, a keyword).
    name_only: bool,
    /// Which pattern, as the rule writes it (`match`, `inside.class.has`).
    key: &'static str,
    snippet: &'r Snippet,
}

/// Warnings for metavariables whose bindings cannot agree: one bound as a node in one pattern
/// and as a run in another, or constrained by `where.kind` to something other than a name
/// where only a name can stand.
pub(super) fn disagreeing(rule: &Rule, compiled: &CompiledRule) -> Vec<RuleError> {
    let found = occurrences(rule, compiled);
    let mut out = Vec::new();
    let mut reported: Vec<&str> = Vec::new();
    for (i, a) in found.iter().enumerate() {
        if reported.contains(&a.name.as_str()) {
            continue;
        }
        let Some(b) = found[i + 1..]
            .iter()
            .find(|b| b.name == a.name && b.run != a.run)
        else {
            continue;
        };
        reported.push(&a.name);
        let (one, run) = if a.run { (b, a) } else { (a, b) };
        out.push(
            warning(rule, &a.name, format!(
                "it binds one node in `{}` and a run in `{}`: they agree only when the run holds exactly one node",
                one.key, run.key
            ), run)
            .with_help("use two names if they are not meant to be the same code"),
        );
    }
    // A name-only place (`self.$X`) in one pattern and a whole expression (`$X(...)`) in
    // another: they agree only where the expression is that bare name — in a scope predicate
    // and `match`, a reuse by accident that leaves the rule matching nothing.
    for (i, a) in found.iter().enumerate() {
        if reported.contains(&a.name.as_str()) || a.run {
            continue;
        }
        let Some(b) = found[i + 1..]
            .iter()
            .find(|b| b.name == a.name && !b.run && b.name_only != a.name_only && b.key != a.key)
        else {
            continue;
        };
        reported.push(&a.name);
        let (name_only, expression) = if a.name_only { (a, b) } else { (b, a) };
        out.push(
            warning(rule, &a.name, format!(
                "it stands where only a name can in `{}` and for a whole expression in `{}`: they agree only where that expression is the bare name, so the rule may match nothing",
                name_only.key, expression.key
            ), expression)
            .with_help("use two names if they are not meant to be the same (or write the same shape in both, e.g. `self.$X(...)`)"),
        );
    }
    for (name, constraint) in &rule.constraints {
        let name = name.value.trim_start_matches('$');
        let wants_other = !constraint.kind.is_empty()
            && constraint
                .kind
                .iter()
                .all(|kind| kind.value != "identifier")
            || constraint
                .not_kind
                .iter()
                .any(|kind| kind.value == "identifier");
        if let Some(at) = found.iter().find(|o| o.name == name && o.name_only)
            && wants_other
        {
            out.push(warning(
                rule,
                name,
                format!(
                    "`where` wants it to be no name, but in `{}` only a name can stand there",
                    at.key
                ),
                at,
            ));
        }
    }
    out
}

/// Every place a named metavariable stands in the rule's binding patterns.
fn occurrences<'r>(rule: &'r Rule, compiled: &CompiledRule) -> Vec<Occurrence<'r>> {
    let mut found: Vec<Occurrence<'r>> = Vec::new();
    let mut collect = |root: &PatNode, key: &'static str, snippet: &'r Snippet| {
        walk(root, None, &mut |name, run, name_only| {
            found.push(Occurrence {
                name: name.to_string(),
                run,
                name_only,
                key,
                snippet,
            });
        });
    };
    // Every alternative shares the snippet list's order with the compiled alternatives.
    match &compiled.pattern.root {
        PatNode::Any(alternatives) => {
            for (alternative, snippet) in alternatives.iter().zip(&rule.patterns) {
                collect(alternative, "match", snippet);
            }
        }
        root => collect(root, "match", &rule.patterns[0]),
    }
    for (header, snippet) in compiled.loop_patterns.iter().zip(&rule.inside.loop_header) {
        collect(&header.left, "inside.loop", snippet);
        collect(&header.right, "inside.loop", snippet);
    }
    let scopes = [
        (
            &compiled.class_scope.has,
            rule.inside.class.as_ref(),
            "inside.class.has",
        ),
        (
            &compiled.function_scope.has,
            rule.inside.function.as_ref(),
            "inside.function.has",
        ),
    ];
    for (pattern, filter, key) in scopes {
        if let (Some(pattern), Some(snippet)) = (pattern, filter.and_then(|f| f.has.as_ref())) {
            collect(&pattern.root, key, snippet);
        }
    }
    found
}

fn warning(rule: &Rule, name: &str, reason: String, at: &Occurrence<'_>) -> RuleError {
    let sigil = if at.run { "$$$" } else { "$" };
    let span = at
        .snippet
        .text
        .find(&format!("{sigil}{name}"))
        .map_or(at.snippet.span.clone(), |i| {
            at.snippet.file_range(i..i + sigil.len() + name.len())
        });
    RuleError::new(
        RuleErrorKind::BindingsDisagree {
            name: name.to_string(),
            reason,
        },
        &rule.origin.file,
        span,
    )
}

/// Calls `f(name, is_run, name_only)` for each named metavariable under `node`, whose parent
/// is `parent` (its kind and the field the node stands in).
fn walk(
    node: &PatNode,
    parent: Option<(&str, Option<&str>)>,
    f: &mut impl FnMut(&str, bool, bool),
) {
    let name_only = matches!(
        parent,
        Some(("attribute", Some("attribute")))
            | Some(("function_definition" | "class_definition", Some("name")))
            | Some(("keyword_argument", Some("name")))
    );
    match node {
        PatNode::Var(Some(name)) => f(name, false, name_only),
        PatNode::Multi(Some(name)) => f(name, true, name_only),
        PatNode::Var(None) | PatNode::Multi(None) => {}
        PatNode::Any(parts) | PatNode::Seq(parts) => {
            for p in parts {
                walk(p, None, f);
            }
        }
        PatNode::Node(n) => {
            for (field, child) in &n.children {
                walk(child, Some((n.kind.as_str(), field.as_deref())), f);
            }
        }
    }
}
