//! Actions on the matched function: `append_body`, `prepend_body` and `add_decorator`.

use tree_sitter::Node;

use super::{
    ActionFailure, ActionUnit, Facts, Needs, Signatures, Site, after_trailing_comment, normalize,
    register_action, same_code, statement_count,
};
use crate::edit::Edit;
use crate::pattern::template::substitute;
use crate::python::{node_indent, significant_children};
use crate::rules::action::{ActionSpec, Arg, ArgReader};
use crate::rules::error::RuleError;
use crate::rules::model::Spanned;

/// Body and decorator actions edit around the function they match.
const ON_FUNCTION: Facts = Facts {
    needs: Needs::Function,
    edits_within_match: false,
};

/// `append_body: "stmts"`: appends statements to the body.
#[derive(Debug)]
pub struct AppendBody;
register_action!(AppendBody);

impl ActionSpec for AppendBody {
    fn name(&self) -> &'static str {
        "append_body"
    }
}

impl ActionUnit for AppendBody {
    fn facts(&self) -> Facts {
        ON_FUNCTION
    }

    fn plan(
        &self,
        args: &Arg,
        site: &Site<'_, '_>,
        _: &mut Signatures,
    ) -> Result<Vec<Edit>, ActionFailure> {
        let Some(body) = Body::of(site, args.text())? else {
            return Ok(Vec::new());
        };
        let n = body.count;
        let statements = &body.statements;
        // The code already standing last counts as already applied.
        let present = &statements[statements.len().saturating_sub(n)..];
        Ok(site.changing(body.insert(site.source, present, statements.len() - 1, true)))
    }
}

/// `prepend_body: "stmts"` or `{code: "stmts", after_super: true}`: inserts at the start of
/// the body, after a docstring, or after the `super().__init__(...)` call.
#[derive(Debug)]
pub struct PrependBody;
register_action!(PrependBody);

impl ActionSpec for PrependBody {
    fn name(&self) -> &'static str {
        "prepend_body"
    }

    fn read(&self, args: &ArgReader<'_>) -> Result<Arg, RuleError> {
        if args.is_string() {
            return args.text();
        }
        if !args.is_mapping() {
            return Err(args.wrong_type("code, or {code, after_super}"));
        }
        let within = "`prepend_body`";
        args.fields(
            &["code", "after_super"],
            within,
            "code, or {code, after_super}",
        )?;
        let code = args.require("code", within)?.text()?;
        let after_super = match args.field("after_super") {
            Some(flag) => flag.flag("true or false")?,
            None => false,
        };
        if !after_super {
            return Ok(code);
        }
        Ok(Arg::Fields(vec![
            (Spanned::new("code".into(), 0..0), code),
            (Spanned::new("after_super".into(), 0..0), Arg::Flag(true)),
        ]))
    }
}

impl ActionUnit for PrependBody {
    fn facts(&self) -> Facts {
        ON_FUNCTION
    }

    fn plan(
        &self,
        args: &Arg,
        site: &Site<'_, '_>,
        _: &mut Signatures,
    ) -> Result<Vec<Edit>, ActionFailure> {
        let (code, after_super) = match args.field("code") {
            Some(code) => (
                code.text(),
                args.field("after_super").is_some_and(Arg::flag),
            ),
            None => (args.text(), false),
        };
        let Some(body) = Body::of(site, code)? else {
            return Ok(Vec::new());
        };
        let statements = &body.statements;
        let (anchor, after_anchor) = if after_super {
            let at = statements
                .iter()
                .position(|s| is_super_init(*s, site.source))
                .ok_or_else(|| {
                    let name = body.function.child_by_field_name("name");
                    ActionFailure::at(
                        name.map_or(body.function.byte_range(), |n| n.byte_range()),
                        "this function",
                        "`after_super` is set but the body calls no `super().__init__(...)`".into(),
                    )
                })?;
            (at, true)
        } else {
            (0, is_docstring(statements[0]))
        };
        let n = body.count;
        let present = if after_anchor {
            &statements[(anchor + 1).min(statements.len())..(anchor + 1 + n).min(statements.len())]
        } else {
            &statements[..n.min(statements.len())]
        };
        Ok(site.changing(body.insert(site.source, present, anchor, after_anchor)))
    }
}

/// The body of the matched function and the code to insert into it.
struct Body<'t> {
    function: Node<'t>,
    statements: Vec<Node<'t>>,
    indent: String,
    code: String,
    /// How many statements `code` holds.
    count: usize,
}

impl<'t> Body<'t> {
    /// The matched function's body with `template` filled in at its indentation; `None` for a
    /// body without statements.
    fn of(site: &Site<'_, 't>, template: &str) -> Result<Option<Body<'t>>, ActionFailure> {
        let function = function_of(site)?;
        let body = function.child_by_field_name("body").ok_or_else(|| {
            ActionFailure::at(
                function.byte_range(),
                "here",
                "the function has no body".into(),
            )
        })?;
        let statements = significant_children(body);
        let Some(first) = statements.first() else {
            return Ok(None);
        };
        let indent = node_indent(site.source, *first).to_string();
        let mut code = substitute(template, site.bindings, site.source, &indent);
        // A block scalar's final line break (`append_body: |`) would add a blank line.
        code.truncate(code.trim_end_matches(['\n', '\r']).len());
        let count = statement_count(&code);
        Ok(Some(Body {
            function,
            statements,
            indent,
            code,
            count,
        }))
    }

    /// The insertion after (or before) statement `anchor`; none where `present` already is
    /// the code.
    fn insert(
        &self,
        source: &str,
        present: &[Node<'_>],
        anchor: usize,
        after: bool,
    ) -> Option<Edit> {
        let (indent, code) = (&self.indent, &self.code);
        if same_code(present, source, code) {
            None
        } else if after {
            let end = after_trailing_comment(source, self.statements[anchor].end_byte());
            Some(Edit {
                range: end..end,
                text: format!("\n{indent}{code}"),
            })
        } else {
            let start = self.statements[0].start_byte();
            Some(Edit {
                range: start..start,
                text: format!("{code}\n{indent}"),
            })
        }
    }
}

/// `add_decorator: "expr"`: adds `@expr` above the function.
#[derive(Debug)]
pub struct AddDecorator;
register_action!(AddDecorator);

impl ActionSpec for AddDecorator {
    fn name(&self) -> &'static str {
        "add_decorator"
    }

    fn read(&self, args: &ArgReader<'_>) -> Result<Arg, RuleError> {
        let code = args.text()?;
        if code.text().trim_start().starts_with('@') {
            return Err(args.invalid("write the decorator without its `@`"));
        }
        Ok(code)
    }
}

impl ActionUnit for AddDecorator {
    fn facts(&self) -> Facts {
        ON_FUNCTION
    }

    fn plan(
        &self,
        args: &Arg,
        site: &Site<'_, '_>,
        _: &mut Signatures,
    ) -> Result<Vec<Edit>, ActionFailure> {
        let function = function_of(site)?;
        let outer = function
            .parent()
            .filter(|p| p.kind() == "decorated_definition")
            .unwrap_or(function);
        let code = substitute(args.text(), site.bindings, site.source, "");
        let present = significant_children(outer)
            .into_iter()
            .filter(|d| d.kind() == "decorator")
            .any(|d| normalize(&site.source[d.byte_range()]) == normalize(&format!("@{code}")));
        if present {
            return Ok(Vec::new());
        }
        // Inserted at the start of the line, as a whole line: an edit that deletes the line
        // of the current first decorator then only touches this insertion, never overlaps it.
        let start = outer.start_byte();
        let indent = node_indent(site.source, outer);
        let line_start = crate::python::node_line_start(outer);
        let edit = if site.source[line_start..start].trim().is_empty() {
            Edit {
                range: line_start..line_start,
                text: format!("{indent}@{code}\n"),
            }
        } else {
            Edit {
                range: start..start,
                text: format!("@{code}\n{indent}"),
            }
        };
        Ok(site.changing(Some(edit)))
    }
}

/// The function a body or decorator action works on: the match itself.
fn function_of<'t>(site: &Site<'_, 't>) -> Result<Node<'t>, ActionFailure> {
    if site.node.kind() == "function_definition" {
        return Ok(site.node);
    }
    Err(ActionFailure::at(
        site.node.byte_range(),
        "not a function",
        "this action needs a function pattern such as `def __init__($$$P): $$$B`".into(),
    ))
}

fn is_docstring(statement: Node<'_>) -> bool {
    statement.kind() == "expression_statement"
        && statement
            .named_child(0)
            .is_some_and(|c| c.kind() == "string")
}

fn is_super_init(statement: Node<'_>, source: &str) -> bool {
    let text = &source[statement.byte_range()];
    statement.kind() == "expression_statement"
        && text.starts_with("super(")
        && text.contains(".__init__(")
}
