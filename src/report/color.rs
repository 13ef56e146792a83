//! Colour: decided once per output stream by the front end, applied here with anstyle's
//! styles rather than hand-written escape codes.

use std::io::IsTerminal;

use anstyle::{AnsiColor, Effects, Style};

/// Whether one output stream gets colour; every rendering of that stream asks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Palette {
    enabled: bool,
}

impl Palette {
    /// Colour on or off.
    pub fn new(enabled: bool) -> Self {
        Self { enabled }
    }

    /// Colour for a stream: on where it is a terminal and `NO_COLOR` is not set.
    pub fn for_stream(stream: &impl IsTerminal) -> Self {
        Self::new(stream.is_terminal() && std::env::var_os("NO_COLOR").is_none())
    }

    /// Whether colour is on.
    pub fn enabled(self) -> bool {
        self.enabled
    }

    /// `text` in `style`, or as it is when colour is off.
    pub fn paint(self, style: Style, text: &str) -> String {
        if self.enabled {
            format!("{}{text}{}", style.render(), style.render_reset())
        } else {
            text.to_string()
        }
    }
}

/// Passing, added, fine.
pub const GOOD: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Green)));
/// Failing.
pub const BAD: Style = Style::new()
    .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)))
    .effects(Effects::BOLD);
/// Removed lines of a diff.
pub const REMOVED: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)));
/// Worth a look, not a failure.
pub const NOTE: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Yellow)));
/// Not applicable.
pub const QUIET: Style = Style::new().effects(Effects::DIMMED);
