//! Writes the tree of a YAML rule file back out, laid out: see the module above for what is
//! kept and what is normalised.

use std::ops::Range;

use super::{Comment, Doc, Kind, Node, one_line_flow};

type Step = Result<(), String>;

/// `docs`, read from `text`, written out with `comments` where they stood.
pub(super) fn emit(text: &str, docs: &[Doc], comments: Vec<Comment>) -> Result<String, String> {
    let mut e = Emitter {
        text,
        out: String::new(),
        comments,
        next: 0,
        last: 0,
        open: true,
    };
    for doc in docs {
        e.doc(doc)?;
    }
    e.comments_before(usize::MAX, 0, None)?;
    let mut out = e.out;
    out.truncate(out.trim_end_matches('\n').len());
    if !out.is_empty() {
        out.push('\n');
    }
    Ok(out)
}

struct Emitter<'t> {
    text: &'t str,
    out: String,
    /// Every comment of the text, in order; those before `next` are written.
    comments: Vec<Comment>,
    next: usize,
    /// Where in the text the last thing written ends.
    last: usize,
    /// The line written last opens a block (or nothing is written yet): no blank line follows.
    open: bool,
}

impl Emitter<'_> {
    fn doc(&mut self, doc: &Doc) -> Step {
        if let Some(marker) = &doc.marker {
            if let Some(root) = &doc.root
                && !self.text[marker.end..root.start.max(marker.end)].contains('\n')
            {
                return Err("a document whose content starts on its `---` line".into());
            }
            self.line(marker.start, 0)?;
            self.out.push_str("---");
            self.end_line(marker.end);
            self.open = true;
        }
        if let Some(root) = &doc.root {
            let orig = col_of(self.text, root.start);
            match &root.kind {
                Kind::Map {
                    flow: false,
                    entries,
                } => self.map(entries, 0, doc.end, false, orig)?,
                Kind::Seq { flow: false, items } => self.seq(items, 0, doc.end, false, orig)?,
                _ => return Err("a document that is neither a mapping nor a block list".into()),
            }
        }
        self.comments_before(doc.end, 0, None)?;
        if let Some(marker) = &doc.end_marker {
            self.line(marker.start, 0)?;
            self.out.push_str("...");
            self.end_line(marker.end);
            self.open = true;
        }
        Ok(())
    }

    /// A block mapping's entries at `col`, each key on a line of its own but the first where
    /// `inline` (after a list item's `- `); then the comments before `limit` indented at
    /// least as its keys were (`orig`).
    fn map(
        &mut self,
        entries: &[(Node, Node)],
        col: usize,
        limit: usize,
        inline: bool,
        orig: usize,
    ) -> Step {
        for (i, (key, value)) in entries.iter().enumerate() {
            if !(inline && i == 0) {
                self.line(key.start, col)?;
            }
            let before = &self.text[line_start(self.text, key.start)..key.start];
            if !before.chars().all(|c| c == ' ' || c == '-') {
                return Err("an explicit `?` key".into());
            }
            self.out.push_str(&self.text[key.start..key.end]);
            let next = entries.get(i + 1).map_or(limit, |(k, _)| k.start);
            self.value(key, value, col, next)?;
        }
        self.comments_before(limit, col, Some(orig))
    }

    /// A block list's items at `col` (see [`Self::map`]).
    fn seq(&mut self, items: &[Node], col: usize, limit: usize, inline: bool, orig: usize) -> Step {
        for (i, item) in items.iter().enumerate() {
            if matches!(item.kind, Kind::Text) && item.start == item.end {
                return Err("an empty list item".into());
            }
            if !(inline && i == 0) {
                self.line(item.start, col)?;
            }
            self.out.push_str("- ");
            let next = items.get(i + 1).map_or(limit, |n| n.start);
            let item_col = col_of(self.text, item.start);
            match &item.kind {
                Kind::Map {
                    flow: false,
                    entries,
                } => self.map(entries, col + 2, next, true, item_col)?,
                Kind::Seq { flow: false, items } => {
                    self.seq(items, col + 2, next, true, item_col)?
                }
                _ => self.leaf(item, col, orig),
            }
        }
        self.comments_before(limit, col, Some(orig))
    }

    /// After a key at `col`: `: value`, or `:` and the block collection below it.
    fn value(&mut self, key: &Node, value: &Node, col: usize, limit: usize) -> Step {
        let key_col = col_of(self.text, key.start);
        let value_col = col_of(self.text, value.start);
        match &value.kind {
            Kind::Text if value.start == value.end => {
                self.out.push(':');
                self.end_line(key.end);
            }
            Kind::Map {
                flow: false,
                entries,
            } => {
                self.out.push(':');
                self.end_line(key.end);
                self.open = true;
                self.map(entries, col + 2, limit, false, value_col)?;
            }
            Kind::Seq { flow: false, items } => {
                self.out.push(':');
                self.end_line(key.end);
                self.open = true;
                // A list under a key keeps its dashes where they were: at the key's column,
                // or further in.
                let dashes = if value_col > key_col { col + 2 } else { col };
                self.seq(items, dashes, limit, false, value_col)?;
            }
            _ => {
                self.out.push_str(": ");
                self.leaf(value, col, key_col);
            }
        }
        Ok(())
    }

    /// A value written on its key's (or dash's) line, the owner standing at `col` (at `orig`
    /// in the text): a scalar, a block scalar, a flow collection.
    fn leaf(&mut self, node: &Node, col: usize, orig: usize) {
        match &node.kind {
            Kind::Text => {
                self.folded(node.start..node.end, col + 2);
                self.end_line(node.end);
            }
            Kind::Block { header, body } => self.block(header, body, col + 2),
            _ if one_line_flow(self.text, node) => {
                let flow = self.flow(node);
                self.out.push_str(&flow);
                self.end_line(node.end);
            }
            _ => {
                self.shifted(node, col, col as isize - orig as isize);
                self.end_line(node.end);
            }
        }
    }

    /// A scalar's text; the lines it continues on (a long plain or quoted scalar, whose line
    /// breaks fold) indented at `col`.
    fn folded(&mut self, span: Range<usize>, col: usize) {
        let mut lines = self.text[span].split('\n');
        self.out
            .push_str(lines.next().unwrap_or_default().trim_end());
        for line in lines {
            self.out.push('\n');
            if !line.trim().is_empty() {
                self.indent(col);
                self.out.push_str(line.trim());
            }
        }
    }

    /// A flow collection over several lines (or holding what is not written anew) as it
    /// stands, its later lines moved by `shift` columns (and kept right of `col`).
    fn shifted(&mut self, node: &Node, col: usize, shift: isize) {
        let mut lines = self.text[node.start..node.end].split('\n');
        self.out
            .push_str(lines.next().unwrap_or_default().trim_end());
        for line in lines {
            self.out.push('\n');
            let line = line.trim_end();
            let rest = line.trim_start_matches(' ');
            if rest.is_empty() {
                continue;
            }
            let at = (line.len() - rest.len()) as isize + shift;
            self.indent(at.max(col as isize + 1) as usize);
            self.out.push_str(rest);
        }
    }

    /// A flow collection on one line, written anew: `{a: b, c: [d, e]}`.
    fn flow(&self, node: &Node) -> String {
        match &node.kind {
            Kind::Map { entries, .. } => {
                let parts: Vec<String> = entries
                    .iter()
                    .map(|(k, v)| format!("{}: {}", self.flow(k), self.flow(v)))
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
            Kind::Seq { items, .. } => {
                let parts: Vec<String> = items.iter().map(|n| self.flow(n)).collect();
                format!("[{}]", parts.join(", "))
            }
            _ => self.text[node.start..node.end].to_string(),
        }
    }

    /// A block scalar: its header as written, its lines moved to `col` (their indentation
    /// past the first line's, and every character after it, kept: they are its content).
    fn block(&mut self, header: &Range<usize>, body: &Range<usize>, col: usize) {
        self.out.push_str(&self.text[header.clone()]);
        self.end_line(header.end);
        if body.is_empty() {
            return;
        }
        let lines: Vec<&str> = self.text[body.clone()]
            .split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .collect();
        let indent = lines
            .iter()
            .find(|l| !l.trim().is_empty())
            .map_or(0, |l| l.len() - l.trim_start_matches(' ').len());
        for line in lines {
            if line.len() > indent || !line.trim().is_empty() {
                self.indent(col);
                self.out.push_str(&line[indent.min(line.len())..]);
            }
            self.out.push('\n');
        }
        self.last = body.end;
    }

    /// Starts the line of a node at `at`: the comments before it, a blank line where the
    /// text has one, the indentation.
    fn line(&mut self, at: usize, col: usize) -> Step {
        self.comments_before(at, col, None)?;
        self.blank(at);
        self.indent(col);
        self.open = false;
        Ok(())
    }

    fn indent(&mut self, col: usize) {
        self.out.extend(std::iter::repeat_n(' ', col));
    }

    /// One blank line where the text has at least one between what was written last and
    /// `at`, unless a block opens here.
    fn blank(&mut self, at: usize) {
        if !self.open
            && !self.out.is_empty()
            && !self.out.ends_with("\n\n")
            && blank_between(self.text, self.last, at)
        {
            self.out.push('\n');
        }
    }

    /// The comments of their own lines before `before`, at `col`; where `min` is given, only
    /// those indented at least that far in the text (the rest belong to an outer block).
    fn comments_before(&mut self, before: usize, col: usize, min: Option<usize>) -> Step {
        while let Some(c) = self.comments.get(self.next).cloned() {
            if c.start >= before || min.is_some_and(|m| c.col < m) {
                break;
            }
            if !c.own_line {
                return Err("a comment after a `-` or `?` with its node on a later line".into());
            }
            self.blank(c.start);
            self.indent(col);
            self.out.push_str(&self.text[c.start..c.end]);
            self.out.push('\n');
            self.last = c.end;
            self.next += 1;
            self.open = false;
        }
        Ok(())
    }

    /// Ends the line whose last node ends at `after`, with the comment that followed it on
    /// its line in the text (the author's spacing before the `#` kept).
    fn end_line(&mut self, after: usize) {
        self.last = self.last.max(after);
        if let Some(c) = self.comments.get(self.next)
            && !c.own_line
            && c.start >= after
            && !self.text[after..c.start].contains('\n')
        {
            let before = &self.text[..c.start];
            self.out.push_str(&before[before.trim_end().len()..]);
            self.out.push_str(&self.text[c.start..c.end]);
            self.last = c.end;
            self.next += 1;
        }
        self.out.push('\n');
    }
}

fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |i| i + 1)
}

fn col_of(text: &str, at: usize) -> usize {
    at - line_start(text, at)
}

/// Whether a blank line stands between the line of `from` and the line of `to`.
fn blank_between(text: &str, from: usize, to: usize) -> bool {
    let to = to.min(text.len());
    let mut lines: Vec<&str> = text[from.min(to)..to].split('\n').collect();
    lines.pop();
    lines.iter().skip(1).any(|l| l.trim().is_empty())
}
