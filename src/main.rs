//! The `regraft` command.

use mimalloc::MiMalloc;

// Parsing whole upstream trees allocates and frees millions of small syntax nodes; mimalloc
// does that markedly faster than the system allocator, for Rust and tree-sitter's C alike.
#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

fn main() -> std::process::ExitCode {
    // SAFETY: first thing in main, on the only thread, before any tree-sitter object exists.
    unsafe { regraft::use_mimalloc_for_tree_sitter() };
    std::process::ExitCode::from(regraft::cli::run())
}
