//! Renders diagnostics as miette reports.

use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme};

/// How wide diagnostics are wrapped: the terminal's width where stderr is one, else 100
/// columns (logs and captured output). Words — paths above all — are never split.
fn width() -> usize {
    terminal_size::terminal_size_of(std::io::stderr())
        .map_or(100, |(w, _)| usize::from(w.0).max(40))
}

/// The most source text a diagnostic's snippet shows: one of a longer line (minified code, a
/// 9 MB line) would print all of it (and miette cannot draw columns past 65,535), so such a
/// diagnostic names the place instead.
const MAX_SNIPPET_BYTES: usize = 8_000;

/// A diagnostic shown without its source snippet, its place given in words.
struct Unsnipped<'a> {
    inner: &'a dyn Diagnostic,
    at: String,
}

impl std::fmt::Debug for Unsnipped<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.inner, f)
    }
}

impl std::fmt::Display for Unsnipped<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (at {})", self.inner, self.at)
    }
}

impl std::error::Error for Unsnipped<'_> {}

impl Diagnostic for Unsnipped<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn std::fmt::Display + 'b>> {
        self.inner.code()
    }
    fn severity(&self) -> Option<miette::Severity> {
        self.inner.severity()
    }
    fn help<'b>(&'b self) -> Option<Box<dyn std::fmt::Display + 'b>> {
        self.inner.help()
    }
}

/// Where `diagnostic`'s first label is, in words, when the line it stands on is too long to
/// show.
fn too_long_to_show(diagnostic: &dyn Diagnostic) -> Option<String> {
    let source = diagnostic.source_code()?;
    let label = diagnostic.labels()?.next()?;
    // What the snippet would show: the label's lines and two either side.
    let lines = source.read_span(label.inner(), 2, 2).ok()?;
    if lines.data().len() <= MAX_SNIPPET_BYTES {
        return None;
    }
    let at = source.read_span(&(label.offset(), 0).into(), 0, 0).ok()?;
    Some(format!(
        "{}:{}:{}; the lines there hold {} bytes, too many to show",
        at.name().unwrap_or("<source>"),
        at.line() + 1,
        at.column() + 1,
        lines.data().len()
    ))
}

/// Renders `diagnostic` with its source snippet, coloured by `palette`.
pub fn render(diagnostic: &dyn Diagnostic, palette: super::Palette) -> String {
    if let Some(at) = too_long_to_show(diagnostic) {
        return render(
            &Unsnipped {
                inner: diagnostic,
                at,
            },
            palette,
        );
    }
    let theme = if palette.enabled() {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(width())
        .with_break_words(false)
        .with_word_splitter(textwrap::WordSplitter::NoHyphenation)
        .with_word_separator(textwrap::WordSeparator::AsciiSpace)
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
