//! String literals for the region scan: where one ends, through prefixes, triple quotes,
//! escapes and f-string replacement fields.

use super::is_name_byte;

/// How deep f-strings may nest in replacement fields before the scan gives up.
const MAX_NESTING: usize = 64;

/// The string's prefix letters just before the quote at `quote`: (raw, formatted).
fn prefix(b: &[u8], quote: usize) -> (bool, bool) {
    let mut start = quote;
    while start > 0 && b[start - 1].is_ascii_alphabetic() && quote - start < 3 {
        start -= 1;
    }
    let letters = &b[start..quote];
    let part_of_name = start > 0 && is_name_byte(b[start - 1]);
    if part_of_name || !letters.iter().all(|c| b"rRbBuUfFtT".contains(c)) {
        return (false, false);
    }
    let has = |set: &[u8]| letters.iter().any(|c| set.contains(c));
    (has(b"rR"), has(b"fFtT"))
}

/// The offset just past the string literal whose opening quote is at `at`. An unterminated
/// single-quoted string ends at its line's end, as the parser will report.
pub(super) fn skip_string(b: &[u8], at: usize, nesting: usize) -> Option<usize> {
    if nesting > MAX_NESTING {
        return None;
    }
    let (_raw, formatted) = prefix(b, at);
    let quote = b[at];
    let triple = b.get(at + 1) == Some(&quote) && b.get(at + 2) == Some(&quote);
    let mut i = at + if triple { 3 } else { 1 };
    while i < b.len() {
        match b[i] {
            // Even in a raw string a backslash keeps the next quote from closing it.
            b'\\' => i += 2,
            b'\n' if !triple => return Some(i),
            c if c == quote => {
                if !triple {
                    return Some(i + 1);
                }
                if b.get(i + 1) == Some(&quote) && b.get(i + 2) == Some(&quote) {
                    return Some(i + 3);
                }
                i += 1;
            }
            b'{' if formatted => {
                if b.get(i + 1) == Some(&b'{') {
                    i += 2;
                } else {
                    i = skip_replacement(b, i + 1, nesting + 1)?;
                }
            }
            _ => i += 1,
        }
    }
    Some(b.len())
}

/// The offset just past the `}` closing an f-string replacement field whose expression starts
/// at `at`: brackets nest, strings may reuse the outer quote (Python 3.12), and a format spec
/// after `:` may hold fields of its own.
fn skip_replacement(b: &[u8], at: usize, nesting: usize) -> Option<usize> {
    if nesting > MAX_NESTING {
        return None;
    }
    let mut depth = 0usize;
    let mut i = at;
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' => i = skip_string(b, i, nesting + 1)?,
            b'#' => i = memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |n| i + n),
            b'(' | b'[' | b'{' => {
                depth += 1;
                i += 1;
            }
            b')' | b']' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'}' if depth == 0 => return Some(i + 1),
            b'}' => {
                depth -= 1;
                i += 1;
            }
            b':' if depth == 0 => return skip_format_spec(b, i + 1, nesting),
            _ => i += 1,
        }
    }
    Some(b.len())
}

/// The offset just past the `}` ending a format spec that starts at `at`.
fn skip_format_spec(b: &[u8], at: usize, nesting: usize) -> Option<usize> {
    let mut i = at;
    while i < b.len() {
        match b[i] {
            b'{' => i = skip_replacement(b, i + 1, nesting + 1)?,
            b'}' => return Some(i + 1),
            // A quote or line end in a spec belongs to the enclosing string: stop here and let
            // it decide.
            b'\'' | b'"' | b'\n' => return Some(i),
            _ => i += 1,
        }
    }
    Some(b.len())
}
