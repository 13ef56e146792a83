//! `outline`: lifts a function's body into a new module-level function (for a compiler to see
//! a plain function, as patchers do before `torch.compile`) and leaves the original as one
//! call forwarding every parameter by its kind.
//!
//! ```yaml
//! match: "def forward($$$P): $$$B"
//! inside: {class: LlamaAttention}
//! action:
//!   outline: {name: "${class}_forward", decorators: ["torch.compile(dynamic=True)"]}
//! ```
//!
//! The new function has the original's parameters exactly as written (annotations, defaults,
//! `/`, `*`); the original keeps its decorators and docstring. The forwarding call is built
//! from the signature, never from text: positional parameters (and those before `*args`) by
//! position, `*args` and `**kwargs` spread, keyword-only ones by keyword — and checked to bind
//! each parameter to the argument of its own name. What cannot be forwarded exactly is refused.

use tree_sitter::Node;

use super::signature::{Param, ParamKind, read_params};
use super::{
    ActionFailure, ActionUnit, Facts, Needs, Signatures, Site, after_trailing_comment,
    register_action,
};
use crate::edit::Edit;
use crate::pattern::template::substitute;
use crate::python::{node_indent, significant_children};
use crate::rules::action::{ActionSpec, Arg, ArgReader};
use crate::rules::error::RuleError;
use crate::rules::model::Spanned;

pub(super) mod checks;
pub(super) mod text;

/// `outline: {name, decorators, after}` (or `outline: NAME`, or `outline: true`).
#[derive(Debug)]
pub struct Outline;
register_action!(Outline);

const EXPECTED: &str = "true, a name template, or {name, decorators, after}";

impl ActionSpec for Outline {
    fn name(&self) -> &'static str {
        "outline"
    }

    fn read(&self, args: &ArgReader<'_>) -> Result<Arg, RuleError> {
        let field = |key: &str, value: Arg| (Spanned::new(key.to_string(), 0..0), value);
        if args.is_string() {
            let name = args.text()?;
            text::check_name_template(name.text()).map_err(|e| args.invalid(e))?;
            return Ok(Arg::Fields(vec![field("name", name)]));
        }
        if !args.is_mapping() {
            return match args.flag(EXPECTED)? {
                true => Ok(Arg::Fields(Vec::new())),
                false => Err(args.invalid("write the rule without an action to check a match")),
            };
        }
        args.fields(&["name", "decorators", "after"], "`outline`", EXPECTED)?;
        let mut fields = Vec::new();
        if let Some(name) = args.field("name") {
            let text = name.text()?;
            text::check_name_template(text.text()).map_err(|e| name.invalid(e))?;
            fields.push(field("name", text));
        }
        if let Some(list) = args.field("decorators") {
            let mut items = Vec::new();
            for (item, reader) in list.items()? {
                if item.value.trim_start().starts_with('@') {
                    return Err(reader.invalid("write each decorator without its `@`"));
                }
                items.push(reader.text()?);
            }
            fields.push(field("decorators", Arg::List(items)));
        }
        if let Some(after) = args.field("after") {
            let name = after.text()?;
            if !text::is_identifier(name.text()) {
                return Err(after.invalid("a module-level name: a class or function to follow"));
            }
            fields.push(field("after", name));
        }
        Ok(Arg::Fields(fields))
    }
}

impl ActionUnit for Outline {
    fn facts(&self) -> Facts {
        Facts {
            needs: Needs::Function,
            edits_within_match: false,
        }
    }

    /// Only the decorators are code; the name is a template of names, checked when read.
    fn templates<'a>(&self, args: &'a Arg) -> Vec<&'a crate::rules::model::Snippet> {
        args.field("decorators")
            .map_or_else(Vec::new, Arg::snippets)
    }

    fn explain(&self, args: &Arg) -> String {
        let name = args.field("name").map_or(text::DEFAULT_NAME, Arg::text);
        let mut out = format!("outline the function's body into `def {name}(...)`");
        let decorators: Vec<&str> = args
            .field("decorators")
            .map(|d| d.snippets().iter().map(|s| s.text.as_str()).collect())
            .unwrap_or_default();
        if !decorators.is_empty() {
            out.push_str(&format!(" decorated @{}", decorators.join(", @")));
        }
        out.push_str(" and forward every parameter to it");
        out
    }

    fn plan(
        &self,
        args: &Arg,
        site: &Site<'_, '_>,
        signatures: &mut Signatures,
    ) -> Result<Vec<Edit>, ActionFailure> {
        let def = site.node;
        if def.kind() != "function_definition" {
            return Err(ActionFailure::at(
                def.byte_range(),
                "not a function",
                "`outline` needs a function pattern such as `def forward($$$P): $$$B`".into(),
            ));
        }
        let place = checks::Place::of(def, site.source)?;
        let template = args.field("name").map_or(text::DEFAULT_NAME, Arg::text);
        let name = text::expand_name(template, &place, site)?;
        let params = def
            .child_by_field_name("parameters")
            .map_or_else(Vec::new, |p| read_params(p, site.source));
        let body = def.child_by_field_name("body").ok_or_else(|| {
            ActionFailure::at(def.byte_range(), "here", "the function has no body".into())
        })?;
        let generator = checks::is_generator(body);
        let call = forwarding_call(&name, &params, def)?;
        // A generator's forwarder stays a generator (decorators such as `contextmanager` or
        // `torch.no_grad` tell them apart), delegating `send`/`throw` and its return value.
        let forward = match generator {
            true => format!("return (yield from {call})"),
            false => format!("return {call}"),
        };
        let kept = kept_statements(body);
        if checks::is_forwarder(body, kept, &forward, site.source) {
            // Already outlined: the body is the call; the function it calls must be there.
            return match checks::defines(site.root, &name, site.source) {
                true => Ok(Vec::new()),
                false => Err(ActionFailure::at(
                    body.byte_range(),
                    "forwards to it",
                    format!("the body forwards to `{name}`, which the module does not define"),
                )),
            };
        }
        if checks::forwards_elsewhere(def, site.root, site.source) {
            // The function is itself an outline another function forwards to.
            return Ok(Vec::new());
        }
        checks::body_can_move(def, body, &place, site.source)?;
        checks::signature_can_move(def, site.source)?;
        name_is_usable(&name, &place, body, site, signatures)?;
        let decorators: Vec<String> = args
            .field("decorators")
            .map(|d| {
                d.snippets()
                    .iter()
                    .map(|s| substitute(&s.text, site.bindings, site.source, ""))
                    .collect()
            })
            .unwrap_or_default();
        let generated = text::outlined_def(def, &name, &params, &decorators, site.source);
        let outline = placement(args, &place, site, generated)?;
        signatures.introduced.insert(name.clone(), def.byte_range());
        // The docstring stays with the function callers see; everything else moves.
        let forward = match kept {
            Some(doc) => Edit {
                range: doc.end_byte()..body.end_byte(),
                text: format!("\n{}{forward}", node_indent(site.source, doc)),
            },
            None => Edit {
                range: body.start_byte()..body.end_byte(),
                text: forward,
            },
        };
        Ok(vec![forward, outline])
    }
}

/// Refuses a name the forwarding call cannot reach: private in a class (mangled there), used
/// in the module or by a parameter, or taken by another outline planned in this file.
fn name_is_usable(
    name: &str,
    place: &checks::Place<'_>,
    body: Node<'_>,
    site: &Site<'_, '_>,
    signatures: &Signatures,
) -> Result<(), ActionFailure> {
    let def = site.node;
    if place.class.is_some() && checks::is_private(name) {
        return Err(ActionFailure::at(
            def.byte_range(),
            "this method",
            format!(
                "the outline's name `{name}` is private: inside the class the forwarding call would be mangled to `_Class{name}` and fail with a NameError"
            ),
        )
        .help("give `outline` a `name` that does not start with two underscores"));
    }
    checks::name_is_free(name, site.root, body, site.source)?;
    match signatures.introduced.get(name) {
        Some(taken) => Err(ActionFailure::at(
            def.byte_range(),
            "this function",
            format!(
                "`{name}` is the outline of another function here too (bytes {}..{}): two module-level functions of one name, the second replacing the first",
                taken.start, taken.end
            ),
        )
        .help("make the name distinct per function, e.g. with `${def}` and a capture")),
        None => Ok(()),
    }
}

/// The edit that writes the outline: after the statement `after` names, else before the
/// statement holding the function (and the comments over it) — whatever runs while that
/// statement runs (a class decorator, a metaclass, a base's `__init_subclass__`) may already
/// call the function.
fn placement(
    args: &Arg,
    place: &checks::Place<'_>,
    site: &Site<'_, '_>,
    generated: String,
) -> Result<Edit, ActionFailure> {
    if args.field("after").is_some() {
        let anchor = anchor(args, place, site)?;
        let end = after_trailing_comment(site.source, anchor.end_byte());
        return Ok(Edit {
            range: end..end,
            text: format!("\n\n\n{generated}"),
        });
    }
    let at = text::before_leading_comments(site.source, place.top.start_byte());
    Ok(Edit {
        range: at..at,
        text: format!("{generated}\n\n\n"),
    })
}

/// The module-level statement the outline follows when `after` names one: never one before
/// the function, and nothing between the two that runs code at import (which might call the
/// function before its outline exists).
fn anchor<'t>(
    args: &Arg,
    place: &checks::Place<'t>,
    site: &Site<'_, 't>,
) -> Result<Node<'t>, ActionFailure> {
    let Some(after) = args.field("after") else {
        return Ok(place.top);
    };
    let named = after.text();
    let anchor = checks::top_level_binding(site.root, named, site.source).ok_or_else(|| {
        ActionFailure::at(
            place.top.byte_range(),
            "here",
            format!("`after: {named}` names nothing defined at module level"),
        )
    })?;
    if anchor.start_byte() < place.top.start_byte() {
        return Err(ActionFailure::at(
            anchor.byte_range(),
            "defined here",
            format!("`after: {named}` stands before the function: the outline must follow it"),
        ));
    }
    checks::nothing_runs_between(place.top, anchor, named)?;
    Ok(anchor)
}

/// The docstring the forwarding function keeps (`__doc__` is the callers'), if the body
/// starts with one — also when it is the whole body.
fn kept_statements(body: Node<'_>) -> Option<Node<'_>> {
    let first = *significant_children(body).first()?;
    let is_doc = first.kind() == "expression_statement"
        && first.named_child(0).is_some_and(|c| c.kind() == "string");
    is_doc.then_some(first)
}

/// The call forwarding `params` to `name`, checked to bind each parameter to the argument of
/// its own name.
pub(super) fn forwarding_call(
    name: &str,
    params: &[Param],
    def: Node<'_>,
) -> Result<String, ActionFailure> {
    let mut args = Vec::new();
    for p in params {
        if !text::is_identifier(&p.name) {
            return Err(ActionFailure::at(
                def.child_by_field_name("parameters")
                    .map_or(def.byte_range(), |n| n.byte_range()),
                "these parameters",
                "a parameter here is not a plain name: the forwarding call cannot be built".into(),
            ));
        }
        args.push(match p.kind {
            ParamKind::PositionalOnly | ParamKind::PositionalOrKeyword => p.name.clone(),
            ParamKind::VarPositional => format!("*{}", p.name),
            ParamKind::KeywordOnly => format!("{0}={0}", p.name),
            ParamKind::VarKeyword => format!("**{}", p.name),
        });
    }
    checks::binds_by_name(params, &args)
        .map_err(|why| ActionFailure::at(def.byte_range(), "this function", why))?;
    Ok(format!("{name}({})", args.join(", ")))
}
