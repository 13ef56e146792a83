//! `lint` findings as [`Finding`]s, for JSON, GitHub workflow commands and SARIF.

use super::findings::{Finding, Level};
use crate::rules::error::RuleError;
use crate::source::LineIndex;

/// A lint finding, placed at its span in the rule file.
pub fn finding(e: &RuleError) -> Finding {
    let text = e.file.text();
    let index = LineIndex::new(text);
    Finding {
        severity: Level::of(Some(e.kind.severity())),
        code: e.kind.code_name().to_string(),
        message: e.to_string(),
        file: e.file_name.clone(),
        start: index.line_col(text, e.span.start),
        end: index.line_col(text, e.span.end.max(e.span.start)),
        help: e.help.clone(),
    }
}
