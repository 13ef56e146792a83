//! Renders diagnostics as miette reports.

use std::io::IsTerminal;

use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme};

/// Whether stderr should get colour (a terminal, and `NO_COLOR` unset).
pub fn stderr_color() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Renders `diagnostic` with its source snippet, in colour or not.
pub fn render(diagnostic: &dyn Diagnostic, color: bool) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(100)
        .with_context_lines(2);
    let mut out = String::new();
    if handler.render_report(&mut out, diagnostic).is_err() {
        out = format!("error: {diagnostic}\n");
    }
    out
}
