//! Top-level statements found from a file's bytes: the whole statement a scoped rule's match
//! lies in (its class, function and loop with it), and the name a definition binds.

use std::ops::Range;

use super::{Anchor, Kind, LogicalLines, is_name_byte, starts_keyword};

/// Each top-level statement of `text`, whole: its decorators, header, block and clauses, as
/// byte ranges of whole lines in document order (blank and comment lines between statements
/// left out); `None` where the scan cannot follow the text. A match, its class, function and
/// loop all lie in the one top-level statement that holds it.
pub fn top_level_statements(text: &str) -> Option<Vec<Range<usize>>> {
    Some(
        top_level_definitions(text)?
            .into_iter()
            .map(|s| s.range)
            .collect(),
    )
}

/// One top-level statement (see [`top_level_statements`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TopLevel {
    /// Its lines.
    pub range: Range<usize>,
    /// Where it is a `class` or `def` (decorated or not), the name it defines: at module
    /// level it binds that name and no other.
    pub defines: Option<Range<usize>>,
}

/// [`top_level_statements`], each with the name it defines where it is a definition.
pub fn top_level_definitions(text: &str) -> Option<Vec<TopLevel>> {
    Some(definitions_in(&LogicalLines::scan(text)?, text))
}

/// [`top_level_definitions`] of `text`, scanned as `lines`.
fn definitions_in(lines: &LogicalLines, text: &str) -> Vec<TopLevel> {
    let b = text.as_bytes();
    let mut out: Vec<TopLevel> = Vec::new();
    let mut after_decorator = false;
    // Whether the last line read stands in a block: an indented comment after it is in the
    // block too (tree-sitter hands a block the comments below it indented, until a line at
    // the margin), so the statement's range holds it as the statement's node does.
    let mut in_block = false;
    for line in &lines.0 {
        if line.kind == Kind::Blank {
            let comment = b[line.start..line.end].trim_ascii_start().starts_with(b"#");
            match out.last_mut() {
                Some(last) if comment && line.indent > 0 && in_block => last.range.end = line.end,
                _ if comment => in_block = false,
                _ => {}
            }
            continue;
        }
        in_block = line.indent > 0 || line.kind == Kind::Header;
        // A clause continues the statement above it, a definition its decorators.
        let starts = line.indent == 0 && line.kind != Kind::Clause && !after_decorator;
        let continues_decorators = line.indent == 0 && after_decorator;
        match out.last_mut() {
            Some(last) if !starts => last.range.end = line.end,
            _ => out.push(TopLevel {
                range: line.start..line.end,
                defines: None,
            }),
        }
        if (starts || continues_decorators) && line.kind == Kind::Header {
            let last = out.last_mut().expect("pushed or continued above");
            last.defines = defined_name(b, line.start);
        }
        if line.indent == 0 {
            after_decorator = line.kind == Kind::Decorator;
        }
    }
    out
}

/// The name a `class NAME`, `def NAME` or `async def NAME` header at `at` defines.
fn defined_name(b: &[u8], at: usize) -> Option<Range<usize>> {
    let mut i = at;
    if starts_keyword(&b[i..], b"async") {
        i += b"async".len();
        while matches!(b.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
    }
    let keyword: &[u8] = if starts_keyword(&b[i..], b"class") {
        b"class"
    } else if starts_keyword(&b[i..], b"def") {
        b"def"
    } else {
        return None;
    };
    i += keyword.len();
    while matches!(b.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    let start = i;
    while b.get(i).is_some_and(|&c| is_name_byte(c)) {
        i += 1;
    }
    (i > start).then_some(start..i)
}

/// The top-level statements (see [`top_level_statements`]) of `text`, scanned as `lines`, that
/// hold an anchor's offset and all of its other texts, in document order.
pub fn top_level_regions(
    lines: &LogicalLines,
    text: &str,
    anchors: &[Anchor<'_>],
) -> Vec<Range<usize>> {
    let statements: Vec<Range<usize>> = definitions_in(lines, text)
        .into_iter()
        .map(|s| s.range)
        .collect();
    let mut chosen = vec![false; statements.len()];
    for anchor in anchors {
        for &offset in &anchor.offsets {
            let Some(at) = statements
                .partition_point(|s| s.start <= offset)
                .checked_sub(1)
            else {
                continue;
            };
            let statement = &statements[at];
            let body = &text.as_bytes()[statement.clone()];
            if offset < statement.end
                && anchor
                    .also
                    .iter()
                    .all(|t| memchr::memmem::find(body, t.as_bytes()).is_some())
            {
                chosen[at] = true;
            }
        }
    }
    statements
        .into_iter()
        .zip(chosen)
        .filter_map(|(s, c)| c.then_some(s))
        .collect()
}
