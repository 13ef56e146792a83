//! The integration tests: one binary, so the crate is linked once, with one module per
//! feature and one runner of the `regraft` binary (`util`). Snapshots live in
//! `tests/snapshots/<feature>/`.

mod util;

mod actions;
mod atomicity;
mod attributes;
mod bad_inputs;
mod branches;
mod cli;
mod config;
mod cpython;
mod derive;
mod diagnostics;
mod differential;
mod dsl;
mod explain;
mod fetch;
mod fuzz_regressions;
mod generic;
mod groups;
mod hostile;
mod hostile_kinds;
mod imports;
mod layers;
mod lint;
mod lsp;
mod matching;
mod matrix;
mod names;
mod outline;
mod parameters;
mod pins;
mod precedence;
mod prefilter;
mod properties;
mod reach;
mod regions;
mod retire;
mod rule_tests;
mod runs;
mod scopes;
mod statuses;
mod strings;
mod vocabulary;
mod whisper;
