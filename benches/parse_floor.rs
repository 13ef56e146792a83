//! The parse floor: how long tree-sitter-python alone takes to parse a tree's Python files on
//! every core, with the allocator the CLI uses. No patcher that parses whole files can run a
//! workload faster than the floor of the files that workload must parse.
//!
//!     cargo bench --bench parse_floor -- DIR [LITERAL]
//!
//! prints the floor for every `*.py` file under DIR and, given LITERAL, for the files that
//! contain it (what a literal prefilter still has to parse).

use std::time::Instant;

use mimalloc::MiMalloc;
use rayon::prelude::*;

#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

fn main() {
    // SAFETY: first thing in main, on the only thread, before any tree-sitter object exists.
    unsafe { regraft::use_mimalloc_for_tree_sitter() };
    // `cargo bench` passes `--bench`; the remaining words are ours.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(dir) = args.first() else {
        eprintln!("usage: cargo bench --bench parse_floor -- DIR [LITERAL]");
        std::process::exit(2);
    };
    let mut files: Vec<String> = ignore::WalkBuilder::new(dir)
        .standard_filters(false)
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "py"))
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .collect();
    files.sort();
    measure("all files", &files);
    if let Some(literal) = args.get(1) {
        let some: Vec<String> = files
            .iter()
            .filter(|f| f.contains(literal.as_str()))
            .cloned()
            .collect();
        measure(&format!("files containing `{literal}`"), &some);
    }
}

fn measure(what: &str, files: &[String]) {
    let bytes: usize = files.iter().map(String::len).sum();
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let start = Instant::now();
        let nodes: usize = files
            .par_iter()
            .map(|f| regraft::python::parse(f).root_node().descendant_count())
            .sum();
        best = best.min(start.elapsed().as_secs_f64());
        assert!(nodes > 0 || files.is_empty());
    }
    println!(
        "{what}: {} files, {:.1} MB parsed in {best:.2} s wall on {} threads (best of 3), {:.1} MB/s",
        files.len(),
        bytes as f64 / 1e6,
        rayon::current_num_threads(),
        bytes as f64 / 1e6 / best
    );
}
