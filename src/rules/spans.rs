//! Where each key and value of a rule document stands in its file.
//!
//! serde_yaml loads values but forgets where they came from, so YAML documents are read a
//! second time with saphyr-parser's span-carrying events to build this index; the DSL
//! parser fills the same index from pest's spans. Diagnostics look values up by path.

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
