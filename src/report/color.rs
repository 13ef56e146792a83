//! Colour: decided once per output stream by the front end, applied here with anstyle's
//! styles rather than hand-written escape codes.

use std::io::IsTerminal;

use anstyle::{AnsiColor, Effects, Style};

/// `--color`: when output is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// On terminals, as `NO_COLOR` and `FORCE_COLOR` say.
    #[default]
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

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

    /// Colour for a stream under `--color`: `always`/`never` decide; `auto` means on where
    /// the stream is a terminal, unless `NO_COLOR` is set and not empty, or on everywhere
    /// where `FORCE_COLOR` is set and not empty (the conventions of no-color.org and
    /// force-color.org).
    pub fn for_stream(stream: &impl IsTerminal, choice: ColorChoice) -> Self {
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        Self::new(match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto if set("NO_COLOR") => false,
            ColorChoice::Auto if set("FORCE_COLOR") => true,
            ColorChoice::Auto => stream.is_terminal(),
        })
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

/// A unified diff with added lines green and removed ones red, where `palette` colours.
pub fn paint_diff(diff: &str, palette: Palette) -> String {
    if !palette.enabled() {
        return diff.to_string();
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
