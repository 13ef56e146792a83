//! A target's syntax tree, whole or of some statements only, and keeping it current as edits
//! are applied.

use std::ops::Range;

use tree_sitter::{Node, Tree};

use super::{PatchError, Target};
use crate::edit::{PlannedEdit, Shifts};
use crate::python::cpython::{self, CpythonError};
use crate::python::{self, describe_syntax_error, first_syntax_error};
use crate::source::{SourceFile, span};

/// The most statements parsed alone: tree-sitter's lexer searches the included ranges linearly
/// at each jump between them, so many regions cost their count squared (2,000 of a 250 KB
/// module took longer than the whole module).
const MAX_REGIONS: usize = 256;

/// A file's syntax tree and, where only some statements were parsed, which.
pub(crate) struct Parsed {
    /// The tree.
    pub tree: Tree,
    /// The byte ranges parsed; `None` for the whole file.
    pub regions: Option<Vec<Range<usize>>>,
}

impl Parsed {
    /// A parse of the whole file.
    pub fn whole(tree: Tree) -> Self {
        Parsed {
            tree,
            regions: None,
        }
    }

    /// A parse of the statements at `regions` alone; `None` where they do not parse cleanly.
    /// Past [`MAX_REGIONS`] the whole file is parsed.
    pub fn regions(text: &str, regions: Vec<Range<usize>>) -> Option<Self> {
        if regions.len() > MAX_REGIONS {
            return Some(Parsed::whole(python::parse(text)));
        }
        let tree = python::parse_regions(text, &regions)?;
        Some(Parsed {
            tree,
            regions: Some(regions),
        })
    }

    /// Of this region parse, the regions `edits` (ordered, in old-text offsets, within the
    /// regions) changed, moved to `new_text`'s offsets and parsed alone; a whole parse where
    /// they do not parse cleanly.
    pub fn edited_regions(&self, new_text: &str, edits: &[PlannedEdit]) -> Parsed {
        let shifts = Shifts::new(edits);
        // Edits are ordered: the first at or after a region's start says whether one lies in
        // it (a search, not a scan of every edit for every region).
        let holds_edit = |r: &Range<usize>| {
            let first = edits.partition_point(|p| p.edit.range.start < r.start);
            edits
                .get(first)
                .is_some_and(|p| p.edit.range.start <= r.end && p.edit.range.end <= r.end)
        };
        let regions: Vec<Range<usize>> = self
            .regions
            .iter()
            .flatten()
            .filter(|r| holds_edit(r))
            .map(|r| shifts.moved(r.start)..shifts.moved(r.end))
            .collect();
        Parsed::regions_or_whole(new_text, regions, |regions| {
            python::parse_regions(new_text, regions)
        })
    }

    /// `regions` parsed by `parse`, or, where they do not parse cleanly, the whole text.
    fn regions_or_whole(
        text: &str,
        regions: Vec<Range<usize>>,
        parse: impl FnOnce(&[Range<usize>]) -> Option<Tree>,
    ) -> Parsed {
        if regions.len() > MAX_REGIONS {
            return Parsed::whole(python::parse(text));
        }
        match parse(&regions) {
            Some(tree) => Parsed {
                tree,
                regions: Some(regions),
            },
            None => Parsed::whole(python::parse(text)),
        }
    }

    /// The tree of `new_text`, the result of applying `edits` (ordered, in `old_text` offsets,
    /// and within the parsed regions) to `old_text`. Regions that no longer parse cleanly give
    /// way to a whole parse, which pins down what the edits broke.
    pub fn reparse(&self, old_text: &str, edits: &[PlannedEdit], new_text: &str) -> Parsed {
        let Some(regions) = &self.regions else {
            let tree = python::reparse(&self.tree, old_text, edits, new_text, None)
                .expect("a whole parse always yields a tree");
            return Parsed::whole(tree);
        };
        let shifts = Shifts::new(edits);
        let regions: Vec<Range<usize>> = regions
            .iter()
            .map(|r| shifts.moved(r.start)..shifts.moved(r.end))
            .collect();
        Parsed::regions_or_whole(new_text, regions, |regions| {
            python::reparse(&self.tree, old_text, edits, new_text, Some(regions))
        })
    }
}

/// Parses a target, refusing one that does not parse with a diagnostic at its first error.
pub(crate) fn parse_target(target: Target<'_>) -> Result<Tree, PatchError> {
    let tree = python::parse(target.source);
    match first_syntax_error(tree.root_node()) {
        None => Ok(tree),
        // CPython's own word first, where it has one: tree-sitter gives up on some inputs
        // (3,000 nested blocks) with an error that names the wrong cause.
        Some(_) if let Some(error) = compile_error(target.source) => {
            Err(rejected_target(target, error))
        }
        Some(error) => Err(PatchError::TargetSyntax {
            path: target.path.to_string(),
            reason: describe_syntax_error(error, target.source),
            src: SourceFile::new(target.path, target.source).named_source(),
            at: span(error_span(error, target.source)),
        }),
    }
}

/// The first error CPython's `compile()` reports in `text`, syntax newer than the oldest
/// supported Python aside (a target may use it: see `cpython`).
pub(crate) fn compile_error(text: &str) -> Option<CpythonError> {
    cpython::errors(text).into_iter().find(|e| !e.version_only)
}

/// Where to point at a CPython error in `text`: at least one character, within the text.
pub(crate) fn error_range(error: &CpythonError, text: &str) -> Range<usize> {
    let start = error.range.start.min(text.len());
    start..error.range.end.max(start + 1).min(text.len().max(1))
}

/// The refusal of a target CPython rejects as it is.
pub(crate) fn rejected_target(target: Target<'_>, error: CpythonError) -> PatchError {
    PatchError::TargetSyntax {
        path: target.path.to_string(),
        reason: format!("CPython rejects it: {}", error.message),
        src: SourceFile::new(target.path, target.source).named_source(),
        at: span(error_range(&error, target.source)),
    }
}

/// Where to point at a syntax error node: itself, or for an empty (MISSING) node the
/// character before it.
pub(crate) fn error_span(error: Node<'_>, text: &str) -> Range<usize> {
    let r = error.byte_range();
    if r.is_empty() {
        // A MISSING node is empty: point at the character before it, or the end.
        let start = r.start.min(text.len());
        let prev = text[..start].char_indices().last().map_or(0, |(i, _)| i);
        prev..start.max(prev + 1).min(text.len().max(1))
    } else {
        r
    }
}
