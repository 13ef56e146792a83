//! `edit_string`: a regex replacement on a string literal's *value* — a docstring's line, a
//! message, an attention-implementation name — written back in the literal's own prefix and
//! quotes (`python::literal`), as ast-grep's `transform.replace` edits a capture's text. The
//! regex sees what Python sees (escapes decoded), so `\n` in the source is a line break to it.

use regex::Regex;
use tree_sitter::Node;

use super::{ActionFailure, ActionUnit, Facts, Needs, Signatures, Site, register_action};
use crate::edit::Edit;
use crate::pattern::matcher::Capture;
use crate::rules::action::{ActionSpec, Arg, ArgReader};
use crate::rules::error::RuleError;
use crate::rules::model::{Snippet, Spanned};

/// `edit_string: {regex: RE, by: TEXT, of: $S}`: replaces every match of `RE` in the value of
/// the string `$S` binds (or the match itself) by `TEXT` (`$1`, `${name}`: the regex's groups).
#[derive(Debug)]
pub struct EditString;
register_action!(EditString);

impl ActionSpec for EditString {
    fn name(&self) -> &'static str {
        "edit_string"
    }

    fn read(&self, args: &ArgReader<'_>) -> Result<Arg, RuleError> {
        let within = "`edit_string`";
        args.fields(&["regex", "by", "of"], within, "a mapping {regex, by, of}")?;
        let regex = args.require("regex", within)?.regex()?;
        let by = args.require("by", within)?;
        let compiled = Regex::new(regex.text()).expect("checked as it was read");
        if let Some(group) = unknown_group(&compiled, &by.string()?.value) {
            return Err(by.invalid(format!(
                "`{group}` names no group of the regex (write `$$` for a `$`)"
            )));
        }
        let mut fields = vec![
            (Spanned::new("regex".into(), 0..0), regex),
            (Spanned::new("by".into(), 0..0), by.text()?),
        ];
        if let Some(of) = args.field("of") {
            let name = of.string()?;
            let bare = name.value.strip_prefix('$').unwrap_or("");
            if !crate::rules::convert::is_metavar_name(bare) {
                return Err(of.invalid("`of` names one metavariable, such as `$DOC`"));
            }
            fields.push((Spanned::new("of".into(), 0..0), of.text()?));
        }
        Ok(Arg::Fields(fields))
    }
}

impl ActionUnit for EditString {
    fn facts(&self) -> Facts {
        Facts {
            needs: Needs::Anything,
            edits_within_match: true,
        }
    }

    /// `by` is a regex replacement (`$1` is a group), not a template.
    fn templates<'a>(&self, _: &'a Arg) -> Vec<&'a Snippet> {
        Vec::new()
    }

    fn metavar_args<'a>(&self, args: &'a Arg) -> Vec<&'a Snippet> {
        args.field("of").map(Arg::snippets).unwrap_or_default()
    }

    fn explain(&self, args: &Arg) -> String {
        let field = |k: &str| args.field(k).map_or("", Arg::text);
        let of = args
            .field("of")
            .map_or("the match".to_string(), |o| format!("`{}`", o.text()));
        format!(
            "in the value of the string {of}, replace /{}/ by `{}`",
            field("regex"),
            field("by")
        )
    }

    fn plan(
        &self,
        args: &Arg,
        site: &Site<'_, '_>,
        _: &mut Signatures,
    ) -> Result<Vec<Edit>, ActionFailure> {
        let field = |k: &str| args.field(k).map_or("", Arg::text);
        let node = target(site, args.field("of").map(Arg::text))?;
        let text = &site.source[node.byte_range()];
        let literal = crate::python::literal::read(text)
            .map_err(|why| ActionFailure::at(node.byte_range(), "this string", why))?;
        let regex = Regex::new(field("regex")).expect("checked when the rule was read");
        let value = regex.replace_all(&literal.value, field("by"));
        if value == literal.value {
            return Ok(Vec::new());
        }
        let written = literal
            .write(&value)
            .map_err(|why| ActionFailure::at(node.byte_range(), "this string", why))?;
        Ok(site.changing(Some(Edit {
            range: node.byte_range(),
            text: written,
        })))
    }
}

/// The string literal the action edits: what `of` binds, or the match; an expression
/// statement holding only a string (a docstring) stands for that string.
fn target<'t>(site: &Site<'_, 't>, of: Option<&str>) -> Result<Node<'t>, ActionFailure> {
    let node = match of {
        None => site.node,
        Some(name) => match site.bindings.get(name.trim_start_matches('$')) {
            Some(Capture::One(node)) => *node,
            _ => {
                return Err(ActionFailure::at(
                    site.range(),
                    "this match",
                    format!("`{name}` binds no single node here"),
                ));
            }
        },
    };
    let node = if node.kind() == "expression_statement" && node.named_child_count() == 1 {
        node.named_child(0).unwrap_or(node)
    } else {
        node
    };
    if node
        .parent()
        .is_some_and(|p| p.kind() == "concatenated_string")
    {
        return Err(ActionFailure::at(
            node.byte_range(),
            "one of several",
            "this literal is one of several written side by side, whose value is their join: rewrite them together".into(),
        ));
    }
    if node.kind() != "string" {
        return Err(ActionFailure::at(
            node.byte_range(),
            "not a string",
            format!(
                "`edit_string` edits one string literal; this is {}",
                crate::python::describe_kind(node.kind())
            ),
        ));
    }
    Ok(node)
}

/// The first group reference of replacement `by` (`$1`, `$name`, `${name}`) that `regex` does
/// not have: the `regex` crate expands it to nothing, silently.
fn unknown_group(regex: &Regex, by: &str) -> Option<String> {
    let names: Vec<&str> = regex.capture_names().flatten().collect();
    let mut rest = by;
    while let Some(at) = rest.find('$') {
        rest = &rest[at + 1..];
        if let Some(after) = rest.strip_prefix('$') {
            rest = after;
            continue;
        }
        let (name, tail) = match rest.strip_prefix('{') {
            Some(braced) => match braced.find('}') {
                Some(end) => (&braced[..end], &braced[end + 1..]),
                None => return None,
            },
            None => {
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                (&rest[..end], &rest[end..])
            }
        };
        rest = tail;
        if name.is_empty() {
            continue;
        }
        let known = match name.parse::<usize>() {
            Ok(n) => n < regex.captures_len(),
            Err(_) => names.contains(&name),
        };
        if !known {
            return Some(format!("${name}"));
        }
    }
    None
}
