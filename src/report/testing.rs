//! Rendering of rule test results.

use super::color::{GOOD, Palette, REMOVED};

/// A unified diff of expected → actual, coloured by `palette`.
pub fn colored_diff(expected: &str, actual: &str, palette: Palette) -> String {
    let diff = similar::TextDiff::from_lines(expected, actual)
        .unified_diff()
        .header("expected", "actual")
        .to_string();
    if !palette.enabled() {
        return diff;
    }
    diff.lines()
        .map(|l| {
            if l.starts_with('+') && !l.starts_with("+++") {
                format!("{}\n", palette.paint(GOOD, l))
            } else if l.starts_with('-') && !l.starts_with("---") {
                format!("{}\n", palette.paint(REMOVED, l))
            } else {
                format!("{l}\n")
            }
        })
        .collect()
}
