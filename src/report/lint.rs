//! `lint` findings as [`Finding`]s, for JSON, GitHub workflow commands and SARIF.

use super::findings::{Finding, Level};
use crate::rules::error::RuleError;
use crate::source::LineIndex;

/// Lint findings, each placed at its span in its rule file (each file's lines indexed once:
/// an index per finding made thousands of findings quadratic in the file).
pub fn findings(errors: &[RuleError]) -> Vec<Finding> {
    let mut indexes: std::collections::HashMap<&str, LineIndex> = std::collections::HashMap::new();
    errors
        .iter()
        .map(|e| {
            let index = indexes
                .entry(e.file_name.as_str())
                .or_insert_with(|| LineIndex::new(e.file.text()));
            finding(e, index)
        })
        .collect()
}

/// A lint finding, placed at its span in the rule file whose lines `index` holds.
fn finding(e: &RuleError, index: &LineIndex) -> Finding {
    let text = e.file.text();
    Finding {
        severity: Level::of(Some(e.kind.severity())),
        code: e.kind.code_name().to_string(),
        message: e.to_string(),
        file: e.file_name.clone(),
        start: index.line_col(text, e.span.start),
        end: index.line_col(text, e.span.end.max(e.span.start)),
        help: e.help.clone(),
        rule: e.rule.clone(),
    }
}
