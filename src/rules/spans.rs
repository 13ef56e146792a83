//! Where each key and value of a rule document stands in its file.
//!
//! serde_yaml loads values but forgets where they came from, so YAML documents are read a
//! second time with saphyr-parser's span-carrying events to build this index; the DSL
//! parser fills the same index from pest's spans. Diagnostics look values up by path.
//! [`Spanned`] and [`Snippet`] are values that keep the span they were read from.

use std::collections::HashMap;
use std::ops::Range;

/// One step of a path into a document.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Seg {
    /// A mapping key.
    Key(String),
    /// A sequence position.
    Index(usize),
}

/// A path from the document root to a value.
pub type Path = Vec<Seg>;

/// Spans of keys and values, by path.
#[derive(Debug, Clone, Default)]
pub struct SpanIndex {
    values: HashMap<Path, Range<usize>>,
    keys: HashMap<Path, Range<usize>>,
    whole: Range<usize>,
}

impl SpanIndex {
    /// An index whose every lookup falls back to `whole`.
    pub fn new(whole: Range<usize>) -> Self {
        Self {
            whole,
            ..Self::default()
        }
    }

    /// Records the span of the value at `path`.
    pub fn set_value(&mut self, path: Path, span: Range<usize>) {
        self.values.insert(path, span);
    }

    /// Records the span of the key that introduces the value at `path`.
    pub fn set_key(&mut self, path: Path, span: Range<usize>) {
        self.keys.insert(path, span);
    }

    /// The span of the value at `path`, or of its nearest recorded ancestor.
    pub fn value(&self, path: &[Seg]) -> Range<usize> {
        (0..=path.len())
            .rev()
            .find_map(|n| self.values.get(&path[..n]).cloned())
            .unwrap_or_else(|| self.whole.clone())
    }

    /// The span of the key at `path`, falling back to the value's span.
    pub fn key(&self, path: &[Seg]) -> Range<usize> {
        self.keys
            .get(path)
            .cloned()
            .unwrap_or_else(|| self.value(path))
    }

    /// The span of the whole document.
    pub fn whole(&self) -> Range<usize> {
        self.whole.clone()
    }
}

/// A value and the byte span of the rule file it was read from.
#[derive(Debug, Clone)]
pub struct Spanned<T> {
    /// The value itself.
    pub value: T,
    /// Where it stands in the rule file.
    pub span: Range<usize>,
}

impl<T> Spanned<T> {
    /// Pairs a value with its span.
    pub fn new(value: T, span: Range<usize>) -> Self {
        Self { value, span }
    }
}

impl<T: PartialEq> PartialEq for Spanned<T> {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

/// Text written in a rule (a pattern or template) and how its offsets map into the rule file.
#[derive(Debug, Clone)]
pub struct Snippet {
    /// The decoded text, as the engine sees it.
    pub text: String,
    /// The span of the whole value in the rule file.
    pub span: Range<usize>,
    /// For each line of `text`: its start offset in `text` and in the rule file, where the
    /// line could be found verbatim in the file.
    lines: Vec<(usize, Option<usize>)>,
}

impl Snippet {
    /// Builds a snippet whose decoded `text` was read from `raw`, the file text at `span`.
    pub fn new(text: String, raw: &str, span: Range<usize>) -> Self {
        let mut lines = Vec::new();
        let mut cursor = 0;
        let mut offset = 0;
        for line in text.split('\n') {
            let found = raw.get(cursor..).and_then(|rest| rest.find(line));
            match found {
                Some(at) => {
                    lines.push((offset, Some(span.start + cursor + at)));
                    cursor += at + line.len();
                }
                None => lines.push((offset, None)),
            }
            offset += line.len() + 1;
        }
        Self { text, span, lines }
    }

    /// Maps a byte range of `text` to a range of the rule file, falling back to the whole value.
    pub fn file_range(&self, range: Range<usize>) -> Range<usize> {
        let map = |offset: usize| {
            let line = self.lines.partition_point(|(start, _)| *start <= offset) - 1;
            let (start, file_start) = self.lines[line];
            file_start.map(|f| f + offset - start)
        };
        match (map(range.start), map(range.end.max(range.start))) {
            (Some(start), Some(end)) if end >= start => start..end,
            (Some(start), _) => start..start + 1,
            _ => self.span.clone(),
        }
    }
}

impl PartialEq for Snippet {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}
