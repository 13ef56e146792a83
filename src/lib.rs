//! repatch: declarative, versioned source patches for Python libraries.
//!
//! Data flows one way: [`rules`] loads rule files into the rule model, [`compile`] turns them
//! into patterns and one tree-sitter query, [`engine`] matches, plans and applies edits per
//! file, and [`report`] renders what happened. The [`cli`] wires these together.

pub mod cli;
pub mod compile;
pub mod diagnostics;
pub mod engine;
pub mod error;
pub mod lint;
pub mod matrix;
pub mod pattern;
pub mod prefilter;
#[cfg(feature = "python")]
pub mod pyapi;
pub mod python;
pub mod report;
pub mod rules;
pub mod source;
pub mod targets;
pub mod testing;
pub mod versions;

pub use error::Error;
