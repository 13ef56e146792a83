//! Progress of long work (fetching releases, surveying a tree, patching many files), reported
//! by the floors that do the work and shown by whoever installed a [`Sink`]: the command line
//! draws bars on a terminal; a pipe, `--quiet`, the Python module and tests install none, and
//! then reporting costs a relaxed load.

use std::sync::OnceLock;

/// Shows progress: made once per process by the command line.
pub trait Sink: Send + Sync {
    /// A task named `label`, of `total` steps where that is known (else a spinner).
    fn begin(&self, label: &str, total: Option<u64>) -> Box<dyn Bar>;
}

/// One task's progress as a sink shows it.
pub trait Bar: Send + Sync {
    /// `n` more steps done.
    fn inc(&self, n: u64);
    /// The task ended: its bar goes.
    fn finish(&self);
}

static SINK: OnceLock<Box<dyn Sink>> = OnceLock::new();

/// Installs the process's sink; a second call is ignored (the first decided).
pub fn install(sink: Box<dyn Sink>) {
    let _ = SINK.set(sink);
}

/// A task in progress; dropping it ends it.
pub struct Task(Option<Box<dyn Bar>>);

/// Begins a task, shown where a sink is installed.
pub fn begin(label: &str, total: Option<u64>) -> Task {
    Task(SINK.get().map(|s| s.begin(label, total)))
}

impl Task {
    /// One more step done.
    pub fn step(&self) {
        if let Some(bar) = &self.0 {
            bar.inc(1);
        }
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish();
        }
    }
}
