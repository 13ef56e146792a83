//! The `regraft` command.

use mimalloc::MiMalloc;

// Parsing whole upstream trees allocates and frees millions of small syntax nodes; mimalloc
// does that markedly faster than the system allocator, for Rust and tree-sitter's C alike.
#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

fn main() -> std::process::ExitCode {
    // SAFETY: first thing in main, on the only thread, before any tree-sitter object exists.
    unsafe { regraft::use_mimalloc_for_tree_sitter() };
    // mimalloc asks for transparent huge pages on its arenas, so every 2 MB region a run
    // touches becomes resident and zeroed whole: over a tree that added 30-45 MB of peak RSS
    // and the kernel's zeroing showed in profiles. The CLI turns them off for itself (the
    // Python module leaves its host process alone).
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes plain integers and only sets a flag on this process.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
    std::process::ExitCode::from(regraft::cli::run())
}
