//! The command line's progress bars (indicatif), on stderr where it is a terminal and the run
//! is not `--quiet`: nothing is drawn into a pipe, a file or CI's log.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::progress::{Bar, Sink};

struct Terminal;

struct Shown(ProgressBar);

impl Sink for Terminal {
    fn begin(&self, label: &str, total: Option<u64>) -> Box<dyn Bar> {
        let bar = match total {
            Some(n) => ProgressBar::new(n).with_style(
                ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({elapsed})")
                    .expect("a valid template")
                    .progress_chars("=> "),
            ),
            None => ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                    .expect("a valid template"),
            ),
        };
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.set_message(label.to_string());
        if total.is_none() {
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
        }
        Box::new(Shown(bar))
    }
}

impl Bar for Shown {
    fn inc(&self, n: u64) {
        self.0.inc(n);
    }

    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// Installs the bars where they can be seen: stderr a terminal, and no `-q`.
pub(super) fn install(verbosity: i8) {
    if verbosity >= 0 && std::io::stderr().is_terminal() {
        crate::progress::install(Box::new(Terminal));
    }
}
