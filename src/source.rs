//! Named texts (rule files, patterns, targets) and byte-offset ↔ line/column conversion.

use std::ops::Range;
use std::sync::Arc;

use miette::{NamedSource, SourceSpan};

/// A text with the name it is reported under; cheap to clone and share between diagnostics.
#[derive(Debug, Clone)]
pub struct SourceFile {
    name: Arc<str>,
    text: Arc<str>,
    /// Its line starts as miette counts lines, computed for the first diagnostic.
    lines: Arc<std::sync::OnceLock<Arc<[usize]>>>,
}

/// What a path segment may not hold as itself in a URI (RFC 3986): controls, space, the
/// delimiters and `%`; `:` too, which in a relative reference's first segment reads as a
/// scheme. Bytes beyond ASCII are always encoded.
const URI_SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b']')
    .add(b'\\')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}')
    .add(b':');

/// `path` as a URI reference: `file:///…` for an absolute path (a drive letter kept as
/// `file:///c:/…`), else a relative reference; every segment percent-encoded, so a `#`, `%`,
/// space or `c:` in a name cannot change what the URI names.
pub fn path_uri(path: &str) -> String {
    let path = path.replace('\\', "/");
    let encode = |p: &str| -> String {
        p.split('/')
            .map(|segment| percent_encoding::utf8_percent_encode(segment, URI_SEGMENT).to_string())
            .collect::<Vec<_>>()
            .join("/")
    };
    let bytes = path.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    if drive && (bytes.len() == 2 || bytes[2] == b'/') {
        return format!("file:///{}:{}", &path[..1], encode(&path[2..]));
    }
    if path.starts_with('/') {
        return format!("file://{}", encode(&path));
    }
    encode(&path)
}

/// `path` as a user in the working directory names it: relative where it lies below that
/// folder, else as given. Diff headers, configured rule paths and the configuration file's
/// own name all show paths this way.
pub fn named_from_here(path: &std::path::Path) -> std::path::PathBuf {
    let below = std::env::current_dir().ok().and_then(|cwd| {
        let rel = std::path::absolute(path)
            .ok()?
            .strip_prefix(cwd)
            .ok()?
            .to_path_buf();
        (!rel.as_os_str().is_empty()).then_some(rel)
    });
    below.unwrap_or_else(|| path.to_path_buf())
}

/// A diagnostic's source: a named, shared text that miette reads by line index.
pub type Source = NamedSource<SourceText>;

/// A text as a diagnostic's source. miette finds a span in a plain text by counting lines
/// from its top, so rendering many diagnostics on one big file (thousands of lint findings,
/// warnings on a long module) was quadratic; this starts counting a few lines above the span.
#[derive(Debug, Clone)]
pub struct SourceText {
    text: Arc<str>,
    /// Where each line starts, with miette's idea of a line end (`\n`, `\r\n` or a lone `\r`).
    starts: Arc<[usize]>,
}

impl SourceText {
    fn new(text: Arc<str>, starts: Arc<[usize]>) -> Self {
        Self { text, starts }
    }
}

/// Line starts as miette counts lines: after `\n`, and after a `\r` not followed by `\n`.
fn miette_line_starts(text: &str) -> Arc<[usize]> {
    let bytes = text.as_bytes();
    let mut starts = vec![0];
    for i in memchr::memchr2_iter(b'\n', b'\r', bytes) {
        if bytes[i] == b'\n' || bytes.get(i + 1) != Some(&b'\n') {
            starts.push(i + 1);
        }
    }
    starts.into()
}

impl miette::SourceCode for SourceText {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        // miette's own reading, from a line boundary far enough above the span that what it
        // returns is the same, shifted by that line's offset and number.
        let line = self
            .starts
            .partition_point(|&s| s <= span.offset())
            .saturating_sub(1);
        let base_line = line.saturating_sub(before + 1);
        let base = self.starts[base_line];
        let local = SourceSpan::new((span.offset() - base).into(), span.len());
        let contents = self.text.as_bytes()[base..].read_span(&local, before, after)?;
        Ok(Box::new(miette::MietteSpanContents::new(
            contents.data(),
            SourceSpan::new(
                (contents.span().offset() + base).into(),
                contents.span().len(),
            ),
            contents.line() + base_line,
            contents.column(),
            contents.line_count() + base_line,
        )))
    }
}

impl SourceFile {
    /// Wraps `text` under the display name `name`.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        let name: String = name.into();
        let text: String = text.into();
        Self {
            name: name.into(),
            text: text.into(),
            lines: Arc::default(),
        }
    }

    /// The name shown in diagnostics (usually the path).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The whole text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The text as a miette source, for a diagnostic's `#[source_code]`.
    pub fn named_source(&self) -> Source {
        self.named_source_in("python")
    }

    /// The file as a miette source in `language`, sharing its text (a copy per diagnostic made
    /// 20,000 lint findings on a 1.7 MB rule file cost 24 GB).
    pub fn named_source_in(&self, language: &str) -> Source {
        let starts = self
            .lines
            .get_or_init(|| miette_line_starts(&self.text))
            .clone();
        NamedSource::new(&self.name, SourceText::new(self.text.clone(), starts))
            .with_language(language)
    }
}

/// A file or folder that could not be read, walked or written: the lowest error, shared by
/// rule loading and target handling.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum FileError {
    /// A file could not be read or written.
    #[error("{path}: {}", io_reason(error))]
    #[diagnostic(code(regraft::io))]
    Io {
        /// The file.
        path: String,
        /// The I/O error (said in the message, not as a cause below it: it is the whole story).
        error: std::io::Error,
    },
    /// A folder could not be walked.
    #[error("cannot walk {path}: {reason}")]
    #[diagnostic(code(regraft::usage))]
    Walk {
        /// The folder.
        path: String,
        /// What the walker reported.
        reason: String,
    },
}

/// An I/O error in words a user acts on; the OS's own where there are none better.
fn io_reason(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => "no such file or folder".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => error.to_string(),
    }
}

impl FileError {
    /// An I/O error on `path`.
    pub fn io(path: &std::path::Path, error: std::io::Error) -> Self {
        FileError::Io {
            path: path.display().to_string(),
            error,
        }
    }

    /// Reads the file at `path`, refusing before reading one that is not a regular file
    /// (`/dev/zero`, a FIFO: endless or blocking) or holds more than `max` bytes. `what` names
    /// the file in the refusal ("rule file", "target"); `hint` says how to raise the cap.
    pub fn read_regular(
        path: &std::path::Path,
        max: u64,
        what: &str,
        hint: &str,
    ) -> Result<Vec<u8>, Self> {
        let meta = std::fs::metadata(path).map_err(|e| Self::io(path, e))?;
        let refuse = |why: String| {
            Self::io(
                path,
                std::io::Error::new(std::io::ErrorKind::InvalidInput, why),
            )
        };
        if !meta.is_file() {
            return Err(refuse(format!(
                "not a regular file; a {what} is read from a file"
            )));
        }
        if meta.len() > max {
            return Err(refuse(format!(
                "{} bytes, more than the {max} a {what} may hold{hint}",
                meta.len()
            )));
        }
        std::fs::read(path).map_err(|e| Self::io(path, e))
    }

    /// The bytes of `path`, a file or a stream (a pipe such as `-r <(...)`, a device), read
    /// once and at most `max` of them: a stream has no size to check first, so one byte past
    /// `max` refuses it (`/dev/zero` stops there). A folder is refused.
    pub fn read_bounded(path: &std::path::Path, max: u64, what: &str) -> Result<Vec<u8>, Self> {
        use std::io::Read;
        let meta = std::fs::metadata(path).map_err(|e| Self::io(path, e))?;
        if meta.is_file() {
            return Self::read_regular(path, max, what, "");
        }
        if meta.is_dir() {
            return Err(Self::io(
                path,
                std::io::Error::new(std::io::ErrorKind::InvalidInput, "a folder"),
            ));
        }
        let file = std::fs::File::open(path).map_err(|e| Self::io(path, e))?;
        let mut bytes = Vec::new();
        file.take(max + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Self::io(path, e))?;
        if bytes.len() as u64 > max {
            return Err(Self::io(
                path,
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("more than the {max} bytes a {what} may hold"),
                ),
            ));
        }
        Ok(bytes)
    }

    /// A failure walking the folder `path`.
    pub fn walk(path: &std::path::Path, reason: impl std::fmt::Display) -> Self {
        FileError::Walk {
            path: path.display().to_string(),
            reason: reason.to_string(),
        }
    }

    /// A one-word name for the kind of failure.
    pub fn kind(&self) -> &'static str {
        match self {
            FileError::Io { .. } => "io",
            FileError::Walk { .. } => "usage",
        }
    }
}

/// Converts a byte range into miette's span type.
pub fn span(range: Range<usize>) -> SourceSpan {
    SourceSpan::new(range.start.into(), range.end.saturating_sub(range.start))
}

/// One-based line and column of a byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct LineCol {
    /// Line, counting from 1.
    pub line: usize,
    /// Column in characters, counting from 1.
    pub column: usize,
}

/// Precomputed line starts of a text, for fast offset → line/column lookups.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
    /// Whether the text is all ASCII, where a column is a byte count: counting characters
    /// from the line's start for every lookup made a long line of many matches quadratic.
    ascii: bool,
}

impl LineIndex {
    /// Indexes the line starts of `text`.
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr_newlines(text.as_bytes()).map(|i| i + 1));
        Self {
            starts,
            ascii: text.is_ascii(),
        }
    }

    /// Line and column of `offset` within `text` (the text this index was built from).
    pub fn line_col(&self, text: &str, offset: usize) -> LineCol {
        let line = match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.starts[line];
        let end = offset.min(text.len());
        let column = match text.get(start..end) {
            Some(s) if !self.ascii => s.chars().count(),
            _ => end - start,
        } + 1;
        LineCol {
            line: line + 1,
            column,
        }
    }
}

/// The offsets of the `\n` bytes (memchr's vectorised search; a byte-by-byte filter cost 2.4%
/// of a whole-tree run's instructions).
fn memchr_newlines(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    memchr::memchr_iter(b'\n', bytes)
}

#[cfg(test)]
mod uri_tests {
    use super::path_uri;

    #[test]
    fn a_path_becomes_a_uri_that_names_it() {
        assert_eq!(path_uri("src/a b#1%.py"), "src/a%20b%231%25.py");
        assert_eq!(path_uri("/tmp/x?.py"), "file:///tmp/x%3F.py");
        assert_eq!(path_uri("c:/work/m.py"), "file:///c:/work/m.py");
        assert_eq!(path_uri("c:\\work\\m.py"), "file:///c:/work/m.py");
        assert_eq!(path_uri("c:m.py"), "c%3Am.py");
        assert_eq!(path_uri("é.py"), "%C3%A9.py");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_text_reads_spans_as_miette_reads_the_whole_text() {
        use miette::SourceCode;
        let texts = [
            "a = 1\nb = 2\n\nc = f(x,\n      y)\nd\n",
            "x\r\ny = 1\r\n\r\nz\r\n",
            "p = 1\rq = 2\nr\r\ns\n",
            "one line, no end",
        ];
        for text in texts {
            let file = SourceFile::new("t.py", text);
            let indexed = file.named_source();
            for start in 0..=text.len() {
                for len in 0..=(text.len() - start).min(12) {
                    for (before, after) in [(0, 0), (1, 1), (2, 2), (3, 0)] {
                        let span = SourceSpan::new(start.into(), len);
                        let plain = text.read_span(&span, before, after);
                        let ours = indexed.read_span(&span, before, after);
                        match (plain, ours) {
                            (Ok(p), Ok(o)) => {
                                let at = format!("{text:?} {start}+{len} ±{before},{after}");
                                assert_eq!(p.data(), o.data(), "{at}");
                                assert_eq!(p.span(), o.span(), "{at}");
                                assert_eq!(p.line(), o.line(), "{at}");
                                assert_eq!(p.column(), o.column(), "{at}");
                                assert_eq!(p.line_count(), o.line_count(), "{at}");
                            }
                            (Err(_), Err(_)) => {}
                            (p, o) => {
                                panic!("{text:?} {start}+{len}: {:?} vs {:?}", p.is_ok(), o.is_ok())
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn line_col_counts_from_one_and_in_characters() {
        let text = "ab\nµx\n";
        let index = LineIndex::new(text);
        assert_eq!(index.line_col(text, 0), LineCol { line: 1, column: 1 });
        assert_eq!(index.line_col(text, 3), LineCol { line: 2, column: 1 });
        // 'x' follows the two-byte 'µ'.
        assert_eq!(index.line_col(text, 5), LineCol { line: 2, column: 2 });
    }
}
