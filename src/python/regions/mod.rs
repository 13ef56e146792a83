//! Statement regions: the whole statements around given offsets, found from a file's bytes.
//!
//! A rule whose matches can never hold a block lies inside one logical line: a simple
//! statement, or the header of a compound one. Parsing only the statements that hold a rule's
//! anchor therefore finds every match of such a rule, with the same subtree as a parse of the
//! whole file. This module finds those statements without parsing: one pass over the bytes
//! that knows Python's strings (prefixes, triple quotes, escapes, f-string replacement fields),
//! comments, brackets and backslash continuations, and so where each logical line ends.
//!
//! The result only says where to parse; a region that was misjudged does not parse cleanly,
//! and the caller then parses the whole file.

use std::ops::Range;

pub use crate::prefilter::{Anchor, AssignmentShape};
use strings::skip_string;

mod strings;
mod top_level;

pub use top_level::{TopLevel, top_level_definitions, top_level_regions, top_level_statements};

/// The statements that could hold a match: around each anchor offset whose logical line also
/// holds the anchor's other texts (and has its shape, for an anchor of an assignment), and
/// every statement that has one of the `assignments` shapes. As merged byte ranges
/// of whole lines in document order; `None` when the text defeats the scan (the caller parses
/// everything). A compound statement comes with its decorators; from a header, with its first
/// body statement; from an `elif`/`else`/`except`/`finally` clause or a `case`, whole.
/// Offsets in comments or blank lines need no region.
pub fn statement_regions(
    text: &str,
    anchors: &[Anchor<'_>],
    assignments: &[AssignmentShape],
) -> Option<Vec<Range<usize>>> {
    statement_regions_in(&LogicalLines::scan(text)?, text, anchors, assignments)
}

/// A text's logical lines, scanned once for every question asked of them here (the statements
/// around anchors, the top-level statements).
pub struct LogicalLines(Vec<Line>);

impl LogicalLines {
    /// The logical lines of `text`; `None` when the text defeats the scan.
    pub fn scan(text: &str) -> Option<Self> {
        logical_lines(text.as_bytes()).map(LogicalLines)
    }

    /// Where each logical line that starts within `ranges` (sorted) starts.
    pub fn starts_within<'a>(
        &'a self,
        ranges: &'a [Range<usize>],
    ) -> impl Iterator<Item = usize> + 'a {
        ranges.iter().flat_map(move |r| {
            let first = self.0.partition_point(|l| l.start < r.start);
            self.0[first..]
                .iter()
                .take_while(move |l| l.start < r.end)
                .map(|l| l.start)
        })
    }
}

/// [`statement_regions`] of `text`, scanned as `lines`.
pub fn statement_regions_in(
    lines: &LogicalLines,
    text: &str,
    anchors: &[Anchor<'_>],
    assignments: &[AssignmentShape],
) -> Option<Vec<Range<usize>>> {
    let lines = &lines.0;
    let mut regions: Vec<Range<usize>> = Vec::new();
    if !assignments.is_empty() {
        for (at, line) in lines.iter().enumerate() {
            let wanted = assignments.iter().any(|shape| line.has_shape(shape));
            if wanted && regions.last().is_none_or(|r| r.end <= line.start) {
                regions.push(statement_around(lines, at)?);
            }
        }
    }
    for anchor in anchors {
        for &offset in &anchor.offsets {
            // Offsets come in order: many repeat the statement just found.
            if regions.last().is_some_and(|r| r.contains(&offset)) {
                continue;
            }
            let Some(at) = lines.partition_point(|l| l.start <= offset).checked_sub(1) else {
                continue;
            };
            let line = lines[at];
            let holds_the_rest = || {
                let line_text = &text.as_bytes()[line.start..line.end];
                anchor
                    .also
                    .iter()
                    .all(|t| memchr::memmem::find(line_text, t.as_bytes()).is_some())
            };
            if line.kind == Kind::Blank
                || offset >= line.end
                || anchor
                    .assignment
                    .is_some_and(|shape| !line.has_shape(&shape))
                || !holds_the_rest()
            {
                continue;
            }
            regions.push(statement_around(lines, at)?);
        }
    }
    Some(merged(regions))
}

/// `regions` in document order, those that overlap or touch made one: fewer ranges for the
/// parser to step between.
fn merged(mut regions: Vec<Range<usize>>) -> Vec<Range<usize>> {
    regions.sort_by_key(|r| r.start);
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(regions.len());
    for r in regions {
        match merged.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => merged.push(r),
        }
    }
    merged
}

/// The punctuation characters a line records, one bit each.
const PUNCTUATION: &[u8; 24] = b"()[]{}.,:;=+-*/%@<>!&|^~";

/// The bit of each byte in [`PUNCTUATION`], or 0.
const PUNCTUATION_BITS: [u32; 256] = {
    let mut bits = [0u32; 256];
    let mut i = 0;
    while i < PUNCTUATION.len() {
        bits[PUNCTUATION[i] as usize] = 1 << i;
        i += 1;
    }
    bits
};

/// The punctuation in `token`, as a mask to compare with a line's: a line lacking any of a
/// pattern's punctuation (outside strings and comments) cannot hold a match.
pub fn punctuation(token: &str) -> u32 {
    token
        .bytes()
        .fold(0, |mask, b| mask | PUNCTUATION_BITS[usize::from(b)])
}

/// What a logical line begins or ends with, as far as statement boundaries care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Only whitespace and perhaps a comment.
    Blank,
    /// A simple statement, or a compound one with its body on the same line.
    Simple,
    /// Ends in `:`: a block follows on the next lines.
    Header,
    /// Begins with `elif`, `else`, `except` or `finally`: part of the statement above it.
    Clause,
    /// Begins with `@`: part of the definition below it.
    Decorator,
    /// A `case …:` header: part of the `match` statement around it.
    Case,
}

/// One logical line: physical lines joined by brackets, strings or backslashes.
#[derive(Debug, Clone, Copy)]
struct Line {
    /// Offset of its first byte (the start of a physical line).
    start: usize,
    /// Offset just past its final newline (or the end of the text).
    end: usize,
    /// Width of its leading whitespace, tabs to the next multiple of 8.
    indent: usize,
    kind: Kind,
    /// Holds an assignment `=` outside all brackets (not `==`, `<=`, `+=`, `:=`, …).
    assigns: bool,
    /// The punctuation it holds outside strings and comments (see [`punctuation`]).
    punctuation: u32,
    /// Its last byte that is not space or a comment (`"` for a string).
    last: Option<u8>,
    /// Begins with `try`.
    opens_try: bool,
    /// A one-line compound statement that clauses may continue (`if a: pass`, `try: x()`).
    one_line_head: bool,
}

impl Line {
    /// Whether it can hold a match of an assignment pattern of that shape: it assigns with `=`,
    /// holds all of the pattern's punctuation and ends as the pattern does. The end is not
    /// asked of a line that `;` splits into statements, nor of one ending in `,`, which
    /// matching passes over (`x = a, f(b),` holds a match of `$X = $A, f($B)`).
    fn has_shape(&self, shape: &AssignmentShape) -> bool {
        const SPLIT: u32 = PUNCTUATION_BITS[b';' as usize];
        self.assigns
            && shape.punctuation & !self.punctuation == 0
            && shape.closes_with.is_none_or(|end| {
                self.last == Some(end) || self.last == Some(b',') || self.punctuation & SPLIT != 0
            })
    }
}

/// The whole statement the logical line at `at` belongs to.
fn statement_around(lines: &[Line], at: usize) -> Option<Range<usize>> {
    let line = lines[at];
    // A clause belongs to the header above it at the same indentation.
    let mut head = at;
    if line.kind == Kind::Clause {
        head = owner_of_clause(lines, at)?;
    }
    if line.kind == Kind::Case {
        head = enclosing_header(lines, at)?;
    }
    // A decorator belongs to the definition below it.
    let mut def = head;
    while lines[def].kind == Kind::Decorator {
        def = next_at_indent(lines, def, lines[head].indent)?;
    }
    // And every decorator stacked above belongs to the same definition.
    let mut first = head;
    while let Some(prev) = previous_significant(lines, first)
        && lines[prev].kind == Kind::Decorator
        && lines[prev].indent == lines[head].indent
    {
        first = prev;
    }
    let last = if head != at {
        // From a clause or a case (the only lines with a head above them), the statement up
        // to it is needed: take it whole.
        end_of_compound(lines, def)
    } else if lines[def].kind == Kind::Header {
        end_of_first_statement(lines, def)
    } else {
        def
    };
    Some(lines[first].start..lines[last].end)
}

/// The last line of the shortest valid form of the compound statement whose header is at
/// `header`: the header and the first statement of its block, itself cut short when compound.
/// A match on the header line (the anchor is there) lies within it; the rest of the block
/// holds its own anchors. A `try` needs its clauses and comes whole.
fn end_of_first_statement(lines: &[Line], header: usize) -> usize {
    let mut h = header;
    loop {
        if lines[h].opens_try {
            return end_of_compound(lines, h);
        }
        let Some(mut next) = (h + 1..lines.len()).find(|&i| lines[i].kind != Kind::Blank) else {
            return h;
        };
        if lines[next].indent <= lines[h].indent {
            // No block: the region will not parse, and the file is parsed whole.
            return h;
        }
        while lines[next].kind == Kind::Decorator {
            match next_at_indent(lines, next, lines[next].indent) {
                Some(n) => next = n,
                None => return next,
            }
        }
        match lines[next].kind {
            Kind::Header | Kind::Case => h = next,
            _ => return next,
        }
    }
}

/// The header (`if`, `try`, `for`, `while`, …) a clause line continues.
fn owner_of_clause(lines: &[Line], at: usize) -> Option<usize> {
    let indent = lines[at].indent;
    let mut i = at;
    while i > 0 {
        i -= 1;
        let l = lines[i];
        if l.kind == Kind::Blank || l.indent > indent {
            continue;
        }
        if l.indent < indent {
            return None;
        }
        match l.kind {
            Kind::Clause => continue,
            Kind::Header => return Some(i),
            Kind::Simple if l.one_line_head => return Some(i),
            _ => return None,
        }
    }
    None
}

/// The header whose block holds the line at `at`.
fn enclosing_header(lines: &[Line], at: usize) -> Option<usize> {
    let indent = lines[at].indent;
    let i = (0..at)
        .rev()
        .find(|&i| lines[i].kind != Kind::Blank && lines[i].indent < indent)?;
    (lines[i].kind == Kind::Header).then_some(i)
}

/// The next non-blank line after `at`, which must stand at `indent`.
fn next_at_indent(lines: &[Line], at: usize, indent: usize) -> Option<usize> {
    let next = (at + 1..lines.len()).find(|&i| lines[i].kind != Kind::Blank)?;
    (lines[next].indent == indent).then_some(next)
}

fn previous_significant(lines: &[Line], at: usize) -> Option<usize> {
    (0..at).rev().find(|&i| lines[i].kind != Kind::Blank)
}

/// The last line of the compound statement whose header is at `header`: its indented block,
/// then any clauses at the header's indentation with their blocks.
fn end_of_compound(lines: &[Line], header: usize) -> usize {
    let indent = lines[header].indent;
    let mut last = header;
    for (i, l) in lines.iter().enumerate().skip(header + 1) {
        if l.kind == Kind::Blank {
            continue;
        }
        if l.indent > indent || (l.indent == indent && l.kind == Kind::Clause) {
            last = i;
        } else {
            break;
        }
    }
    last
}

/// Splits the text into logical lines; `None` if f-strings nest too deeply to follow.
fn logical_lines(b: &[u8]) -> Option<Vec<Line>> {
    // A byte-order mark is not code: where a line starts is then a guess, so no guess is made.
    if b.starts_with(b"\xEF\xBB\xBF") {
        return None;
    }
    let mut lines = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        let mut indent = 0;
        let mut form_feed = false;
        while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\x0c' | b'\r') {
            indent = match b[i] {
                b'\t' => (indent / 8 + 1) * 8,
                b' ' => indent + 1,
                _ => indent,
            };
            form_feed |= b[i] == b'\x0c';
            i += 1;
        }
        let first = i;
        let scan = scan_line(b, first)?;
        i = scan.end;
        let kind = line_kind(&b[first..], scan.last_significant);
        if kind != Kind::Blank && !could_be_python(&b[first..=scan.last_at]) {
            return None;
        }
        // CPython measures a line's indentation from its last form feed, and a line that opens
        // with a backslash from the line it continues onto: such text is parsed whole.
        if kind != Kind::Blank && (form_feed || b.get(first) == Some(&b'\\')) {
            return None;
        }
        lines.push(Line {
            start,
            end: i,
            indent,
            kind,
            // A clause with its body on its line (`except E: y = g(a)`) assigns as that body does.
            assigns: scan.assigns && matches!(kind, Kind::Simple | Kind::Clause),
            punctuation: scan.punctuation,
            last: scan.last_significant,
            opens_try: kind == Kind::Header && starts_keyword(&b[first..], b"try"),
            one_line_head: kind == Kind::Simple
                && ["if", "for", "while", "try", "async"]
                    .iter()
                    .any(|k| starts_keyword(&b[first..], k.as_bytes())),
        });
    }
    Some(lines)
}

/// Where each logical line of `text` that holds code starts (its indentation included);
/// `None` where the scan cannot follow the text.
pub fn logical_line_starts(text: &str) -> Option<Vec<usize>> {
    let lines = logical_lines(text.as_bytes())?;
    Some(
        lines
            .into_iter()
            .filter(|l| l.kind != Kind::Blank)
            .map(|l| l.start)
            .collect(),
    )
}

/// What the scan of one logical line found.
struct LineScan {
    /// Just past the line's end (its newline included).
    end: usize,
    /// The last byte that is not space or a comment (`"` for a string).
    last_significant: Option<u8>,
    /// Where that byte is.
    last_at: usize,
    /// Whether an `=` stands outside all brackets.
    assigns: bool,
    /// The punctuation the line holds outside strings and comments.
    punctuation: u32,
}

/// Scans the logical line whose first token starts at `first`: through brackets, strings,
/// comments and backslash continuations to its end. `None` where a string does not close.
#[inline]
fn scan_line(b: &[u8], first: usize) -> Option<LineScan> {
    let mut i = first;
    let mut depth = 0usize;
    let mut scan = LineScan {
        end: first,
        last_significant: None,
        last_at: first,
        assigns: false,
        punctuation: 0,
    };
    while i < b.len() {
        // Names and spaces are most of any file, and mean nothing to the scan but where the
        // line's last token ends.
        if is_name_byte(b[i]) {
            i += 1;
            while i < b.len() && is_name_byte(b[i]) {
                i += 1;
            }
            scan.last_significant = Some(b[i - 1]);
            scan.last_at = i - 1;
            continue;
        }
        if b[i] == b' ' {
            i += 1;
            continue;
        }
        match b[i] {
            b'\n' if depth == 0 => {
                i += 1;
                break;
            }
            b'#' => {
                i = memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |n| i + n);
                continue;
            }
            b'\\' if matches!(b.get(i + 1), Some(b'\n')) => i += 2,
            b'\\' if b.get(i + 1) == Some(&b'\r') && b.get(i + 2) == Some(&b'\n') => i += 3,
            b'\'' | b'"' => {
                i = skip_string(b, i, 0)?;
                scan.last_significant = Some(b'"');
                scan.last_at = i - 1;
            }
            c => {
                scan.punctuation |= PUNCTUATION_BITS[usize::from(c)];
                match c {
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                    // A line starting with `=` assigns nothing (and has no byte before).
                    b'=' if depth == 0
                        && i > first
                        && b.get(i + 1) != Some(&b'=')
                        && !b"=!<>+-*/%&|^@:".contains(&b[i - 1]) =>
                    {
                        scan.assigns = true;
                    }
                    _ => {}
                }
                if !c.is_ascii_whitespace() {
                    scan.last_significant = Some(c);
                    scan.last_at = i;
                }
                i += 1;
            }
        }
    }
    scan.end = i;
    Some(scan)
}

/// The kind of a logical line from its text (`line`, from its first token) and its last
/// significant byte.
fn line_kind(line: &[u8], last_significant: Option<u8>) -> Kind {
    if last_significant.is_none() {
        Kind::Blank
    } else if line[0] == b'@' {
        Kind::Decorator
    } else if ["elif", "else", "except", "finally"]
        .iter()
        .any(|k| starts_keyword(line, k.as_bytes()))
    {
        Kind::Clause
    } else if last_significant == Some(b':') && starts_keyword(line, b"case") {
        Kind::Case
    } else if last_significant == Some(b':') {
        Kind::Header
    } else {
        Kind::Simple
    }
}

/// Whether a logical line (from its first token to its last) could be Python as far as its
/// ends go. Python rejects a line that ends in an operator or in a keyword that needs more
/// (`x = a.`, `y = b and`), or that starts with one that needs something before it (`.b`,
/// `or c`); tree-sitter-python instead joins such a line with its neighbour. A scan that split
/// them would disagree with the whole parse, so such text is left to it.
fn could_be_python(line: &[u8]) -> bool {
    const DANGLING_END: &[u8] = b".=+-/%@<>!&|^~";
    const DANGLING_START: &[u8] = b".=)]},:;/%<>!&|^";
    const END_WORDS: &[&str] = &[
        "and", "or", "not", "in", "is", "if", "else", "elif", "lambda", "await", "async", "import",
        "from", "as", "assert", "del", "with", "for", "while", "def", "class", "global",
        "nonlocal",
    ];
    const START_WORDS: &[&str] = &["and", "or", "in", "is", "as"];
    let (Some(&first), Some(&last)) = (line.first(), line.last()) else {
        return true;
    };
    // `...` (Ellipsis) may start or end a statement.
    let ends_dangling = DANGLING_END.contains(&last) && !line.ends_with(b"...");
    let starts_dangling = DANGLING_START.contains(&first) && !line.starts_with(b"...");
    if ends_dangling || starts_dangling {
        return false;
    }
    let word_char = |c: &u8| is_name_byte(*c);
    let last_word_start = line
        .iter()
        .rposition(|c| !word_char(c))
        .map_or(0, |i| i + 1);
    let last_word = &line[last_word_start..];
    let first_word_end = line
        .iter()
        .position(|c| !word_char(c))
        .unwrap_or(line.len());
    let first_word = &line[..first_word_end];
    !END_WORDS.iter().any(|w| w.as_bytes() == last_word)
        && !START_WORDS.iter().any(|w| w.as_bytes() == first_word)
}

/// Whether `b` belongs in a name (or a number): ASCII letters, digits, `_`, any non-ASCII byte.
fn is_name_byte(b: u8) -> bool {
    NAME_BYTES[usize::from(b)]
}

/// Which bytes may stand in a name (ASCII letters, digits, `_`, and every byte of a non-ASCII
/// character): one load per byte in the scan's innermost loop.
const NAME_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
        b += 1;
    }
    table
};

fn starts_keyword(text: &[u8], keyword: &[u8]) -> bool {
    text.starts_with(keyword) && text.get(keyword.len()).is_none_or(|&c| !is_name_byte(c))
}

#[cfg(test)]
mod tests;
