//! The text `outline` writes: the new function's name, from a template of captures, and the
//! function itself, dedented to the module's level.

use tree_sitter::Node;

use super::super::signature::{Param, ParamKind};
use super::super::{ActionFailure, Site};
use super::checks::Place;

/// The name an outline gets when the rule gives none: for a method, its class's name and its
/// own (`LlamaAttention_forward`); for a function, its own name and `_outlined`.
pub(in crate::actions) const DEFAULT_NAME: &str = "${class}_${def}";

/// Whether `name` is a Python identifier (ASCII, as rule files write them).
pub(in crate::actions) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The pieces of a name template: literal text and `${…}`/`$NAME` references.
fn pieces(template: &str) -> Result<Vec<Piece<'_>>, String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(at) = rest.find('$') {
        if at > 0 {
            out.push(Piece::Text(&rest[..at]));
        }
        let after = &rest[at + 1..];
        let (name, tail) = if let Some(braced) = after.strip_prefix('{') {
            let close = braced
                .find('}')
                .ok_or_else(|| format!("`${{` in `{template}` is never closed"))?;
            (&braced[..close], &braced[close + 1..])
        } else {
            let len = after
                .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
                .unwrap_or(after.len());
            (&after[..len], &after[len..])
        };
        let known = matches!(name, "class" | "def")
            || is_identifier(name) && name.chars().all(|c| !c.is_ascii_lowercase());
        if !known {
            return Err(format!(
                "`${name}` in `{template}` is neither `${{class}}`, `${{def}}` nor a metavariable (`$NAME`, `${{NAME}}`)"
            ));
        }
        out.push(Piece::Ref(name));
        rest = tail;
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    Ok(out)
}

enum Piece<'a> {
    Text(&'a str),
    Ref(&'a str),
}

/// Checks a name template when the rule is read: its references are known and it makes an
/// identifier.
pub(in crate::actions) fn check_name_template(template: &str) -> Result<(), String> {
    let filled: String = pieces(template)?
        .iter()
        .map(|p| match p {
            Piece::Text(t) => *t,
            Piece::Ref(_) => "x",
        })
        .collect();
    if is_identifier(&filled) {
        Ok(())
    } else {
        Err(format!("`{template}` does not make a Python name"))
    }
}

/// The outline's name at `site`: `${class}` and `${def}` are the class's and the function's
/// names, `$NAME`/`${NAME}` a capture's text, which must be a name.
pub(in crate::actions) fn expand_name(
    template: &str,
    place: &Place<'_>,
    site: &Site<'_, '_>,
) -> Result<String, ActionFailure> {
    let def = site.node;
    let source = site.source;
    let name_of = |n: Node<'_>| {
        n.child_by_field_name("name")
            .map_or("", |i| &source[i.byte_range()])
    };
    let template = match (template, place.class) {
        (DEFAULT_NAME, None) => "${def}_outlined",
        (t, _) => t,
    };
    let fail = |why: String| ActionFailure::at(def.byte_range(), "this function", why);
    let mut out = String::new();
    for piece in pieces(template).map_err(fail)? {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Ref("def") => out.push_str(name_of(def)),
            Piece::Ref("class") => match place.class {
                Some(class) => out.push_str(name_of(class)),
                None => {
                    return Err(fail(
                        "`${class}` names a method's class; this is a module-level function".into(),
                    ));
                }
            },
            Piece::Ref(meta) => {
                let capture = site
                    .bindings
                    .get(meta)
                    .ok_or_else(|| fail(format!("`${meta}` is not bound by the match")))?;
                out.push_str(capture.text(source));
            }
        }
    }
    if is_identifier(&out) {
        Ok(out)
    } else {
        Err(fail(format!(
            "the name `{out}` made from `{template}` is not a Python name"
        )))
    }
}

/// The outlined function: `decorators`, then `def NAME` with the parameters' names and kinds
/// (`/`, `*`, `*args`, `**kwargs`) and the body of `def`, dedented to the module's level
/// (lines inside strings kept as they are). Defaults, annotations and the return annotation
/// stay on the original alone: the forwarder passes every argument, and evaluated a second
/// time at module level they would run side effects twice or read class-level names.
pub(super) fn outlined_def(
    def: Node<'_>,
    name: &str,
    params: &[Param],
    decorators: &[String],
    source: &str,
) -> String {
    let colon = (0..def.child_count())
        .filter_map(|i| def.child(i))
        .find(|c| c.kind() == ":")
        .map_or(def.start_byte(), |c| c.end_byte());
    let indent = crate::python::node_indent(source, def);
    let mut in_string = crate::python::multiline_strings(&[def]);
    let mut out = String::new();
    for d in decorators {
        out.push_str(&format!("@{d}\n"));
    }
    out.push_str(&format!("def {name}({}):", parameter_list(params)));
    let mut at = colon;
    for (i, line) in source[colon..def.end_byte()]
        .split_inclusive('\n')
        .enumerate()
    {
        let inside = in_string.contains(at);
        if i == 0 || inside {
            out.push_str(line);
        } else if let Some(rest) = line.strip_prefix(indent) {
            out.push_str(rest);
        } else {
            let ws = line.len() - line.trim_start_matches([' ', '\t']).len();
            out.push_str(&line[ws.min(indent.len())..]);
        }
        at += line.len();
    }
    out
}

/// `params` as a parameter list of bare names, each of its own kind.
fn parameter_list(params: &[Param]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let star = params.iter().any(|p| p.kind == ParamKind::VarPositional);
    for (i, p) in params.iter().enumerate() {
        if p.kind == ParamKind::KeywordOnly
            && !star
            && params[..i].iter().all(|q| q.kind != ParamKind::KeywordOnly)
        {
            parts.push("*".into());
        }
        parts.push(match p.kind {
            ParamKind::VarPositional => format!("*{}", p.name),
            ParamKind::VarKeyword => format!("**{}", p.name),
            _ => p.name.clone(),
        });
        let next = params.get(i + 1).map(|q| q.kind);
        if p.kind == ParamKind::PositionalOnly && next != Some(ParamKind::PositionalOnly) {
            parts.push("/".into());
        }
    }
    parts.join(", ")
}

/// Where text inserted before the module-level statement at `start` goes: above the comment
/// lines directly over it (they describe that statement).
pub(super) fn before_leading_comments(source: &str, start: usize) -> usize {
    // A module-level statement starts its line; lines ending in a lone `\r` are not walked.
    let mut at = start;
    while at > 0 && source[..at].ends_with('\n') {
        let line_start = source[..at - 1].rfind('\n').map_or(0, |i| i + 1);
        if !source[line_start..at].starts_with('#') {
            break;
        }
        at = line_start;
    }
    at
}
