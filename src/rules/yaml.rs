//! Reads YAML rule files into values (serde_yaml) and a span index (saphyr-parser).

use std::ops::Range;

use saphyr_parser::{Event, Parser, SpannedEventReceiver};
use serde::Deserialize;

use super::spans::{Path, Seg, SpanIndex};

/// One YAML document: its value and where each of its parts stands.
#[derive(Debug)]
pub struct Document {
    /// The loaded value.
    pub value: serde_yaml::Value,
    /// Spans of its keys and values.
    pub spans: SpanIndex,
}

/// A YAML syntax error: a message and the byte offset it points at.
#[derive(Debug)]
pub struct YamlSyntaxError {
    /// What serde_yaml said, without its location suffix.
    pub message: String,
    /// Byte offset of the error.
    pub offset: usize,
}

/// Reads every document of `text`; documents that are empty are skipped.
pub fn read_documents(text: &str) -> Result<Vec<Document>, YamlSyntaxError> {
    // Flow nesting is bounded before either parser runs (both take time quadratic in it);
    // then the event pass bounds what aliases expand to before serde_yaml builds values,
    // which would materialise every alias.
    flow_depth(text)?;
    let indexes = span_indexes(text)?;
    let mut values = Vec::new();
    for document in serde_yaml::Deserializer::from_str(text) {
        let value = serde_yaml::Value::deserialize(document).map_err(|e| {
            let offset = e.location().map_or(0, |l| l.index().min(text.len()));
            let message = e.to_string();
            let message = match message.rfind(" at line ") {
                Some(at) => message[..at].to_string(),
                None => message,
            };
            YamlSyntaxError { message, offset }
        })?;
        values.push(value);
    }
    let mut indexes = indexes;
    if indexes.len() != values.len() {
        // The two readers split documents differently (only in odd corner cases); spans then
        // fall back to the whole file rather than pointing somewhere wrong.
        indexes = vec![SpanIndex::new(0..text.len()); values.len()];
    }
    Ok(values
        .into_iter()
        .zip(indexes)
        .filter(|(value, _)| !value.is_null())
        .map(|(value, spans)| Document { value, spans })
        .collect())
}

/// Refuses flow brackets (`[`, `{`) nested deeper than [`MAX_DEPTH`], in one linear scan that
/// skips quoted scalars and comments. Written by hand: no YAML parser bounds nesting before
/// its own (quadratic) work on it.
fn flow_depth(text: &str) -> Result<(), YamlSyntaxError> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(YamlSyntaxError {
                        message: format!(
                            "lists and mappings nest deeper than {MAX_DEPTH} levels here"
                        ),
                        offset: i,
                    });
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b'#' if i == 0 || bytes[i - 1].is_ascii_whitespace() => {
                i = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |n| i + n);
            }
            b'\'' => {
                // `''` inside is an escaped quote: the scan reopens at once.
                i = memchr::memchr(b'\'', &bytes[i + 1..]).map_or(bytes.len(), |n| i + 1 + n);
            }
            b'"' => {
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != b'"' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                i = j;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

fn span_indexes(text: &str) -> Result<Vec<SpanIndex>, YamlSyntaxError> {
    let mut builder = IndexBuilder {
        offsets: CharOffsets::new(text),
        documents: Vec::new(),
        stack: Vec::new(),
        current: None,
        foreign_tag: None,
        growth: Growth::default(),
    };
    let mut parser = Parser::new_from_str(text);
    if parser.load(&mut builder, true).is_err() {
        return Ok(Vec::new());
    }
    if let Some((offset, message)) = builder.growth.exceeded.take() {
        return Err(YamlSyntaxError { message, offset });
    }
    if let Some((offset, tag)) = builder.foreign_tag {
        return Err(YamlSyntaxError {
            message: format!("the tag `{tag}` is not allowed: a rule file is plain data"),
            offset,
        });
    }
    Ok(builder.documents)
}

/// Maps saphyr's character indexes to byte offsets.
pub(crate) struct CharOffsets {
    bytes: Option<Vec<usize>>,
    len: usize,
}

impl CharOffsets {
    pub(crate) fn new(text: &str) -> Self {
        let bytes = (!text.is_ascii()).then(|| text.char_indices().map(|(b, _)| b).collect());
        Self {
            bytes,
            len: text.len(),
        }
    }

    pub(crate) fn byte(&self, char_index: usize) -> usize {
        match &self.bytes {
            None => char_index.min(self.len),
            Some(bytes) => bytes.get(char_index).copied().unwrap_or(self.len),
        }
    }
}

/// The most bytes of text a rule file's documents may hold once every alias is expanded: a
/// rule file itself holds at most 16 MiB, and an alias of a large node repeated thousands of
/// times would otherwise build gigabytes of values.
pub const MAX_EXPANDED_BYTES: usize = 16 << 20;
/// The deepest nesting of mappings and sequences read (serde_yaml stops at 128 too); deeper
/// input is refused by the event pass in linear time.
pub const MAX_DEPTH: usize = 128;

/// What the documents would hold with aliases expanded, counted while events stream by.
#[derive(Default)]
struct Growth {
    /// Bytes of scalars (and one per node) with every alias counted as what it stands for.
    expanded: usize,
    /// Anchor id → the expanded size of the node it names.
    anchors: std::collections::HashMap<usize, usize>,
    /// Anchored collections still open: (depth, anchor id, `expanded` at their start).
    open: Vec<(usize, usize, usize)>,
    /// The first bound passed, and where.
    exceeded: Option<(usize, String)>,
}

impl Growth {
    fn add(&mut self, bytes: usize, at: usize) {
        self.expanded = self.expanded.saturating_add(bytes);
        if self.expanded > MAX_EXPANDED_BYTES && self.exceeded.is_none() {
            self.exceeded = Some((
                at,
                format!(
                    "with its aliases expanded this file would hold more than {} MiB: an alias here repeats a large node (a rule file is plain data)",
                    MAX_EXPANDED_BYTES >> 20
                ),
            ));
        }
    }
}

enum Frame {
    Map {
        path: Path,
        start: usize,
        pending_key: Option<String>,
    },
    Seq {
        path: Path,
        start: usize,
        next: usize,
    },
}

struct IndexBuilder {
    offsets: CharOffsets,
    documents: Vec<SpanIndex>,
    stack: Vec<Frame>,
    current: Option<SpanIndex>,
    /// The first tag outside YAML's core schema (`!!python/object`), and where: serde_yaml
    /// drops such tags silently, and a rule file is plain data.
    foreign_tag: Option<(usize, String)>,
    growth: Growth,
}

impl IndexBuilder {
    /// The path of the node that starts now, or `None` when it is a mapping key.
    fn node_path(&mut self, key: Option<&str>, span: Range<usize>) -> Option<Path> {
        match self.stack.last_mut() {
            None => Some(Vec::new()),
            Some(Frame::Seq { path, next, .. }) => {
                let mut p = path.clone();
                p.push(Seg::Index(*next));
                *next += 1;
                Some(p)
            }
            Some(Frame::Map {
                path, pending_key, ..
            }) => match pending_key.take() {
                Some(k) => {
                    let mut p = path.clone();
                    p.push(Seg::Key(k));
                    Some(p)
                }
                None => {
                    let k = key.unwrap_or("?").to_string();
                    let mut p = path.clone();
                    p.push(Seg::Key(k.clone()));
                    if let Some(index) = &mut self.current {
                        index.set_key(p, span);
                    }
                    *pending_key = Some(k);
                    None
                }
            },
        }
    }
}

impl IndexBuilder {
    /// Counts `event` toward the expanded size and the depth, before it is indexed.
    fn grow(&mut self, event: &Event<'_>, at: usize) {
        let depth = self.stack.len();
        match event {
            Event::Scalar(value, _, anchor, _) => {
                let size = value.len() + 1;
                if *anchor > 0 {
                    self.growth.anchors.insert(*anchor, size);
                }
                self.growth.add(size, at);
            }
            Event::Alias(id) => {
                let size = self.growth.anchors.get(id).copied().unwrap_or(1);
                self.growth.add(size, at);
            }
            Event::MappingStart(anchor, _) | Event::SequenceStart(anchor, _) => {
                if depth >= MAX_DEPTH {
                    self.growth.exceeded = Some((
                        at,
                        format!("mappings and lists nest deeper than {MAX_DEPTH} levels here"),
                    ));
                    return;
                }
                if *anchor > 0 {
                    self.growth
                        .open
                        .push((depth + 1, *anchor, self.growth.expanded));
                }
                self.growth.add(1, at);
            }
            Event::MappingEnd | Event::SequenceEnd => {
                if let Some(&(open_depth, anchor, start)) = self.growth.open.last()
                    && open_depth == depth
                {
                    self.growth.open.pop();
                    let size = self.growth.expanded - start;
                    self.growth.anchors.insert(anchor, size);
                }
            }
            _ => {}
        }
    }
}

impl<'input> SpannedEventReceiver<'input> for IndexBuilder {
    fn on_event(&mut self, event: Event<'input>, span: saphyr_parser::Span) {
        let range = self.offsets.byte(span.start.index())..self.offsets.byte(span.end.index());
        let tag = match &event {
            Event::Scalar(_, _, _, tag)
            | Event::MappingStart(_, tag)
            | Event::SequenceStart(_, tag) => tag.as_deref(),
            _ => None,
        };
        let core = ["str", "int", "float", "bool", "null", "seq", "map"];
        if let Some(tag) = tag
            && !(tag.is_yaml_core_schema() && core.contains(&tag.suffix.as_str()))
            && self.foreign_tag.is_none()
        {
            let handle = match tag.handle.as_str() {
                "tag:yaml.org,2002:" => "!!",
                other => other,
            };
            self.foreign_tag = Some((range.start, format!("{handle}{}", tag.suffix)));
        }
        if self.growth.exceeded.is_some() {
            return;
        }
        self.grow(&event, range.start);
        match event {
            Event::DocumentStart(_) => {
                self.current = Some(SpanIndex::new(range.start..self.offsets.len));
                self.stack.clear();
            }
            Event::DocumentEnd => {
                if let Some(index) = self.current.take() {
                    self.documents.push(index);
                }
            }
            Event::Scalar(value, ..) => {
                if let Some(path) = self.node_path(Some(&value), range.clone())
                    && let Some(index) = &mut self.current
                {
                    index.set_value(path, range);
                }
            }
            Event::Alias(_) => {
                if let Some(path) = self.node_path(None, range.clone())
                    && let Some(index) = &mut self.current
                {
                    index.set_value(path, range);
                }
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                let path = self.node_path(None, range.clone()).unwrap_or_default();
                let start = range.start;
                self.stack
                    .push(if matches!(event, Event::MappingStart(..)) {
                        Frame::Map {
                            path,
                            start,
                            pending_key: None,
                        }
                    } else {
                        Frame::Seq {
                            path,
                            start,
                            next: 0,
                        }
                    });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                if let Some(Frame::Map { path, start, .. } | Frame::Seq { path, start, .. }) =
                    self.stack.pop()
                    && let Some(index) = &mut self.current
                {
                    index.set_value(path, start..range.end.max(start));
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_point_at_keys_and_values() {
        let text = "id: a\nrequires:\n  transformers: \">=4.52\"\n---\nid: b\n";
        let docs = read_documents(text).unwrap();
        assert_eq!(docs.len(), 2);
        let path = vec![Seg::Key("requires".into()), Seg::Key("transformers".into())];
        assert_eq!(&text[docs[0].spans.value(&path)], "\">=4.52\"");
        assert_eq!(&text[docs[0].spans.key(&path)], "transformers");
        assert_eq!(&text[docs[1].spans.value(&[Seg::Key("id".into())])], "b");
    }

    #[test]
    fn syntax_errors_carry_an_offset() {
        let err = read_documents("id: [unclosed\n").unwrap_err();
        assert!(err.offset > 0, "{err:?}");
    }
}
