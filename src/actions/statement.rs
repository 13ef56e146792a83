//! Actions on the match or the statement holding it: `replace`, `insert_before`,
//! `insert_after` and `delete`.

use std::ops::Range;

use tree_sitter::Node;

use super::kept::{inner_comment_nodes, with_comments_kept};
use super::{
    ActionFailure, ActionUnit, AppliedShape, Facts, Needs, Signatures, Site,
    after_trailing_comment, register_action, same_code, siblings_of, statement_count,
};
use crate::edit::Edit;
use crate::pattern::template::substitute;
use crate::python::enclosing_statement;
use crate::python::node_indent;
use crate::rules::action::{ActionSpec, Arg, ArgReader};
use crate::rules::error::RuleError;
use crate::rules::model::{Snippet, Spanned};

/// `replace: "template"`: replaces the whole match; `replace: {of: $X, by: "template"}`
/// replaces only what `$X` (or `$$$X`) bound — the code between the pattern's anchors, the rest
/// of the match keeping its layout.
#[derive(Debug)]
pub struct Replace;
register_action!(Replace);

impl ActionSpec for Replace {
    fn name(&self) -> &'static str {
        "replace"
    }

    fn read(&self, args: &ArgReader<'_>) -> Result<Arg, RuleError> {
        if args.field("of").is_none() && args.field("by").is_none() {
            return args.text();
        }
        let within = "`replace`";
        args.fields(&["of", "by"], within, "a template, or a mapping {of, by}")?;
        let of = args.require("of", within)?;
        let name = of.string()?;
        let bare = name.value.trim_start_matches('$');
        if !name.value.starts_with('$') || !crate::rules::convert::is_metavar_name(bare) {
            return Err(of.invalid("`of` names one metavariable, such as `$$$MID` or `$X`"));
        }
        Ok(Arg::Fields(vec![
            (Spanned::new("of".into(), 0..0), of.text()?),
            (
                Spanned::new("by".into(), 0..0),
                args.require("by", within)?.text()?,
            ),
        ]))
    }
}

impl ActionUnit for Replace {
    fn facts(&self) -> Facts {
        Facts {
            needs: Needs::Anything,
            edits_within_match: true,
        }
    }

    fn templates<'a>(&self, args: &'a Arg) -> Vec<&'a Snippet> {
        args.field("by")
            .unwrap_or(args)
            .snippet()
            .into_iter()
            .collect()
    }

    fn metavar_args<'a>(&self, args: &'a Arg) -> Vec<&'a Snippet> {
        args.field("of")
            .and_then(Arg::snippet)
            .into_iter()
            .collect()
    }

    fn explain(&self, args: &Arg) -> String {
        match (args.field("of"), args.field("by")) {
            (Some(of), Some(by)) => {
                format!("replace what `{}` bound with `{}`", of.text(), by.text())
            }
            _ => format!("replace with `{}`", args.text()),
        }
    }

    fn applied_shape(&self, args: &Arg, pattern: &str) -> AppliedShape {
        let (Some(of), Some(by)) = (args.field("of"), args.field("by")) else {
            return args.snippet().map_or(AppliedShape::Unknown, |s| {
                AppliedShape::Code(s.text.clone())
            });
        };
        // The pattern with the capture written as what replaced it.
        match super::between::replace_metavar(pattern, of.text(), by.text()) {
            Some(shape) => AppliedShape::Code(shape),
            None => AppliedShape::Unknown,
        }
    }

    fn plan(
        &self,
        args: &Arg,
        site: &Site<'_, '_>,
        _: &mut Signatures,
    ) -> Result<Vec<Edit>, ActionFailure> {
        if let (Some(of), Some(by)) = (args.field("of"), args.field("by")) {
            return super::between::replace_capture(site, of.text(), by.text());
        }
        let range = site.range();
        let indent = node_indent(site.source, site.node);
        let mut text = substitute(args.text(), site.bindings, site.source, indent);
        // A block scalar's final line break (`replace: |`) would add a blank line.
        if !site.source[range.clone()].ends_with('\n') {
            text.truncate(text.trim_end_matches(['\n', '\r']).len());
        }
        keeps_return_annotation(site, &text)?;
        Ok(match site.changing(Some(Edit { range, text })).pop() {
            Some(edit) => with_comments_kept(site, args.text(), edit),
            None => Vec::new(),
        })
    }
}

/// Refuses a template that rewrites an annotated def without its return annotation: a pattern
/// without `->` matches annotated defs too, and dropping `-> int` silently changes the code.
fn keeps_return_annotation(site: &Site<'_, '_>, replacement: &str) -> Result<(), ActionFailure> {
    let Some(annotation) = site.node.child_by_field_name("return_type") else {
        return Ok(());
    };
    let tree = crate::python::parse(replacement);
    let root = tree.root_node();
    let mut cursor = root.walk();
    let def = root
        .children(&mut cursor)
        .map(|n| n.child_by_field_name("definition").unwrap_or(n))
        .find(|n| n.kind() == "function_definition");
    match def {
        Some(def) if def.child_by_field_name("return_type").is_none() => {
            let written = &site.source[annotation.byte_range()];
            Err(ActionFailure::at(
                annotation.byte_range(),
                "this annotation",
                format!("the template would drop the return annotation `-> {written}`"),
            )
            .help("write `-> $R` in both the pattern and the template to carry it through"))
        }
        _ => Ok(()),
    }
}

/// `insert_before: "stmts"` and `insert_after: "stmts"`: insert statements before or after the
/// statement holding the match.
#[derive(Debug)]
pub struct Insert {
    before: bool,
}

static INSERT_BEFORE: Insert = Insert { before: true };
register_action!(INSERT_BEFORE);
static INSERT_AFTER: Insert = Insert { before: false };
register_action!(INSERT_AFTER);

impl ActionSpec for Insert {
    fn name(&self) -> &'static str {
        if self.before {
            "insert_before"
        } else {
            "insert_after"
        }
    }
}

impl ActionUnit for Insert {
    /// Insertions write outside the match, beside its statement.
    fn facts(&self) -> Facts {
        Facts {
            needs: Needs::Anything,
            edits_within_match: false,
        }
    }

    fn plan(
        &self,
        args: &Arg,
        site: &Site<'_, '_>,
        _: &mut Signatures,
    ) -> Result<Vec<Edit>, ActionFailure> {
        Ok(site.changing(insert(args.text(), site, self.before)))
    }
}

/// The insertion of `template` before or after the statement holding the match; none where
/// the code already stands there.
fn insert(template: &str, site: &Site<'_, '_>, before: bool) -> Option<Edit> {
    // A statement sequence is anchored on its first statement, or after its last.
    let statement = enclosing_statement(site.root, if before { site.node } else { site.last });
    let indent = node_indent(site.source, statement);
    let mut code = substitute(template, site.bindings, site.source, indent);
    // A block scalar's final line break (`insert_after: |`) would add a blank line.
    code.truncate(code.trim_end_matches(['\n', '\r']).len());
    let (siblings, at) = siblings_of(statement);
    let n = statement_count(&code);
    let neighbours = if before {
        &siblings[at.saturating_sub(n)..at]
    } else {
        &siblings[(at + 1).min(siblings.len())..(at + 1 + n).min(siblings.len())]
    };
    if same_code(neighbours, site.source, &code) {
        None
    } else if before {
        Some(Edit {
            range: statement.start_byte()..statement.start_byte(),
            text: format!("{code}\n{indent}"),
        })
    } else {
        let end = after_trailing_comment(site.source, statement.end_byte());
        Some(Edit {
            range: end..end,
            text: format!("\n{indent}{code}"),
        })
    }
}

/// `delete: true`: deletes the statement (or decorator) holding the match.
#[derive(Debug)]
pub struct Delete;
register_action!(Delete);

impl ActionSpec for Delete {
    fn name(&self) -> &'static str {
        "delete"
    }

    fn read(&self, args: &ArgReader<'_>) -> Result<Arg, RuleError> {
        let expected = "true, or {keep_comments: false}";
        if args.is_mapping() {
            args.fields(&["keep_comments"], "`delete`", expected)?;
            let keep = args
                .require("keep_comments", "`delete`")?
                .flag("true or false")?;
            return Ok(match keep {
                true => Arg::Flag(true),
                false => Arg::Fields(vec![(
                    crate::rules::model::Spanned::new("keep_comments".into(), 0..0),
                    Arg::Flag(false),
                )]),
            });
        }
        match args.flag("true") {
            Ok(true) => Ok(Arg::Flag(true)),
            _ => Err(args.wrong_type(expected)),
        }
    }
}

impl ActionUnit for Delete {
    fn facts(&self) -> Facts {
        Facts {
            needs: Needs::Anything,
            edits_within_match: false,
        }
    }

    fn templates<'a>(&self, _: &'a Arg) -> Vec<&'a Snippet> {
        Vec::new()
    }

    fn applied_shape(&self, _: &Arg, _pattern: &str) -> AppliedShape {
        AppliedShape::Absent
    }

    fn plan(
        &self,
        args: &Arg,
        site: &Site<'_, '_>,
        _: &mut Signatures,
    ) -> Result<Vec<Edit>, ActionFailure> {
        // By default the comments of what is deleted stay (they say why); a rule can drop them.
        let keep = args.field("keep_comments").is_none();
        let (first, last): (Node<'_>, Node<'_>) = if site.node.kind() == "decorator" {
            (site.node, site.node)
        } else {
            (
                enclosing_statement(site.root, site.node),
                enclosing_statement(site.root, site.last),
            )
        };
        let (siblings, at) = siblings_of(first);
        let deleted = siblings[at..]
            .iter()
            .take_while(|s| s.end_byte() <= last.end_byte())
            .count();
        let edit = if first.kind() != "decorator" && siblings.len() == deleted {
            // A block cannot be empty: its only statements become `pass` (after the comments
            // they held, which stay).
            let indent = node_indent(site.source, first);
            let mut text = String::new();
            for comment in inner_comments(first, last, site.source)
                .into_iter()
                .filter(|_| keep)
            {
                text.push_str(&format!("{comment}\n{indent}"));
            }
            text.push_str("pass");
            // Dropped, the comment ending the last line goes too.
            let end = match keep {
                true => last.end_byte(),
                false => after_trailing_comment(site.source, last.end_byte()),
            };
            Edit {
                range: first.start_byte()..end,
                text,
            }
        } else {
            delete_lines(site.source, (first, last), keep)
        };
        Ok(site.changing(Some(edit)))
    }
}

/// A statement's range on a line it shares (`a; f(); b`), widened by the `;` that separates it
/// from the next statement (`f(); `), or else from the one before (`a; f()` → `; f()`): the
/// line stays valid Python, not `a; ; b`.
fn with_separator(source: &str, range: Range<usize>) -> Range<usize> {
    let is_space = |c: char| c == ' ' || c == '\t';
    let rest = &source[range.end..];
    let after = rest.trim_start_matches(is_space);
    if let Some(tail) = after.strip_prefix(';') {
        let spaces = tail.len() - tail.trim_start_matches(is_space).len();
        return range.start..source.len() - tail.len() + spaces;
    }
    let head = source[..range.start].trim_end_matches(is_space);
    if let Some(before) = head.strip_suffix(';') {
        return before.trim_end_matches(is_space).len()..range.end;
    }
    range
}

/// Removes whole lines where the node stands alone on them, otherwise just the node. The
/// comments the node held, or that ended its last line, stay, each on a line of its own at
/// the node's indentation: a comment says why, and deleting the code does not answer it.
fn delete_lines(source: &str, (node, last): (Node<'_>, Node<'_>), keep: bool) -> Edit {
    let range = node.start_byte()..last.end_byte();
    let line_start = crate::python::node_line_start(node);
    let line_end = source[range.end..]
        .find('\n')
        .map_or(source.len(), |i| range.end + i + 1);
    let before = &source[line_start..range.start];
    let after = source[range.end..line_end].trim();
    if !(before.trim().is_empty() && (after.is_empty() || after.starts_with('#'))) {
        return Edit {
            range: with_separator(source, range),
            text: String::new(),
        };
    }
    let mut comments = inner_comments(node, last, source);
    if after.starts_with('#') {
        comments.push(after);
    }
    if !keep {
        comments.clear();
    }
    let newline = if source[..line_end].ends_with("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let text = comments
        .iter()
        .map(|c| format!("{before}{c}{newline}"))
        .collect();
    Edit {
        range: line_start..line_end,
        text,
    }
}

/// The comments from `node` to `last` (siblings, or one node), in order.
fn inner_comments<'s>(node: Node<'_>, last: Node<'_>, source: &'s str) -> Vec<&'s str> {
    // Most statements hold no comment: no walk then (nested matches in one statement would
    // each walk all of it, quadratic in its depth).
    if !source[node.start_byte()..last.end_byte()].contains('#') {
        return Vec::new();
    }
    inner_comment_nodes(node, last)
        .into_iter()
        .map(|c| &source[c.byte_range()])
        .collect()
}
