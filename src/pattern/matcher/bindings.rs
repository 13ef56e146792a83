//! What a match bound: captures by metavariable name, with an undo log for backtracking.

use tree_sitter::Node;

/// What one metavariable bound.
#[derive(Debug, Clone)]
pub enum Capture<'t> {
    /// `$NAME`: one node.
    One(Node<'t>),
    /// `$$$NAME`: a run of nodes, possibly empty.
    Many(Vec<Node<'t>>),
}

impl Capture<'_> {
    /// The source text the capture covers (for a run, from its first node to its last).
    pub fn text<'s>(&self, source: &'s str) -> &'s str {
        match self.byte_range() {
            Some(r) => &source[r],
            None => "",
        }
    }

    /// Whether the capture is one run of siblings: no other node (but a comment) between two
    /// of its nodes. Keyword arguments of a pattern match wherever they stand, so `$$$MID` in
    /// `f($H, $$$MID, out=$O)` holds `x` and `z=2` of `f(h, x, out=1, z=2)`: its text would
    /// carry `out=1` along.
    pub fn is_contiguous(&self) -> bool {
        let Capture::Many(nodes) = self else {
            return true;
        };
        nodes.windows(2).all(|pair| {
            let mut next = pair[0].next_named_sibling();
            while let Some(n) = next.filter(|n| n.kind() == "comment") {
                next = n.next_named_sibling();
            }
            next == Some(pair[1])
        })
    }

    /// The byte range covered, or `None` for an empty run.
    pub fn byte_range(&self) -> Option<std::ops::Range<usize>> {
        match self {
            Capture::One(n) => Some(n.byte_range()),
            Capture::Many(nodes) => Some(nodes.first()?.start_byte()..nodes.last()?.end_byte()),
        }
    }
}

#[derive(Debug, Clone)]
pub(super) enum Key {
    Name(String),
    ActionCall,
}

/// Metavariable bindings of a match, with an undo log for backtracking.
#[derive(Debug, Clone, Default)]
pub struct Bindings<'t> {
    pub(super) entries: Vec<(Key, Capture<'t>)>,
}

impl<'t> Bindings<'t> {
    /// What `name` is bound to.
    pub fn get(&self, name: &str) -> Option<&Capture<'t>> {
        self.entries.iter().find_map(|(k, c)| match k {
            Key::Name(n) if n == name => Some(c),
            _ => None,
        })
    }

    /// The call node an argument action edits, if the pattern has one.
    pub fn action_call(&self) -> Option<Node<'t>> {
        self.entries.iter().find_map(|(k, c)| match (k, c) {
            (Key::ActionCall, Capture::One(n)) => Some(*n),
            _ => None,
        })
    }

    /// Named bindings in the order they were made.
    pub fn named(&self) -> impl Iterator<Item = (&str, &Capture<'t>)> {
        self.entries.iter().filter_map(|(k, c)| match k {
            Key::Name(n) => Some((n.as_str(), c)),
            Key::ActionCall => None,
        })
    }

    /// Whether nothing is bound.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The named bindings alone: what a scope predicate hands on to the match it encloses
    /// (the call an action edits is the match's own).
    pub fn named_only(mut self) -> Self {
        self.entries.retain(|(k, _)| matches!(k, Key::Name(_)));
        self
    }

    /// The bound names and texts, for telling two binding sets apart.
    pub fn fingerprint<'s>(&self, source: &'s str) -> Vec<(&str, &'s str)> {
        self.named().map(|(n, c)| (n, c.text(source))).collect()
    }

    pub(super) fn checkpoint(&self) -> usize {
        self.entries.len()
    }

    pub(super) fn rollback(&mut self, checkpoint: usize) {
        self.entries.truncate(checkpoint);
    }
}
