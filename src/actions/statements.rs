//! The patched file read for its module-level names one top-level statement at a time, where
//! the tree a step holds is of some statements only (a region parse).
//!
//! A signature lookup reads the bindings of a few names at the end of the module (see
//! `bindings`), which only statements whose text holds the name can make; a `class` or `def`
//! at module level binds its own name and no other. So the statements a name needs are found
//! from the text, and each is parsed alone, once, when first needed: a lookup in a large
//! modeling file parses the layer class and an import or two, not the file.

use std::ops::Range;
use std::sync::OnceLock;

use tree_sitter::{Node, Tree};

use crate::python::regions::{TopLevel, top_level_definitions};
use crate::python::significant_children;

/// The file's top-level statements, each parsed on first use.
#[derive(Debug)]
pub(crate) struct Statements {
    /// `None` where the scan cannot follow the text: the file is then read whole.
    items: Option<Vec<TopLevel>>,
    trees: Vec<OnceLock<Option<Tree>>>,
    whole: OnceLock<Tree>,
}

impl Statements {
    /// The statements of `text`, none parsed yet.
    pub fn new(text: &str) -> Self {
        let items = top_level_definitions(text);
        let count = items.as_ref().map_or(0, Vec::len);
        Self {
            items,
            trees: (0..count).map(|_| OnceLock::new()).collect(),
            whole: OnceLock::new(),
        }
    }

    /// The whole file's tree (parsed once, where a statement cannot be read alone).
    fn whole(&self, text: &str) -> &Tree {
        self.whole.get_or_init(|| crate::python::parse(text))
    }

    /// The node(s) of statement `i`, parsed alone; `None` where it does not parse so.
    fn statement(&self, text: &str, i: usize, range: &Range<usize>) -> Option<Vec<Node<'_>>> {
        let tree = self.trees[i]
            .get_or_init(|| crate::python::parse_regions(text, std::slice::from_ref(range)))
            .as_ref()?;
        Some(significant_children(tree.root_node()))
    }

    /// The top-level statements that may bind `name`, in document order: what a walk of the
    /// module for `name`'s bindings reads (`live_bindings` passes over a statement whose text
    /// lacks the name, other than `from … import *`). The whole module where a statement
    /// cannot be read alone.
    pub fn binding(&self, text: &str, name: &str) -> Vec<Node<'_>> {
        let Some(items) = &self.items else {
            return significant_children(self.whole(text).root_node());
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let body = &text[item.range.clone()];
            let may_bind = match &item.defines {
                Some(defined) => &text[defined.clone()] == name,
                None => body.contains(name) || (body.contains("import") && body.contains('*')),
            };
            if !may_bind {
                continue;
            }
            match self.statement(text, i, &item.range) {
                Some(nodes) => out.extend(nodes),
                None => return significant_children(self.whole(text).root_node()),
            }
        }
        out
    }

    /// The `class_definition` that starts at byte `at`.
    pub fn class_at(&self, text: &str, at: usize) -> Option<Node<'_>> {
        let found = self.items.as_ref().and_then(|items| {
            let i = items
                .partition_point(|s| s.range.start <= at)
                .checked_sub(1)?;
            let nodes = self.statement(text, i, &items[i].range)?;
            nodes.into_iter().find_map(|n| class_node(n, at))
        });
        found.or_else(|| class_node(self.whole(text).root_node(), at))
    }
}

/// The `class_definition` at or below `root` that starts at byte `at`.
pub(super) fn class_node(root: Node<'_>, at: usize) -> Option<Node<'_>> {
    let mut node = root.descendant_for_byte_range(at, at)?;
    loop {
        if node.kind() == "class_definition" && node.start_byte() == at {
            return Some(node);
        }
        node = node.parent()?;
    }
}
