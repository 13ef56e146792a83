//! tree-sitter-python: parsing and the syntax-tree helpers every stage shares.

pub mod compile_check;
pub mod cpython;
mod declarations;
pub mod grammar;
pub mod imports;
pub mod literal;
pub mod misread;
pub mod names;
pub mod regions;

use std::cell::RefCell;
use std::ops::Range;

use tree_sitter::{Language, Node, Parser, Tree};

/// The tree-sitter-python language.
pub fn language() -> Language {
    tree_sitter_python::LANGUAGE.into()
}

thread_local! {
    static PARSER: RefCell<Parser> = RefCell::new({
        let mut parser = Parser::new();
        parser
            .set_language(&language())
            .expect("tree-sitter-python is ABI-compatible with the tree-sitter crate");
        parser
    });
}

/// A whole-file tree a caller already holds, or one parsed for want of it.
pub enum Held<'t> {
    /// The root of the caller's tree.
    Root(Node<'t>),
    /// A tree parsed here.
    Parsed(Tree),
}

impl<'t> Held<'t> {
    /// `held`, or a parse of `text`.
    pub fn or_parse(held: Option<Node<'t>>, text: &str) -> Held<'t> {
        match held {
            Some(root) => Held::Root(root),
            None => Held::Parsed(parse(text)),
        }
    }

    /// The tree's root.
    pub fn root(&self) -> Node<'_> {
        match self {
            Held::Root(root) => *root,
            Held::Parsed(tree) => tree.root_node(),
        }
    }
}

/// Parses Python source with this thread's parser.
pub fn parse(text: &str) -> Tree {
    with_parser(|p| p.parse(text, None))
}

/// Re-parses `new_text`, the result of applying `edits` (ordered, non-overlapping, in
/// `old_text` offsets) to `old_text`, reusing the unchanged parts of `old`'s tree. With
/// `regions` (in `new_text` offsets), only those are parsed, as by [`parse_regions`], and
/// `None` is returned if they do not parse cleanly.
pub fn reparse(
    old: &Tree,
    old_text: &str,
    edits: &[crate::edit::PlannedEdit],
    new_text: &str,
    regions: Option<&[Range<usize>]>,
) -> Option<Tree> {
    // Each edit of a tree parsed from regions costs tree-sitter a pass over all of them
    // (`ts_range_edit`): past a few edits a fresh parse of the regions is cheaper than reuse
    // (an `after:` chain of 60 rules each editing 2,000 sites of a 250 KB module took 29 s).
    if let Some(regions) = regions
        && edits.len() > REUSED_EDITS
    {
        return parse_within(new_text, regions, None);
    }
    // The positions in one forward pass (edits are ordered): counting lines from the start
    // for each edit made many edits quadratic in the file.
    let mut old_points = Points::new(old_text);
    let inputs: Vec<tree_sitter::InputEdit> = edits
        .iter()
        .map(|planned| {
            let e = &planned.edit;
            let start_position = old_points.at(e.range.start);
            let old_end_position = old_points.at(e.range.end);
            tree_sitter::InputEdit {
                start_byte: e.range.start,
                old_end_byte: e.range.end,
                new_end_byte: e.range.start + e.text.len(),
                start_position,
                old_end_position,
                new_end_position: advance(start_position, &e.text),
            }
        })
        .collect();
    let mut tree = old.clone();
    // From the last edit backwards, so every start still has its old offset and position.
    for input in inputs.iter().rev() {
        tree.edit(input);
    }
    match regions {
        None => Some(with_parser(|p| p.parse(new_text, Some(&tree)))),
        Some(regions) => parse_within(new_text, regions, Some(&tree)),
    }
}

/// How many edits a region parse reuses the old tree for (see [`reparse`]).
const REUSED_EDITS: usize = 16;

/// The positions of ascending byte offsets of a text, found in one pass.
struct Points<'a> {
    text: &'a str,
    at: usize,
    point: tree_sitter::Point,
}

impl<'a> Points<'a> {
    fn new(text: &'a str) -> Points<'a> {
        Points {
            text,
            at: 0,
            point: tree_sitter::Point { row: 0, column: 0 },
        }
    }

    /// The position of `offset`, at or after the last one asked.
    fn at(&mut self, offset: usize) -> tree_sitter::Point {
        self.point = advance(self.point, &self.text[self.at..offset]);
        self.at = offset;
        self.point
    }
}

/// Runs `parse` with this thread's parser; parsing without a timeout or cancellation flag
/// always yields a tree.
fn with_parser(parse: impl FnOnce(&mut Parser) -> Option<Tree>) -> Tree {
    PARSER
        .with(|p| parse(&mut p.borrow_mut()))
        .expect("parsing without a timeout or cancellation flag always yields a tree")
}

/// Parses only `regions` of `text` (sorted, disjoint byte ranges of whole statements), keeping
/// the whole text's offsets and positions; `None` if they do not parse cleanly, which is how a
/// misjudged region shows itself.
pub fn parse_regions(text: &str, regions: &[Range<usize>]) -> Option<Tree> {
    parse_within(text, regions, None)
}

fn parse_within(text: &str, regions: &[Range<usize>], old: Option<&Tree>) -> Option<Tree> {
    if regions.is_empty() {
        // No ranges means the whole text to tree-sitter; nothing to parse means an empty module.
        return Some(parse(""));
    }
    let mut ranges = Vec::with_capacity(regions.len());
    let mut points = Points::new(text);
    for r in regions {
        ranges.push(tree_sitter::Range {
            start_byte: r.start,
            end_byte: r.end,
            start_point: points.at(r.start),
            end_point: points.at(r.end),
        });
    }
    let tree = with_parser(|parser| {
        parser.set_included_ranges(&ranges).ok()?;
        let tree = parser.parse(text, old);
        parser
            .set_included_ranges(&[])
            .expect("no ranges (the whole text) are always valid");
        tree
    });
    (!tree.root_node().has_error()).then_some(tree)
}

fn advance(start: tree_sitter::Point, inserted: &str) -> tree_sitter::Point {
    match inserted.rfind('\n') {
        None => tree_sitter::Point {
            row: start.row,
            column: start.column + inserted.len(),
        },
        Some(last) => tree_sitter::Point {
            row: start.row + memchr::memchr_iter(b'\n', inserted.as_bytes()).count(),
            column: inserted.len() - last - 1,
        },
    }
}

/// The first ERROR or MISSING node in document order, if any; iterative, so deep trees are safe.
pub fn first_syntax_error(root: Node<'_>) -> Option<Node<'_>> {
    if !root.has_error() {
        return None;
    }
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            return Some(node);
        }
        // Descend only into subtrees that hold an error; otherwise move on.
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return None;
            }
        }
    }
}

/// Counts ERROR and MISSING nodes in a tree.
pub fn count_syntax_errors(root: Node<'_>) -> usize {
    if !root.has_error() {
        return 0;
    }
    let mut count = 0;
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            count += 1;
        }
        if node.has_error() && !node.is_missing() && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return count;
            }
        }
    }
}

/// Describes a syntax-error node for a diagnostic.
pub fn describe_syntax_error(node: Node<'_>, text: &str) -> String {
    if node.is_missing() {
        format!("expected `{}` here", node.kind())
    } else if text[node.end_byte()..].trim().is_empty() && node.end_byte() > node.start_byte() {
        "unexpected end of input: a bracket, quote or block is left open".to_string()
    } else {
        let snippet = &text[node.byte_range()];
        let first = snippet.lines().next().unwrap_or("").trim();
        if first.is_empty() {
            "unexpected end of input".to_string()
        } else {
            let short: String = first.chars().take(40).collect();
            format!("unexpected `{short}`")
        }
    }
}

/// Whether a node takes no part in matching: comments, line continuations and commas.
pub fn is_trivia(node: &Node<'_>) -> bool {
    // By kind id: `Node::kind` checks its name as UTF-8 on every call, and this is asked of
    // every child that matching compares.
    static TRIVIA: std::sync::OnceLock<Vec<bool>> = std::sync::OnceLock::new();
    let trivia = TRIVIA.get_or_init(|| {
        let mut trivia = vec![false; language().node_kind_count()];
        for kind in ["comment", "line_continuation", ","] {
            for named in [true, false] {
                for &id in grammar::kind_ids(kind, named) {
                    trivia[usize::from(id)] = true;
                }
            }
        }
        trivia
    });
    trivia
        .get(usize::from(node.kind_id()))
        .copied()
        .unwrap_or(false)
}

/// The children of `node` that take part in matching, in order.
pub fn significant_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.children(&mut cursor)
        .filter(|c| !is_trivia(c))
        .collect()
}

/// The statement holding `node`: the node itself or the ancestor that stands in a block.
pub fn enclosing_statement<'t>(root: Node<'t>, node: Node<'t>) -> Node<'t> {
    let mut statement = node;
    let mut in_block = false;
    for n in descent(root, node).chain([node]) {
        if in_block {
            statement = n;
            // Below a simple statement there is no block: it is the one (and the descent stops
            // at the top of an expression, however deeply nested).
            if !COMPOUND.contains(&n.kind()) {
                break;
            }
        }
        in_block = matches!(n.kind(), "block" | "module");
    }
    statement
}

/// The statements that hold blocks: below any other statement, no statement stands.
const COMPOUND: &[&str] = &[
    "if_statement",
    "for_statement",
    "while_statement",
    "try_statement",
    "with_statement",
    "match_statement",
    "function_definition",
    "class_definition",
    "decorated_definition",
];

/// Whether `node` is a generator that is its call's only argument, written without parentheses
/// of its own (`f(x for x in y)`): tree-sitter makes it the call's argument list itself, so the
/// parentheses it spans are the call's.
pub fn is_call_generator(node: Node<'_>) -> bool {
    node.kind() == "generator_expression"
        && node
            .parent()
            .and_then(|p| p.child_by_field_name("arguments"))
            == Some(node)
}

/// The nodes from `root` down towards `node`, outermost first, `node` itself left out: one
/// descent, where climbing with tree-sitter's `Node::parent` (which searches from the root on
/// every call) would cost the depth squared. Callers that need only the top part stop early.
pub fn descent<'t>(root: Node<'t>, node: Node<'t>) -> impl Iterator<Item = Node<'t>> {
    let mut cursor = root.walk();
    let mut done = false;
    std::iter::from_fn(move || {
        if done || cursor.node() == node {
            return None;
        }
        let current = cursor.node();
        // Among the children from the one ending past the start, the one holding the node.
        let found = cursor
            .goto_first_child_for_byte(node.start_byte())
            .is_some()
            && loop {
                let c = cursor.node();
                if c.start_byte() <= node.start_byte() && node.end_byte() <= c.end_byte() {
                    break true;
                }
                if !cursor.goto_next_sibling() {
                    break false;
                }
            };
        done = !found || cursor.node() == current;
        Some(current)
    })
}

/// Calls `visit` with each item of `items` (sorted by byte offset) and the nodes whose byte
/// range holds that offset, outermost first. One cursor sweeps the tree forward: a descent
/// from the root per offset scanned every earlier sibling again, which cost packs of
/// hundreds of anchored rules more than the parse.
pub fn for_each_path<'t, T>(
    root: Node<'t>,
    items: impl IntoIterator<Item = (usize, T)>,
    mut visit: impl FnMut(T, &[Node<'t>]),
) {
    let holds = |n: &Node<'_>, offset: usize| n.start_byte() <= offset && offset < n.end_byte();
    let mut cursor = root.walk();
    // The cursor's node and its ancestors, outermost first.
    let mut path = vec![root];
    // The cursor's children all end before the last offset: it is not entered again.
    let mut exhausted = false;
    for (offset, item) in items {
        let held = loop {
            let node = *path.last().expect("the root is never left");
            if node.end_byte() <= offset {
                if path.len() == 1 {
                    break 0;
                }
                if cursor.goto_next_sibling() {
                    *path.last_mut().expect("checked above") = cursor.node();
                    exhausted = false;
                } else {
                    cursor.goto_parent();
                    path.pop();
                    exhausted = true;
                }
                continue;
            }
            if !holds(&node, offset) {
                // Between the children of the parent, or before the root.
                break path.len() - 1;
            }
            if !exhausted && cursor.goto_first_child() {
                path.push(cursor.node());
                continue;
            }
            break path.len();
        };
        visit(item, &path[..held]);
    }
}

/// The name of a class or function definition.
pub fn definition_name<'s>(node: Node<'_>, text: &'s str) -> Option<&'s str> {
    node.child_by_field_name("name")
        .map(|n| &text[n.byte_range()])
}

/// `root` and every named node below it, in document order (preorder).
pub fn named_descendants<'t>(root: Node<'t>) -> impl Iterator<Item = Node<'t>> {
    let mut stack = vec![root];
    std::iter::from_fn(move || {
        let node = stack.pop()?;
        let mut cursor = node.walk();
        let children: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
        Some(node)
    })
}

/// The strings within `nodes` that span lines: text inside them is a value, never
/// indentation, so re-indenting code must leave those lines as they are.
pub fn multiline_strings(nodes: &[Node<'_>]) -> InStrings {
    let mut out = Vec::new();
    let mut stack: Vec<Node<'_>> = nodes.to_vec();
    while let Some(n) = stack.pop() {
        // A node on one line holds no string that spans lines.
        if n.start_position().row == n.end_position().row {
            continue;
        }
        if n.kind() == "string" {
            out.push(n.byte_range());
            continue;
        }
        let mut cursor = n.walk();
        stack.extend(n.children(&mut cursor));
    }
    out.sort_by_key(|r| r.start);
    InStrings {
        ranges: out,
        next: 0,
    }
}

/// Strings spanning lines, asked about offsets in increasing order: each question costs
/// amortised constant time (a line-by-line walk over a capture of thousands of strings would
/// otherwise be quadratic).
pub struct InStrings {
    ranges: Vec<Range<usize>>,
    next: usize,
}

impl InStrings {
    /// Whether `at` lies strictly inside one of the strings; `at` must not decrease between
    /// calls.
    pub fn contains(&mut self, at: usize) -> bool {
        while self.ranges.get(self.next).is_some_and(|r| r.end <= at) {
            self.next += 1;
        }
        self.ranges
            .get(self.next)
            .is_some_and(|r| r.start < at && at < r.end)
    }
}

/// Whether `s` is a Python identifier (ASCII subset plus any non-ASCII letters).
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

/// A node kind in words, with its article: `call` → "a call", `if_statement` → "an if
/// statement".
pub fn describe_kind(kind: &str) -> String {
    let words = kind.replace('_', " ");
    let article = if words.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {words}")
}

/// Whether `identifier` is the attribute of an `obj.name`: a name looked up on an object,
/// never in a scope.
pub fn is_attribute_name(identifier: Node<'_>) -> bool {
    identifier
        .parent()
        .filter(|p| p.kind() == "attribute")
        .is_some_and(|p| p.child_by_field_name("attribute") == Some(identifier))
}

/// Leading whitespace of the line `offset` stands on. It searches back for the line's start:
/// where `offset` is a node's, [`node_indent`] finds it without searching.
pub fn line_indent(text: &str, offset: usize) -> &str {
    indent_at(text, text[..offset].rfind('\n').map_or(0, |i| i + 1))
}

/// Where the line `node` starts on begins, from the node's column (tree-sitter counts it in
/// bytes): no search back along the line, which on a line of thousands of matches would
/// make the whole file quadratic.
pub fn node_line_start(node: Node<'_>) -> usize {
    node.start_byte() - node.start_position().column
}

/// Leading whitespace of the line `node` starts on.
pub fn node_indent<'s>(text: &'s str, node: Node<'_>) -> &'s str {
    indent_at(text, node_line_start(node))
}

/// The indentation of the line beginning at `start`.
fn indent_at(text: &str, start: usize) -> &str {
    let line = &text[start..];
    let end = line
        .find(|c: char| c != ' ' && c != '\t' && c != '\x0c')
        .unwrap_or(line.len());
    // A form feed resets CPython's column count: the indentation is what follows the last.
    let from = line[..end].rfind('\x0c').map_or(0, |i| i + 1);
    &line[from..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_error_node() {
        let text = "def f(:\n    pass\n";
        let tree = parse(text);
        let error = first_syntax_error(tree.root_node()).expect("an error");
        assert!(error.start_byte() <= 6, "{:?}", error.byte_range());
        assert!(count_syntax_errors(tree.root_node()) >= 1);
        assert!(first_syntax_error(parse("x = 1\n").root_node()).is_none());
    }

    #[test]
    fn each_offset_gets_the_nodes_holding_it() {
        // Gaps between children (spaces, the tail of a comment line), blocks, and offsets
        // repeated and past the end.
        let text =
            "class C:\n    def f(self, x):  # note\n        return self.g(x, [1, (2)])\n\ny = 1\n";
        let tree = parse(text);
        let root = tree.root_node();
        let mut every: Vec<Node<'_>> = vec![root];
        let mut cursor = root.walk();
        'walk: loop {
            if cursor.goto_first_child() {
                every.push(cursor.node());
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
            every.push(cursor.node());
        }
        let mut offsets: Vec<usize> = (0..text.len() + 2).collect();
        offsets.insert(20, 19);
        let mut seen = Vec::new();
        for_each_path(root, offsets.iter().map(|&o| (o, o)), |offset, path| {
            let mut holding: Vec<Node<'_>> = every
                .iter()
                .copied()
                .filter(|n| n.start_byte() <= offset && offset < n.end_byte())
                .collect();
            // Outermost first: a holder of another holds it.
            holding.sort_by_key(|n| (n.start_byte(), std::cmp::Reverse(n.end_byte())));
            let ids = |nodes: &[Node<'_>]| nodes.iter().map(|n| n.id()).collect::<Vec<_>>();
            assert_eq!(ids(path), ids(&holding), "at {offset}");
            seen.push(offset);
        });
        assert_eq!(seen, offsets);
    }
}
