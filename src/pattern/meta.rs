//! Metavariable syntax: `$NAME`, `$$$NAME`, `$_` and `$$$`.
//!
//! Python has no `$`, so before a pattern is parsed each metavariable is rewritten into a
//! reserved identifier that tree-sitter-python accepts wherever an expression, a parameter or
//! a statement may stand. The rewrite is recorded so that offsets can be mapped back.

use std::ops::Range;

const SINGLE_PREFIX: &str = "__rpv_";
const MULTI_PREFIX: &str = "__rpm_";

/// A metavariable as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Metavar {
    /// `$NAME` (one node); `None` for `$_` and `$_NAME`, which bind nothing.
    Single(Option<String>),
    /// `$$$NAME` (zero or more nodes); `None` for `$$$` and `$$$_NAME`.
    Multi(Option<String>),
}

/// Recognises an identifier produced by [`encode`].
pub fn decode_identifier(ident: &str) -> Option<Metavar> {
    let named = |name: &str| (!name.starts_with('_') && !name.is_empty()).then(|| name.to_string());
    if let Some(name) = ident.strip_prefix(SINGLE_PREFIX) {
        Some(Metavar::Single(named(name)))
    } else {
        ident
            .strip_prefix(MULTI_PREFIX)
            .map(|name| Metavar::Multi(named(name)))
    }
}

/// Turns encoded identifiers in a message back into the metavariables they stand for.
pub fn decode_text(text: &str) -> String {
    text.replace(MULTI_PREFIX, "$$$")
        .replace(SINGLE_PREFIX, "$")
}

/// A pattern with its metavariables rewritten into identifiers.
#[derive(Debug, Clone)]
pub struct Encoded {
    /// The rewritten text, valid Python where the pattern is.
    pub text: String,
    /// (range in `text`, range in the original) of each rewrite.
    rewrites: Vec<(Range<usize>, Range<usize>)>,
}

impl Encoded {
    /// Maps an offset of the rewritten text back to the pattern as written.
    pub fn original_offset(&self, offset: usize) -> usize {
        let mut shift: isize = 0;
        for (new, old) in &self.rewrites {
            if offset < new.start {
                break;
            }
            if offset < new.end {
                return old.start;
            }
            shift = old.end as isize - new.end as isize;
        }
        (offset as isize + shift).max(0) as usize
    }

    /// Maps a range of the rewritten text back to the pattern as written.
    pub fn original_range(&self, range: Range<usize>) -> Range<usize> {
        let start = self.original_offset(range.start);
        let end = self.original_offset(range.end).max(start);
        start..end
    }
}

/// A malformed metavariable: where it is (in the pattern as written) and why.
#[derive(Debug, Clone)]
pub struct MetavarError {
    /// Span in the pattern.
    pub range: Range<usize>,
    /// What is wrong.
    pub reason: String,
}

/// A run of a pattern or template: literal text, or one metavariable.
#[derive(Debug, Clone)]
pub struct Piece {
    /// Where the run stands in the text.
    pub range: Range<usize>,
    /// The metavariable, or `None` for literal text.
    pub var: Option<Metavar>,
    /// The prefix and name an encoded identifier is made of (empty for literal text).
    encoded: (&'static str, String),
    /// Written `${NAME}`, which a template may glue to a name (`${CLS}_forward`).
    braced: bool,
}

/// Splits `text` into literal runs and metavariables, rejecting malformed `$` uses.
pub fn scan(text: &str) -> Result<Vec<Piece>, MetavarError> {
    let bytes = text.as_bytes();
    let mut pieces = Vec::new();
    let mut literal_start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' {
            i += 1;
            continue;
        }
        let start = i;
        let dollars = bytes[i..].iter().take_while(|b| **b == b'$').count();
        let braced = bytes.get(i + dollars) == Some(&b'{');
        let name_start = i + dollars + usize::from(braced);
        let name_len = bytes[name_start..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
            .count();
        let name = &text[name_start..name_start + name_len];
        let closed = braced && bytes.get(name_start + name_len) == Some(&b'}');
        let end = name_start + name_len + usize::from(closed);
        if braced && !closed {
            return Err(MetavarError {
                range: start..end.max(start + dollars + 1),
                reason: "`${` must hold an upper-case name and close: `${NAME}`".into(),
            });
        }
        let error = |reason: &str| MetavarError {
            range: start..end.max(start + dollars),
            reason: reason.to_string(),
        };
        let prefix = match dollars {
            1 => SINGLE_PREFIX,
            3 => MULTI_PREFIX,
            _ => return Err(error("write `$NAME` for one node or `$$$NAME` for several")),
        };
        if name.is_empty() && dollars == 1 {
            return Err(error(
                "`$` must start a metavariable such as `$NAME`, `$$$ARGS` or `$_`",
            ));
        }
        if name.starts_with(|c: char| c.is_ascii_digit())
            || name.chars().any(|c| c.is_ascii_lowercase())
        {
            return Err(error(
                "metavariable names are upper case, like `$LAYER` or `$_`",
            ));
        }
        if literal_start < start {
            pieces.push(Piece {
                range: literal_start..start,
                var: None,
                encoded: ("", String::new()),
                braced: false,
            });
        }
        let identifier = format!("{prefix}{name}");
        pieces.push(Piece {
            range: start..end,
            var: decode_identifier(&identifier),
            encoded: (prefix, name.to_string()),
            braced,
        });
        i = end;
        literal_start = end;
    }
    if literal_start < text.len() {
        pieces.push(Piece {
            range: literal_start..text.len(),
            var: None,
            encoded: ("", String::new()),
            braced: false,
        });
    }
    Ok(pieces)
}

/// Rewrites every metavariable of `pattern` into a reserved identifier.
pub fn encode(pattern: &str) -> Result<Encoded, MetavarError> {
    let mut text = String::with_capacity(pattern.len() + 16);
    let mut rewrites = Vec::new();
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    for piece in scan(pattern)? {
        if piece.var.is_none() {
            text.push_str(&pattern[piece.range]);
            continue;
        }
        if piece.braced
            && (word(pattern[..piece.range.start].chars().next_back())
                || word(pattern[piece.range.end..].chars().next()))
        {
            return Err(MetavarError {
                range: piece.range,
                reason: "a pattern matches whole names: `${NAME}` glued to a name is for templates, which write the capture's text into it".into(),
            });
        }
        let new_start = text.len();
        text.push_str(piece.encoded.0);
        text.push_str(&piece.encoded.1);
        rewrites.push((new_start..text.len(), piece.range));
    }
    Ok(Encoded { text, rewrites })
}

/// The named metavariables used in a template, with their spans in it.
pub fn template_metavars(template: &str) -> Result<Vec<(String, Range<usize>)>, MetavarError> {
    let mut out = Vec::new();
    for p in scan(template)? {
        match p.var {
            Some(Metavar::Single(Some(n)) | Metavar::Multi(Some(n))) => out.push((n, p.range)),
            // `$_` and `$$$` match without binding: in a template they would write nothing.
            Some(Metavar::Single(None) | Metavar::Multi(None)) => {
                return Err(MetavarError {
                    range: p.range,
                    reason: "`$_` and `$$$` bind nothing, so a template cannot write them: name the metavariable (`$X`) in the pattern and here".into(),
                });
            }
            None => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_and_maps_back() {
        let e = encode("$OUT = $LAYER($$$ARGS)").unwrap();
        assert_eq!(e.text, "__rpv_OUT = __rpv_LAYER(__rpm_ARGS)");
        let paren = e.text.find('(').unwrap();
        assert_eq!(e.original_offset(paren), "$OUT = $LAYER".len());
        assert_eq!(e.original_offset(2), 0);
        assert_eq!(
            decode_identifier("__rpm_ARGS"),
            Some(Metavar::Multi(Some("ARGS".into())))
        );
        assert_eq!(decode_identifier("__rpv__"), Some(Metavar::Single(None)));
        assert_eq!(decode_identifier("__rpm_"), Some(Metavar::Multi(None)));
    }

    #[test]
    fn rejects_malformed_metavariables() {
        assert_eq!(encode("f($x)").unwrap_err().range, 2..4);
        assert!(encode("f($$X)").is_err());
        assert!(encode("a $ b").is_err());
    }
}
