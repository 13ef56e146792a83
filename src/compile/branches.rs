//! `match` alternatives that carry their own action (`{any: [{match: P, action: A}, ...]}`):
//! each action checked against its own alternative — what that one binds, what it can edit —
//! and the patch already in place recognised in any alternative's output shape.

use super::Applied;
use crate::actions::{self, AppliedShape, Needs};
use crate::pattern::{PatNode, Pattern};
use crate::rules::error::{RuleError, RuleErrorKind};
use crate::rules::model::{Action, Rule, Snippet};

/// Each alternative compiled alone, when any carries its own action (empty otherwise: then the
/// rule's one action serves the whole pattern). Only called once `match` compiled as a whole.
pub(super) fn branch_patterns(rule: &Rule) -> Vec<Pattern> {
    if rule.branch_actions.is_empty() {
        return Vec::new();
    }
    rule.patterns
        .iter()
        .filter_map(|p| Pattern::compile(&p.text).ok())
        .map(|mut p| {
            // Found again at a site, each must match exactly as it did within the whole.
            if rule.ordered {
                p.keep_keyword_order();
            }
            p
        })
        .collect()
}

/// Each action with the pattern it acts on and where that pattern is written: the rule's
/// action and whole pattern, or each alternative's.
pub(super) fn acting<'r>(
    rule: &'r Rule,
    pattern: &'r Pattern,
    branches: &'r [Pattern],
) -> Vec<(&'r Action, &'r Pattern, &'r Snippet)> {
    if branches.is_empty() {
        return vec![(&rule.action, pattern, &rule.patterns[0])];
    }
    branches
        .iter()
        .enumerate()
        .map(|(i, p)| (rule.action_of(i), p, &rule.patterns[i]))
        .collect()
}

/// An action whose pattern matches what it cannot work on: a `def` action on something else,
/// an argument action on a pattern holding no call.
pub(super) fn check_targets(
    rule: &Rule,
    pattern: &Pattern,
    branches: &[Pattern],
) -> Result<(), RuleError> {
    for (action, p, snippet) in acting(rule, pattern, branches) {
        let needs = actions::unit(action).facts().needs;
        let fits = match needs {
            Needs::Function => p.root.kind() == Some("function_definition"),
            Needs::Call => p.has_call(),
            _ => true,
        };
        if !fits {
            return Err(wrong_target(rule, action, needs, snippet));
        }
        // `replace: {of: $X}` rewrites what one capture bound: a name standing twice in the
        // pattern binds two places, of which it would rewrite one.
        if let Some(of) = action.args.field("of").and_then(|o| o.snippet()) {
            let name = of.text.trim_start_matches('$');
            let twice = crate::pattern::meta::template_metavars(&snippet.text)
                .map(|used| used.iter().filter(|(n, _)| n == name).count() > 1)
                .unwrap_or(false);
            if twice {
                return Err(RuleError::new(
                    RuleErrorKind::InvalidValue {
                        key: "replace".into(),
                        reason: format!(
                            "`{}` stands twice in `match`: `of` rewrites what one capture bound, and the other would stay",
                            of.text
                        ),
                    },
                    &rule.origin.file,
                    of.span.clone(),
                ));
            }
        }
    }
    Ok(())
}

/// The error of an action whose pattern matches what it cannot work on.
fn wrong_target(rule: &Rule, action: &Action, needs: Needs, at: &Snippet) -> RuleError {
    let action = action.name().to_string();
    let (kind, help) = match needs {
        Needs::Function => (
            RuleErrorKind::ActionNeedsFunction { action },
            "match a function, e.g. `def __init__($$$P): $$$B`",
        ),
        _ => (
            RuleErrorKind::ActionNeedsCall { action },
            "match a call, e.g. `$OUT = $F($$$ARGS)` or `$F($$$ARGS)`",
        ),
    };
    RuleError::new(kind, &rule.origin.file, at.span.clone()).with_help(help)
}

/// How the patch already in place shows: the shape each action leaves where its pattern
/// matched, any of them (none where one action leaves no readable shape: a site it patched
/// could not be told from drift). Whether that shape is a bare capture comes with it.
pub(super) fn applied(
    rule: &Rule,
    pattern: &Pattern,
    branches: &[Pattern],
) -> (Option<Applied>, bool) {
    let shapes: Vec<AppliedShape> = acting(rule, pattern, branches)
        .into_iter()
        .map(|(action, _, snippet)| {
            actions::unit(action).applied_shape(&action.args, &snippet.text)
        })
        .collect();
    let bare = |p: &Pattern| matches!(p.root, PatNode::Var(_) | PatNode::Multi(_));
    let scoped = rule.inside.class.is_some() || rule.inside.function.is_some();
    if shapes.iter().all(|s| matches!(s, AppliedShape::Absent)) {
        return (scoped.then_some(Applied::Absence), false);
    }
    let mut texts = Vec::new();
    for shape in &shapes {
        match shape {
            AppliedShape::Code(text) => texts.push(text.as_str()),
            _ => return (None, false),
        }
    }
    // A shape that does not read as a pattern recognises nothing; that is no error.
    let Ok(each) = texts
        .iter()
        .map(|t| Pattern::compile(t))
        .collect::<Result<Vec<_>, _>>()
    else {
        return (None, false);
    };
    // A bare capture matches anything, and a shape with no literal of its own (`$F($$$A)`)
    // nearly anything: either would call every file patched, masking drift.
    if each
        .iter()
        .any(|p| bare(p) || p.literals.iter().all(|l| l.is_empty()))
    {
        return (None, true);
    }
    let Ok(shape) = Pattern::compile_any(&texts) else {
        return (None, false);
    };
    (
        (shape.root != pattern.root).then_some(Applied::Shape(shape)),
        false,
    )
}

/// Every template of every action the rule can take.
pub(super) fn all_templates(rule: &Rule) -> Vec<&Snippet> {
    (rule.actions().into_iter())
        .flat_map(|a| actions::unit(a).templates(&a.args))
        .collect()
}
