//! The `repatch` command.

use mimalloc::MiMalloc;

// Parsing whole upstream trees allocates and frees millions of small syntax nodes; mimalloc
// does that markedly faster than the system allocator, for Rust and tree-sitter's C alike.
#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

fn main() -> std::process::ExitCode {
    // SAFETY: called first, before any tree-sitter object exists, on the only thread; the
    // four functions are mimalloc's own malloc family, which returns libc-aligned memory.
    unsafe {
        tree_sitter::set_allocator(Some(tree_sitter::Allocator {
            malloc: libmimalloc_sys::mi_malloc,
            calloc: libmimalloc_sys::mi_calloc,
            realloc: libmimalloc_sys::mi_realloc,
            free: libmimalloc_sys::mi_free,
        }));
    }
    std::process::ExitCode::from(repatch::cli::run())
}
