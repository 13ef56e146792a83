//! Filling a template: metavariables replaced by the text they bound, laid out where the
//! template puts them.

use crate::pattern::matcher::{Bindings, Capture};
use crate::pattern::meta::{Metavar, scan};
use crate::python::line_indent;

/// Fills a template's metavariables with the text they bound. Lines after the template's
/// first are indented like the line the match starts on, and a capture spanning several lines
/// keeps its own layout, shifted to where it now stands. `($$$ARGS)` with every argument of a
/// call (or `($$$P)` with every parameter of a def) takes the whole list's layout (line breaks,
/// trailing comma) along.
pub fn substitute(template: &str, bindings: &Bindings<'_>, source: &str, indent: &str) -> String {
    let Ok(pieces) = scan(template) else {
        // Templates are checked when rules compile; a failure here cannot happen.
        return template.to_string();
    };
    let mut out = String::with_capacity(template.len());
    for piece in &pieces {
        match &piece.var {
            None => {
                for (i, part) in template[piece.range.clone()].split('\n').enumerate() {
                    if i > 0 {
                        out.push('\n');
                        out.push_str(indent);
                    }
                    out.push_str(part);
                }
            }
            Some(Metavar::Single(Some(name)) | Metavar::Multi(Some(name))) => {
                let Some(capture) = bindings.get(name) else {
                    continue;
                };
                let between_parens = template[..piece.range.start].ends_with('(')
                    && template[piece.range.end..].starts_with(')');
                let (text, start) = capture_layout(capture, source, between_parens);
                // Continuation lines keep their indentation relative to the capture's base:
                // the capture's own column where it opens a line, else its line's indentation.
                let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
                let opens_line = source[line_start..start].trim().is_empty();
                let base = if opens_line {
                    &source[line_start..start]
                } else {
                    line_indent(source, start)
                };
                // On the template's first line the text stands where the match stood, after
                // that line's indentation.
                let here = if out.contains('\n') {
                    current_indent(&out).to_string()
                } else {
                    format!("{indent}{}", current_indent(&out))
                };
                let segments: Vec<&str> = text.split('\n').collect();
                for (i, segment) in segments.iter().enumerate() {
                    if i == 0 {
                        out.push_str(segment);
                        continue;
                    }
                    out.push('\n');
                    let last = i + 1 == segments.len();
                    if segment.trim().is_empty() && !last {
                        continue;
                    }
                    out.push_str(&here);
                    out.push_str(segment.strip_prefix(base).unwrap_or(segment.trim_start()));
                }
            }
            Some(_) => {}
        }
    }
    // Lines holding only indentation are left empty.
    let mut cleaned: Vec<&str> = out.split('\n').collect();
    for line in &mut cleaned {
        if line.trim().is_empty() {
            *line = "";
        }
    }
    cleaned.join("\n")
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
