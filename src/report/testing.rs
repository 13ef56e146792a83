//! Rendering of rule test results.

use super::color::{Palette, paint_diff};

/// A unified diff of expected → actual, coloured by `palette`.
pub fn colored_diff(expected: &str, actual: &str, palette: Palette) -> String {
    let diff = similar::TextDiff::from_lines(expected, actual)
        .unified_diff()
        .header("expected", "actual")
        .to_string();
    paint_diff(&diff, palette)
}
