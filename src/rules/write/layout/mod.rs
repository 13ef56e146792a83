//! What `fmt` writes back for a YAML rule file: the file as its author wrote it, laid out.
//!
//! The file is read once more with saphyr-parser's span-carrying events into a tree of its
//! nodes, each with the byte span it came from, and written out again from that tree: the
//! same documents (a list of rules stays a list), the same keys in the author's order, each
//! scalar in the author's own text (quoting, block style), each flow collection (`{...}`,
//! `[...]`) a flow collection, and every comment where it stood. Only layout is normalised:
//! two spaces per level of indentation (a list under a key keeps its dashes at the key's
//! column or two further in, as written), one space after `:`, `-` and `,`, no trailing
//! spaces, at most one blank line in a row and none opening a block, one line break at the
//! end. A file using what this writer does not lay out (anchors or tags on mappings and
//! lists, explicit `?` keys, block scalars with an indentation indicator or `+`, a comment
//! where no line of its own could keep it, directives, YAML that is not strict YAML 1.2) is
//! declined with the reason, and `fmt` falls back to the canonical form.

mod emit;

use std::ops::Range;

use saphyr_parser::{Event, Parser, ScalarStyle, SpannedEventReceiver};

use crate::rules::yaml::CharOffsets;

/// `text` laid out, or why this writer cannot lay it out as written.
pub fn format(text: &str) -> Result<String, String> {
    let docs = read(text)?;
    let comments = comments(text, &docs);
    emit::emit(text, &docs, comments)
}

/// One node of a document and the byte span it was read from.
#[derive(Debug)]
struct Node {
    start: usize,
    end: usize,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    /// A scalar or an alias, written as its text; empty where the value was left out (null).
    Text,
    /// A `|` or `>` block scalar: its header (`|-`), and its lines after the header's.
    Block {
        header: Range<usize>,
        body: Range<usize>,
    },
    /// A mapping: its keys and values in the author's order.
    Map {
        flow: bool,
        entries: Vec<(Node, Node)>,
    },
    /// A list.
    Seq { flow: bool, items: Vec<Node> },
}

/// One document: its `---` (where written), its root, where it ends and its `...`.
#[derive(Debug)]
struct Doc {
    marker: Option<Range<usize>>,
    root: Option<Node>,
    end: usize,
    end_marker: Option<Range<usize>>,
}

/// A comment: where it stands, its column, and whether it has its line to itself.
#[derive(Debug, Clone)]
struct Comment {
    start: usize,
    end: usize,
    col: usize,
    own_line: bool,
}

/// A collection being read: its start, whether it is a mapping or in flow style, and the
/// nodes read in it so far (a mapping's keys and values alternating).
struct Frame {
    start: usize,
    map: bool,
    flow: bool,
    children: Vec<Node>,
}

struct Builder<'t> {
    text: &'t str,
    offsets: CharOffsets,
    docs: Vec<Doc>,
    stack: Vec<Frame>,
    root: Option<Node>,
    marker: Option<Range<usize>>,
    /// The end of the last scalar or flow bracket read: a block scalar's header follows it.
    last_end: usize,
    declined: Option<String>,
}

fn read(text: &str) -> Result<Vec<Doc>, String> {
    // A line starting with `%` can only be a directive (any scalar's lines are indented).
    if text.lines().any(|l| l.starts_with('%')) {
        return Err("a `%` directive".into());
    }
    let mut builder = Builder {
        text,
        offsets: CharOffsets::new(text),
        docs: Vec::new(),
        stack: Vec::new(),
        root: None,
        marker: None,
        last_end: 0,
        declined: None,
    };
    let mut parser = Parser::new_from_str(text);
    parser
        .load(&mut builder, true)
        .map_err(|e| format!("it is not strict YAML 1.2 here: {e}"))?;
    match builder.declined {
        Some(reason) => Err(reason),
        None => Ok(builder.docs),
    }
}

impl<'input> SpannedEventReceiver<'input> for Builder<'_> {
    fn on_event(&mut self, event: Event<'input>, span: saphyr_parser::Span) {
        if self.declined.is_some() {
            return;
        }
        let range = self.offsets.byte(span.start.index())..self.offsets.byte(span.end.index());
        match event {
            Event::DocumentStart(explicit) => {
                self.marker = explicit.then_some(range);
                self.root = None;
            }
            Event::DocumentEnd => {
                let end_marker = (&self.text[range.clone()] == "...").then(|| range.clone());
                self.docs.push(Doc {
                    marker: self.marker.take(),
                    root: self.root.take(),
                    end: range.start,
                    end_marker,
                });
            }
            Event::MappingStart(anchor, tag) | Event::SequenceStart(anchor, tag)
                if anchor > 0 || tag.is_some() =>
            {
                self.decline("an anchor or a tag on a mapping or list");
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                let open = self.text[range.start..].chars().next();
                let flow = range.end > range.start && matches!(open, Some('{' | '['));
                if flow {
                    self.last_end = range.end;
                }
                self.stack.push(Frame {
                    start: range.start,
                    map: matches!(event, Event::MappingStart(..)),
                    flow,
                    children: Vec::new(),
                });
            }
            Event::MappingEnd | Event::SequenceEnd => self.close(range),
            Event::Scalar(_, style, anchor, tag) => {
                let node = match style {
                    ScalarStyle::Literal | ScalarStyle::Folded => {
                        if anchor > 0 || tag.is_some() {
                            self.decline("an anchor or a tag on a block scalar");
                            return;
                        }
                        self.block(range)
                    }
                    _ => Some(Node {
                        start: range.start,
                        end: range.end,
                        kind: Kind::Text,
                    }),
                };
                if let Some(node) = node {
                    self.last_end = node.end;
                    self.add(node);
                }
            }
            Event::Alias(_) => {
                self.last_end = range.end;
                self.add(Node {
                    start: range.start,
                    end: range.end,
                    kind: Kind::Text,
                });
            }
            _ => {}
        }
    }
}

impl Builder<'_> {
    fn decline(&mut self, reason: &str) {
        self.declined.get_or_insert_with(|| reason.to_string());
    }

    fn add(&mut self, node: Node) {
        match self.stack.last_mut() {
            Some(frame) => frame.children.push(node),
            None => self.root = Some(node),
        }
    }

    /// Ends the collection open on top: a block one ends where its last node does.
    fn close(&mut self, range: Range<usize>) {
        let Some(frame) = self.stack.pop() else {
            return;
        };
        // A flow collection ends after its bracket (saphyr's span may run on over a comment).
        let bracket = matches!(self.text[range.start..].chars().next(), Some('}' | ']'));
        let end = match frame.flow {
            true if bracket => range.start + 1,
            true => range.end,
            false => frame.children.last().map_or(frame.start, |n| n.end),
        };
        if frame.flow {
            self.last_end = end;
        }
        // A block list starts at its first dash (saphyr may point past it, at the first item).
        let start = match (frame.map || frame.flow, frame.children.first()) {
            (false, Some(first)) => {
                let before = self.text[..first.start].trim_end();
                match before.ends_with('-') {
                    true => before.len() - 1,
                    false => frame.start,
                }
            }
            _ => frame.start,
        };
        let kind = if frame.map {
            let mut entries = Vec::new();
            let mut children = frame.children.into_iter();
            while let (Some(key), Some(value)) = (children.next(), children.next()) {
                if !matches!(key.kind, Kind::Text) {
                    self.decline("a key that is not a plain value");
                }
                entries.push((key, value));
            }
            Kind::Map {
                flow: frame.flow,
                entries,
            }
        } else {
            Kind::Seq {
                flow: frame.flow,
                items: frame.children,
            }
        };
        self.add(Node { start, end, kind });
    }

    /// A block scalar whose content saphyr spans as `range`: its header is the first `|` or
    /// `>` after the node before it (comments skipped), its lines those after the header's
    /// up to the last that is not blank.
    fn block(&mut self, range: Range<usize>) -> Option<Node> {
        let text = self.text;
        let from = self.last_end.min(range.start);
        let at = header_at(&text[from..range.start.max(from)]).map(|i| from + i)?;
        let len = text[at + 1..]
            .find(|c: char| !matches!(c, '-' | '+' | '0'..='9'))
            .unwrap_or(text.len() - at - 1);
        let header = at..at + 1 + len;
        if text[header.clone()].contains(|c: char| c == '+' || c.is_ascii_digit()) {
            self.decline("a block scalar with an indentation indicator or `+`");
            return None;
        }
        let body_start = text[header.end..]
            .find('\n')
            .map_or(text.len(), |i| header.end + i + 1);
        let mut body_end = body_start;
        let mut offset = body_start;
        for line in text[body_start..range.end.max(body_start)].split_inclusive('\n') {
            if !line.trim().is_empty() {
                body_end = offset + line.trim_end_matches(['\n', '\r']).len();
            }
            offset += line.len();
        }
        let end = if body_end > body_start {
            body_end
        } else {
            header.end
        };
        Some(Node {
            start: header.start,
            end,
            kind: Kind::Block {
                header,
                body: body_start..body_end,
            },
        })
    }
}

/// Where the first `|` or `>` of `gap` stands, comments skipped.
fn header_at(gap: &str) -> Option<usize> {
    let mut comment = false;
    let mut previous = '\n';
    for (i, c) in gap.char_indices() {
        match c {
            '\n' => comment = false,
            '#' if previous.is_whitespace() => comment = true,
            '|' | '>' if !comment => return Some(i),
            _ => {}
        }
        previous = c;
    }
    None
}

/// Whether a flow collection is written on one line, of plain values and bracketed
/// collections only: such a one is written anew (`{a: b, c: [d]}`), any other as it stands.
fn one_line_flow(text: &str, node: &Node) -> bool {
    let plain = |n: &Node| match &n.kind {
        Kind::Text => n.end > n.start,
        Kind::Map { flow, .. } | Kind::Seq { flow, .. } => *flow && one_line_flow(text, n),
        Kind::Block { .. } => false,
    };
    !text[node.start..node.end].contains('\n')
        && match &node.kind {
            Kind::Map { entries, .. } => entries.iter().all(|(k, v)| plain(k) && plain(v)),
            Kind::Seq { items, .. } => items.iter().all(plain),
            _ => false,
        }
}

/// The spans no comment can stand in: scalars, block scalars' lines, and flow collections
/// kept as they stand (whose comments they carry).
fn covered(text: &str, node: &Node, out: &mut Vec<Range<usize>>) {
    match &node.kind {
        Kind::Text => out.push(node.start..node.end),
        Kind::Block { body, .. } => out.push(body.clone()),
        Kind::Map { flow: true, .. } | Kind::Seq { flow: true, .. }
            if !one_line_flow(text, node) =>
        {
            out.push(node.start..node.end);
        }
        Kind::Map { entries, .. } => {
            for (k, v) in entries {
                covered(text, k, out);
                covered(text, v, out);
            }
        }
        Kind::Seq { items, .. } => items.iter().for_each(|n| covered(text, n, out)),
    }
}

/// Every comment of `text`, in order: a `#` at a line's start or after a space, outside
/// every scalar, to the end of its line.
fn comments(text: &str, docs: &[Doc]) -> Vec<Comment> {
    let mut spans = Vec::new();
    for root in docs.iter().filter_map(|d| d.root.as_ref()) {
        covered(text, root, &mut spans);
    }
    spans.sort_by_key(|r| r.start);
    let mut out = Vec::new();
    let mut spans = spans.into_iter().peekable();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if let Some(span) = spans.peek()
            && span.start <= i
        {
            i = i.max(span.end);
            spans.next();
            continue;
        }
        if bytes[i] == b'#' && (i == 0 || bytes[i - 1].is_ascii_whitespace()) {
            let end = text[i..].find('\n').map_or(text.len(), |n| i + n);
            let end = i + text[i..end].trim_end().len();
            let line_start = text[..i].rfind('\n').map_or(0, |n| n + 1);
            out.push(Comment {
                start: i,
                end,
                col: i - line_start,
                own_line: text[line_start..i].trim().is_empty(),
            });
            i = end;
            continue;
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests;
