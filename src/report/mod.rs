//! Every rendering of what the engine and the checks found: diagnostics, diffs, JSON, SARIF,
//! GitHub annotations, tables and summaries. Colour is decided by the caller, once per stream
//! (see [`color::Palette`]); nothing here prints.

pub mod apply;
pub mod color;
pub mod diagnostic;
pub mod explain;
pub mod findings;
pub mod lint;
pub mod matrix;
pub mod testing;

pub use apply::{ErrorJson, FileJson, STAMP_PREFIX, matches, stamp, summary, unified_diff};
pub use color::Palette;
pub use diagnostic::render;
pub use explain::{explain_rule, one_line};
