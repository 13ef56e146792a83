//! Templates that are not Python, found at authoring time: each template of an action that
//! writes code (`replace`, `prepend_body`, `append_body`) is parsed with its metavariables
//! stood in by plain names, so an unclosed bracket is a lint error at the template, not a
//! refusal at the first `apply`.

use crate::actions;
use crate::rules::error::{RuleError, RuleErrorKind};
use crate::rules::model::Rule;

/// The actions whose templates are code on their own (a statement, an expression, or a
/// fragment such as a keyword argument or a decorator).
const CODE_ACTIONS: &[&str] = &["replace", "prepend_body", "append_body"];

/// `text` with each `$NAME`, `$$$NAME`, `$_` and `${NAME}` stood in by a plain name.
fn stand_in(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = rest[at..].trim_start_matches('$');
        let braced = after.strip_prefix('{');
        let name_from = braced.unwrap_or(after);
        let len = name_from
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(name_from.len());
        out.push_str("_rg_");
        out.push_str(&name_from[..len]);
        let mut consumed = rest.len() - name_from.len() + len;
        if braced.is_some() && name_from[len..].starts_with('}') {
            consumed += 1;
        }
        rest = &rest[consumed..];
    }
    out.push_str(rest);
    out
}

/// Whether `code` reads as Python in one of the places a template can stand: as statements
/// or an expression, as a decorator, or inside a call's parentheses (arguments, keywords).
fn reads_as_python(code: &str) -> bool {
    let clean = |text: &str| !crate::python::parse(text).root_node().has_error();
    let dedented = dedent(code);
    clean(&dedented)
        || dedented.trim_start().starts_with('@')
            && clean(&format!("{dedented}\ndef _rg(): pass\n"))
        || clean(&format!("_rg(\n{dedented}\n)\n"))
}

fn dedent(code: &str) -> String {
    let indent = code
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    code.lines()
        .map(|l| l.get(indent..).unwrap_or(l.trim_start()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// An error for each code template of `rule` that is not Python.
pub fn unparseable(rule: &Rule) -> Vec<RuleError> {
    (rule.actions().into_iter())
        .filter(|action| CODE_ACTIONS.contains(&action.name()))
        .flat_map(|action| {
            let key = action.name().to_string();
            let templates = actions::unit(action).templates(&action.args);
            templates.into_iter().map(move |t| (key.clone(), t))
        })
        .filter(|(_, t)| !reads_as_python(&stand_in(&t.text)))
        .map(|(key, t)| {
            RuleError::new(
                RuleErrorKind::InvalidValue {
                    key,
                    reason: "the template is not Python (with its metavariables stood in by names, it does not parse)".into(),
                },
                &rule.origin.file,
                t.span.clone(),
            )
            .with_help("check its brackets and quotes; `apply` would refuse every site")
        })
        .collect()
}

/// The templates that write a match of the rule's own pattern, where the rule has no `unless`
/// or `not_inside` (a guard may recognise the output only in its context, as a list holding
/// what was added): the rule would edit its own output again, which `apply` refuses as no
/// fixed point — found here, at the template, before any target.
pub(super) fn rematching(rule: &Rule, compiled: &crate::compile::CompiledRule) -> Vec<RuleError> {
    if compiled.unless.is_some() || compiled.not_inside.is_some() {
        return Vec::new();
    }
    (rule.actions().into_iter())
        .flat_map(|a| actions::unit(a).templates(&a.args))
        .filter(|t| crate::compile::writes(&compiled.pattern, &t.text))
        .map(|t| {
            RuleError::new(RuleErrorKind::TemplateRematches, &rule.origin.file, t.span.clone())
                .with_help(
                    "add `unless:` (or `not_inside:`) with the code the template writes, or narrow `match` so it does not find it",
                )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_are_read_with_their_metavariables_stood_in() {
        assert_eq!(stand_in("g($X, $$$A, ${C}_x)"), "g(_rg_X, _rg_A, _rg_C_x)");
        for good in [
            "g($X)",
            "attn_mask=$M",
            "@torch.no_grad()",
            "$X, key=$Y",
            "if $C:\n    $$$B",
            "*$ARGS",
        ] {
            assert!(reads_as_python(&stand_in(good)), "{good}");
        }
        for bad in ["g($X", "f(a=)", "x = [1, 2"] {
            assert!(!reads_as_python(&stand_in(bad)), "{bad}");
        }
    }
}
