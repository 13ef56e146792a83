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

mod checks;
mod text;

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
        _: &mut Signatures,
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
        let call = forwarding_call(&name, &params, def)?;
        let body = def.child_by_field_name("body").ok_or_else(|| {
            ActionFailure::at(def.byte_range(), "here", "the function has no body".into())
        })?;
        let kept = kept_statements(body);
        if checks::is_forwarder(body, kept, &call, site.source) {
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
        checks::name_is_free(&name, site.root, def, site.source)?;
        let anchor = anchor(args, &place, site)?;
        let decorators: Vec<String> = args
            .field("decorators")
            .map(|d| {
                d.snippets()
                    .iter()
                    .map(|s| substitute(&s.text, site.bindings, site.source, ""))
                    .collect()
            })
            .unwrap_or_default();
        let generated = text::outlined_def(def, &name, &decorators, site.source);
        let end = after_trailing_comment(site.source, anchor.end_byte());
        // The docstring stays with the function callers see; everything else moves.
        let forward = match kept {
            Some(doc) => Edit {
                range: doc.end_byte()..body.end_byte(),
                text: format!("\n{}return {call}", node_indent(site.source, doc)),
            },
            None => Edit {
                range: body.start_byte()..body.end_byte(),
                text: format!("return {call}"),
            },
        };
        let outline = Edit {
            range: end..end,
            text: format!("\n\n\n{generated}"),
        };
        Ok(vec![forward, outline])
    }
}

/// The module-level statement the outline follows: the one `after` names, else the one
/// holding the function; never one before the function (the outline reads its names).
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
    Ok(anchor)
}

/// The docstring the forwarding function keeps, if the body starts with one.
fn kept_statements(body: Node<'_>) -> Option<Node<'_>> {
    let first = *significant_children(body).first()?;
    let is_doc = first.kind() == "expression_statement"
        && first.named_child(0).is_some_and(|c| c.kind() == "string");
    (is_doc && significant_children(body).len() > 1).then_some(first)
}

/// The call forwarding `params` to `name`, checked to bind each parameter to the argument of
/// its own name.
fn forwarding_call(name: &str, params: &[Param], def: Node<'_>) -> Result<String, ActionFailure> {
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
