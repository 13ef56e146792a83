//! Filling a template: metavariables replaced by the text they bound, laid out where the
//! template puts them.

use crate::pattern::matcher::{Bindings, Capture};
use crate::pattern::meta::{Metavar, Piece, scan};
use crate::python::line_indent;

/// Fills a template's metavariables with the text they bound. Lines after the template's
/// first are indented like the line the match starts on, and a capture spanning several lines
/// keeps its own layout, shifted to where it now stands. `($$$ARGS)` with every argument of a
/// call (or `($$$P)` with every parameter of a def) takes the whole list's layout (line breaks,
/// trailing comma) along. A capture that the template's surroundings would bind differently
/// (`a if c else b` in `loss * $X`) is parenthesised, decided from the filled template's tree.
pub fn substitute(template: &str, bindings: &Bindings<'_>, source: &str, indent: &str) -> String {
    let kept = without_empty_runs(template, bindings);
    let template = kept.as_str();
    let Ok(pieces) = scan(template) else {
        // Templates are checked when rules compile; a failure here cannot happen.
        return template.to_string();
    };
    let in_strings = string_lines(template, &pieces);
    let fill = |wrap: &[usize]| {
        fill(
            template,
            &pieces,
            bindings,
            source,
            indent,
            wrap,
            &in_strings,
        )
    };
    let (mut out, placed) = fill(&[]);
    match needs_parentheses(&out, &placed, indent) {
        Wrap::None => {}
        Wrap::These(wrap) => out = fill(&wrap).0,
        // The filled text does not parse: parentheses help only where the capture caused it;
        // a broken template stays as written, for the check that refuses it to point at. An
        // argument form (`*a`, `k=v`) that an operator binds into is never one node there:
        // written in parentheses, it is refused, not read as `*(a.x)`.
        Wrap::AllIfItHelps(wrap) => {
            let wrapped = fill(&wrap).0;
            if parses(&wrapped, indent) || placed.iter().any(|(.., form)| *form) {
                out = wrapped;
            }
        }
    }
    without_blank_indentation(&out, indent)
}

/// The offsets of the template's lines that start inside a string spanning lines (sorted),
/// read from the template with each metavariable written as an identifier of its length.
fn string_lines(template: &str, pieces: &[Piece]) -> Vec<usize> {
    if !template.contains('\n') {
        return Vec::new();
    }
    let mut stand_in = template.to_string();
    for piece in pieces.iter().filter(|p| p.var.is_some()) {
        let width = piece.range.len();
        stand_in.replace_range(piece.range.clone(), &"_".repeat(width));
    }
    let tree = crate::python::parse(&stand_in);
    let mut strings = crate::python::multiline_strings(&[tree.root_node()]);
    let mut out = Vec::new();
    let mut at = 0;
    for line in template.split('\n') {
        if at > 0 && strings.contains(at) {
            out.push(at);
        }
        at += line.len() + 1;
    }
    out
}

/// `out` with lines holding only indentation left empty — except lines inside a string that
/// spans lines, whose spaces are part of its value.
fn without_blank_indentation(out: &str, indent: &str) -> String {
    let blank = |line: &str| !line.is_empty() && line.trim().is_empty();
    if !out.split('\n').any(blank) {
        return out.to_string();
    }
    let (text, shift) = as_block(out, indent);
    let tree = crate::python::parse(&text);
    let mut strings = crate::python::multiline_strings(&[tree.root_node()]);
    let mut cleaned = String::with_capacity(out.len());
    let mut at = 0;
    for (i, line) in out.split('\n').enumerate() {
        if i > 0 {
            cleaned.push('\n');
        }
        let in_string = strings.contains(at + shift);
        if !blank(line) || in_string {
            cleaned.push_str(line);
        }
        at += line.len() + 1;
    }
    cleaned
}

/// `template` without the lines that hold only a `$$$NAME` that bound nothing: an empty run
/// of statements leaves no blank line behind.
fn without_empty_runs(template: &str, bindings: &Bindings<'_>) -> String {
    if !template.contains("$$$") {
        return template.to_string();
    }
    let empty = |line: &str| {
        let name = line.trim().strip_prefix("$$$");
        name.is_some_and(|n| {
            crate::rules::convert::is_metavar_name(n)
                && bindings.get(n).is_some_and(|c| c.byte_range().is_none())
        })
    };
    let lines: Vec<&str> = template.split_inclusive('\n').collect();
    if !lines.iter().any(|l| empty(l)) || lines.iter().all(|l| empty(l)) {
        return template.to_string();
    }
    let kept: String = lines.into_iter().filter(|l| !empty(l)).collect();
    // The dropped line may have been the last: no newline is left dangling for it.
    if template.ends_with('\n') {
        kept
    } else {
        kept.trim_end_matches('\n').to_string()
    }
}

/// Where a capture of a compound expression was placed in a filled template: its piece, byte
/// range, and whether it is an argument form (`*a`, `k=v`).
type Placed = (usize, std::ops::Range<usize>, bool);

/// Which captures to parenthesise.
enum Wrap {
    /// None.
    None,
    /// These pieces, which the filled text does not read as one node.
    These(Vec<usize>),
    /// The filled text does not parse: all these, if that makes it parse.
    AllIfItHelps(Vec<usize>),
}

/// `out` (lines after the first carrying `indent`) read as the body of a block at that
/// indentation, with where `out` starts in it.
fn as_block(out: &str, indent: &str) -> (String, usize) {
    let prefix = if indent.is_empty() {
        String::new()
    } else {
        format!("if 1:\n{indent}")
    };
    (format!("{prefix}{out}\n"), prefix.len())
}

/// Whether code put at `at` in `out` (which stands at `indent`) must be parenthesized to be
/// read there as one node: the judgement a template makes for its captures, for code put in
/// place otherwise (`replace: {of, by}`).
pub fn needs_wrapping(out: &str, at: std::ops::Range<usize>, indent: &str) -> bool {
    match needs_parentheses(out, &[(0, at.clone(), false)], indent) {
        Wrap::None => false,
        Wrap::These(_) => true,
        Wrap::AllIfItHelps(_) => {
            let wrapped = format!(
                "{}({}){}",
                &out[..at.start],
                &out[at.clone()],
                &out[at.end..]
            );
            parses(&wrapped, indent)
        }
    }
}

/// Whether both tree-sitter and CPython's grammar read `out`.
fn parses(out: &str, indent: &str) -> bool {
    let (text, _) = as_block(out, indent);
    // Detached: a template stands in some function or loop this text does not show.
    !crate::python::parse(&text).root_node().has_error()
        && crate::python::cpython::chunk_errors(&text, true)
            .iter()
            .all(|e| e.version_only)
}

/// The pieces whose compound expression the filled template `out` does not read as one node
/// (its operators bind to the template's around it), or all of them where `out` does not
/// parse, so cannot tell.
fn needs_parentheses(out: &str, placed: &[Placed], indent: &str) -> Wrap {
    if placed.is_empty() {
        return Wrap::None;
    }
    let (text, shift) = as_block(out, indent);
    let tree = crate::python::parse(&text);
    let root = tree.root_node();
    // tree-sitter reads some nestings CPython rejects (`a if b if c else d else e`): where
    // either parser rejects the filled text, every compound capture gets parentheses.
    let cpython_rejects = || {
        crate::python::cpython::chunk_errors(&text, true)
            .iter()
            .any(|e| !e.version_only)
    };
    if root.has_error() || cpython_rejects() {
        return Wrap::AllIfItHelps(placed.iter().map(|(piece, ..)| *piece).collect());
    }
    let wrap: Vec<usize> = placed
        .iter()
        .filter(|(_, range, form)| {
            let wanted = range.start + shift..range.end + shift;
            let node = root.descendant_for_byte_range(wanted.start, wanted.end);
            // CPython flattens `a and b and c` into one operation: keep the capture's own.
            let flattened = |n: tree_sitter::Node<'_>| {
                n.kind() == "boolean_operator"
                    && n.parent().is_some_and(|p| p.kind() == "boolean_operator")
            };
            // In an f-string's field CPython reads a top-level `:` as the format spec (tree-
            // sitter reads `{y := 7}` as a walrus, CPython as `y` formatted by `= 7`).
            let spec_colon = |n: tree_sitter::Node<'_>| {
                matches!(n.kind(), "named_expression" | "lambda")
                    && n.parent()
                        .is_some_and(|p| matches!(p.kind(), "interpolation" | "format_expression"))
            };
            // An argument form (`*a`, `k=v`) is whole only as an element: tree-sitter reads
            // `*a * b` as an operation on `*a`, CPython as `*(a * b)`; `k=v` alone is an
            // assignment.
            let loose_form = |n: tree_sitter::Node<'_>| {
                *form
                    && !(is_argument_form(n.kind())
                        && n.parent().is_some_and(|p| {
                            matches!(
                                p.kind(),
                                "argument_list"
                                    | "list"
                                    | "tuple"
                                    | "set"
                                    | "expression_list"
                                    | "dictionary"
                            )
                        }))
            };
            node.is_none_or(|n| {
                n.byte_range() != wanted || flattened(n) || spec_colon(n) || loose_form(n)
            })
        })
        .map(|(piece, ..)| *piece)
        .collect();
    if wrap.is_empty() {
        Wrap::None
    } else {
        Wrap::These(wrap)
    }
}

/// A call's argument that is no expression: an operator around it binds into it (`*a.x` is
/// `*(a.x)`, `k=a + 1` is `k=(a + 1)`).
fn is_argument_form(kind: &str) -> bool {
    matches!(kind, "list_splat" | "dictionary_splat" | "keyword_argument")
}

/// Expressions whose operators can bind to a template's operators around them (and numbers,
/// which a following `.` would read as a decimal point; braces, which an f-string field's own
/// `{` would read as an escaped `{{`; argument forms); the others (names, calls, attributes,
/// strings, other bracketed forms) read the same anywhere.
fn is_compound(kind: &str) -> bool {
    is_argument_form(kind)
        || matches!(
            kind,
            "dictionary"
                | "set"
                | "dictionary_comprehension"
                | "set_comprehension"
                | "integer"
                | "float"
                | "binary_operator"
                | "boolean_operator"
                | "comparison_operator"
                | "not_operator"
                | "unary_operator"
                | "conditional_expression"
                | "lambda"
                | "named_expression"
                | "await"
                | "expression_list"
                | "concatenated_string"
        )
}

/// The filled template before blank lines are cleaned, and where each compound capture went;
/// the pieces listed in `wrap` are written in parentheses.
fn fill(
    template: &str,
    pieces: &[Piece],
    bindings: &Bindings<'_>,
    source: &str,
    indent: &str,
    wrap: &[usize],
    in_strings: &[usize],
) -> (String, Vec<Placed>) {
    let mut out = String::with_capacity(template.len());
    let mut placed = Vec::new();
    for (index, piece) in pieces.iter().enumerate() {
        match &piece.var {
            None => {
                let mut at = piece.range.start;
                for (i, part) in template[piece.range.clone()].split('\n').enumerate() {
                    if i > 0 {
                        out.push('\n');
                        // A line inside a string of the template is part of its value.
                        if in_strings.binary_search(&at).is_err() {
                            out.push_str(indent);
                        }
                    }
                    out.push_str(part);
                    at += part.len() + 1;
                }
            }
            Some(Metavar::Single(Some(name)) | Metavar::Multi(Some(name))) => {
                let Some(capture) = bindings.get(name) else {
                    continue;
                };
                let between_parens = template[..piece.range.start].ends_with('(')
                    && template[piece.range.end..].starts_with(')');
                let compound = matches!(capture, Capture::One(node) if is_compound(node.kind()));
                let parenthesised = wrap.contains(&index);
                if parenthesised {
                    out.push('(');
                }
                let start = out.len();
                place_capture(&mut out, capture, source, indent, between_parens);
                if compound {
                    let form = matches!(capture, Capture::One(n) if is_argument_form(n.kind()));
                    placed.push((index, start..out.len(), form));
                }
                if parenthesised {
                    out.push(')');
                }
            }
            Some(_) => {}
        }
    }
    (out, placed)
}

/// Writes a capture's text at the end of `out`, its continuation lines re-indented.
fn place_capture(
    out: &mut String,
    capture: &Capture<'_>,
    source: &str,
    indent: &str,
    between_parens: bool,
) {
    let (text, start) = capture_layout(capture, source, between_parens);
    // One line has no continuation to indent (and its line's start is not searched for: on a
    // line of thousands of captures that search made the file quadratic).
    if !text.contains('\n') {
        out.push_str(text);
        return;
    }
    // Continuation lines keep their indentation relative to the capture's base: the capture's
    // own column where it opens a line, else its line's indentation.
    let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
    let opens_line = source[line_start..start].trim().is_empty();
    let base = if opens_line {
        &source[line_start..start]
    } else {
        line_indent(source, start)
    };
    // On the template's first line the text stands where the match stood, after that line's
    // indentation.
    let here = if out.contains('\n') {
        current_indent(out).to_string()
    } else {
        format!("{indent}{}", current_indent(out))
    };
    // Lines that start inside a string spanning lines are part of its value: kept verbatim.
    let mut strings = match capture {
        Capture::One(node) => crate::python::multiline_strings(&[*node]),
        Capture::Many(nodes) => crate::python::multiline_strings(nodes),
    };
    let segments: Vec<&str> = text.split('\n').collect();
    let mut at = start;
    for (i, segment) in segments.iter().enumerate() {
        let in_string = strings.contains(at);
        at += segment.len() + 1;
        if i == 0 {
            out.push_str(segment);
            continue;
        }
        out.push('\n');
        if in_string {
            out.push_str(segment);
            continue;
        }
        let last = i + 1 == segments.len();
        if segment.trim().is_empty() && !last {
            continue;
        }
        out.push_str(&here);
        out.push_str(segment.strip_prefix(base).unwrap_or(segment.trim_start()));
    }
}

/// The leading whitespace of the last line of `text`.
fn current_indent(text: &str) -> &str {
    let line = &text[text.rfind('\n').map_or(0, |i| i + 1)..];
    &line[..line.len() - line.trim_start().len()]
}

/// The text a capture writes, and where that text starts in the source.
fn capture_layout<'s>(
    capture: &Capture<'_>,
    source: &'s str,
    between_parens: bool,
) -> (&'s str, usize) {
    if between_parens
        && let Capture::Many(nodes) = capture
        && let Some(first) = nodes.first()
        && let Some(list) = first
            .parent()
            .filter(|p| matches!(p.kind(), "argument_list" | "parameters"))
    {
        let mut cursor = list.walk();
        let all: Vec<_> = list
            .named_children(&mut cursor)
            .filter(|n| n.kind() != "comment")
            .collect();
        if all == *nodes {
            let inner = list.start_byte() + 1..list.end_byte() - 1;
            return (&source[inner.clone()], inner.start);
        }
    }
    let start = capture.byte_range().map_or(0, |r| r.start);
    (capture.text(source), start)
}
