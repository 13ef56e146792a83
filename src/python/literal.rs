//! A Python string literal's value, read and written back in the literal's own style: its
//! prefix (`r`, `u`) and quotes kept. Reading is ruff's parser (every escape as CPython reads
//! it); writing is done here — no crate writes a value back into a *given* quoting style — and
//! checked by reading the result again: a value the style cannot hold is refused, never
//! written differently.

use ruff_python_ast::Expr;

/// A text string literal: how it is written, and the value it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Literal {
    /// The prefix as written (`""`, `"r"`, `"U"`, `"Rb"` is never one: bytes are refused).
    pub prefix: String,
    /// The quotes: `'`, `"`, `'''` or `"""`.
    pub quote: &'static str,
    /// Whether escapes are literal text (`r"..."`).
    pub raw: bool,
    /// The string's value.
    pub value: String,
}

/// Reads the literal `text` (one string, as in the source); `Err` says why it is not one this
/// can rewrite: bytes, an f-string or t-string (its value is computed), several literals
/// written side by side.
pub fn read(text: &str) -> Result<Literal, String> {
    let prefix: String = text
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    if prefix.chars().any(|c| !matches!(c, 'r' | 'R' | 'u' | 'U')) {
        return Err(format!(
            "a `{prefix}` string is not text whose value can be rewritten (bytes, f-strings and t-strings are not)"
        ));
    }
    let body = &text[prefix.len()..];
    let quote = ["\"\"\"", "'''", "\"", "'"]
        .into_iter()
        .find(|q| body.starts_with(q))
        .ok_or("not a string literal")?;
    // CPython reads source with universal newlines: a line break inside a triple-quoted
    // literal of a CRLF (or CR) file is `\n` in its value.
    let text = &text.replace("\r\n", "\n").replace('\r', "\n");
    let parsed = ruff_python_parser::parse_expression(text).map_err(|e| e.error.to_string())?;
    let Expr::StringLiteral(string) = parsed.expr() else {
        return Err("not a single string literal".into());
    };
    if string.value.is_implicit_concatenated() {
        return Err("several string literals written side by side; rewrite each".into());
    }
    Ok(Literal {
        raw: prefix.contains(['r', 'R']),
        prefix,
        quote,
        value: string.value.to_str().to_string(),
    })
}

impl Literal {
    /// `value` written in this literal's style; `Err` where the style cannot hold it (a raw
    /// string cannot escape its quote or end in a backslash).
    pub fn write(&self, value: &str) -> Result<String, String> {
        let body = if self.raw {
            self.raw_body(value)?
        } else {
            self.escaped_body(value)
        };
        let written = format!("{}{}{body}{}", self.prefix, self.quote, self.quote);
        // The check that makes the hand-written quoting safe: CPython's reading of what is
        // written must be the value asked for.
        match read(&written) {
            Ok(again) if again.value == value => Ok(written),
            _ => Err(format!(
                "the new value cannot be written as a {} string",
                self.style()
            )),
        }
    }

    fn style(&self) -> String {
        format!("{}{}…{}", self.prefix, self.quote, self.quote)
    }

    fn raw_body(&self, value: &str) -> Result<String, String> {
        let q = self.quote.chars().next().expect("a quote");
        let triple = self.quote.len() == 3;
        // A carriage return written raw would be read back as a line break.
        let closes = value.contains('\r')
            || if triple {
                value.contains(self.quote) || value.ends_with(q)
            } else {
                value.contains(q) || value.contains('\n')
            };
        let trailing = value.len() - value.trim_end_matches('\\').len();
        if closes || trailing % 2 == 1 || value.contains(&format!("\\{q}")) {
            return Err(format!(
                "the new value cannot be written as a raw {} string: it holds its quote, a line break or a final backslash",
                self.style()
            ));
        }
        Ok(value.to_string())
    }

    fn escaped_body(&self, value: &str) -> String {
        let q = self.quote.chars().next().expect("a quote");
        let triple = self.quote.len() == 3;
        let mut out = String::with_capacity(value.len());
        let chars: Vec<char> = value.chars().collect();
        for (i, &c) in chars.iter().enumerate() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\n' if !triple => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' if !triple => out.push_str("\\t"),
                // In triple quotes line breaks and tabs stand as themselves.
                '\n' | '\t' => out.push(c),
                c if c == q => {
                    // In triple quotes a quote needs escaping only where it would close the
                    // string: as the last character, or starting a run of three.
                    let closing = !triple
                        || i + 1 == chars.len()
                        || chars[i + 1..].iter().take(2).filter(|&&n| n == q).count() == 2;
                    if closing {
                        out.push('\\');
                    }
                    out.push(c);
                }
                c if (c as u32) < 0x20 || c == '\u{7f}' => {
                    out.push_str(&format!("\\x{:02x}", c as u32));
                }
                c => out.push(c),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_read_as_cpython_reads_them() {
        let l = read(r#"'a\tb\x41\N{BULLET}'"#).unwrap();
        assert_eq!(l.value, "a\tbA\u{2022}");
        assert_eq!((l.quote, l.raw), ("'", false));
        assert_eq!(read(r#"r"a\tb""#).unwrap().value, "a\\tb");
        for refused in [r#"b"x""#, r#"f"{x}""#, r#""a" "b""#] {
            assert!(read(refused).is_err(), "{refused}");
        }
    }

    #[test]
    fn values_are_written_back_in_the_literals_style() {
        let l = read("'it'").unwrap();
        assert_eq!(l.write("it's").unwrap(), r"'it\'s'");
        assert_eq!(l.write("a\nb\\").unwrap(), r"'a\nb\\'");
        let doc = read("\"\"\"Doc.\"\"\"").unwrap();
        assert_eq!(
            doc.write("Two\nlines \"q\"").unwrap(),
            "\"\"\"Two\nlines \"q\\\"\"\"\""
        );
        assert_eq!(doc.write("a\"\"\"b").unwrap(), "\"\"\"a\\\"\"\"b\"\"\"");
        let raw = read(r#"r"\d+""#).unwrap();
        assert_eq!(raw.write(r"\w+").unwrap(), r#"r"\w+""#);
        assert!(raw.write("a\"b").is_err());
        assert!(raw.write("ends\\").is_err());
        assert!(
            read("r\"\"\"a\"\"\"").unwrap().write("a\rb").is_err(),
            "a raw CR reads as \\n"
        );
        // A CRLF file's line break inside the literal is `\n` to Python.
        assert_eq!(read("\"\"\"a\r\nb\"\"\"").unwrap().value, "a\nb");
    }
}
