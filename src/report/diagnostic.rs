//! Renders diagnostics as miette reports.

use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme};

/// How wide diagnostics are wrapped: the terminal's width where stderr is one, else 100
/// columns (logs and captured output). Words — paths above all — are never split.
fn width() -> usize {
    terminal_size::terminal_size_of(std::io::stderr())
        .map_or(100, |(w, _)| usize::from(w.0).max(40))
}

/// Renders `diagnostic` with its source snippet, coloured by `palette`.
pub fn render(diagnostic: &dyn Diagnostic, palette: super::Palette) -> String {
    let theme = if palette.enabled() {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(width())
        .with_break_words(false)
        .with_context_lines(2);
    let mut out = String::new();
    if handler.render_report(&mut out, diagnostic).is_err() {
        out = format!("error: {diagnostic}\n");
    }
    out
}

/// Where a diagnostic points: the file its source is named after and its first label's
/// position (line and column from 1), for callers that want fields rather than a rendering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The name of the diagnostic's source (a rule file or target path).
    pub path: Option<String>,
    /// The line of the first label, from 1.
    pub line: usize,
    /// The column of the first label, from 1, in characters.
    pub column: usize,
}

/// The location of `diagnostic`'s first label, when it has a source and a label.
pub fn primary_location(diagnostic: &dyn Diagnostic) -> Option<Location> {
    let source = diagnostic.source_code()?;
    let label = diagnostic.labels()?.next()?;
    let contents = source.read_span(label.inner(), 0, 0).ok()?;
    Some(Location {
        path: contents.name().map(str::to_string),
        line: contents.line() + 1,
        column: contents.column() + 1,
    })
}
