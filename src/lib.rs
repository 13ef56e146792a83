//! regraft: declarative, versioned source patches for Python libraries.
//!
//! Data flows one way: [`rules`] loads rule files into the rule model, [`compile`] turns them
//! into patterns and one tree-sitter query, [`engine`] matches, plans and applies edits per
//! file, and [`report`] renders what happened. The [`cli`] wires these together.

pub mod actions;
pub mod cli;
pub mod compile;
pub mod config;
pub mod edit;
pub mod engine;
pub mod error;
pub mod fetch;
pub mod lint;
pub mod lsp;
pub mod matrix;
pub mod modules;
pub mod pattern;
pub mod prefilter;
pub mod progress;
#[cfg(feature = "python")]
pub mod pyapi;
pub mod python;
pub mod reach;
pub mod report;
pub mod rules;
pub mod source;
pub mod targets;
pub mod testing;
pub mod versions;
pub mod write;

pub use error::Error;

/// Makes tree-sitter allocate with mimalloc, as the CLI's Rust code does: parsing whole trees
/// allocates and frees millions of small nodes, which mimalloc does markedly faster. A binary
/// that sets mimalloc as its global allocator calls this first thing in `main`.
///
/// # Safety
/// Must run before any tree-sitter object exists, on one thread.
pub unsafe fn use_mimalloc_for_tree_sitter() {
    // SAFETY: the caller guarantees no tree-sitter allocation is live; the four functions are
    // mimalloc's own malloc family, which returns libc-aligned memory.
    unsafe {
        tree_sitter::set_allocator(Some(tree_sitter::Allocator {
            malloc: libmimalloc_sys::mi_malloc,
            calloc: libmimalloc_sys::mi_calloc,
            realloc: libmimalloc_sys::mi_realloc,
            free: libmimalloc_sys::mi_free,
        }));
    }
}
