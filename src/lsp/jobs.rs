//! Requests that read the project's files (lenses, a metavariable's hover, `showDiff`, go to
//! definition) run on their own threads, so that a huge configured tree never blocks the
//! message loop: completion, diagnostics and other hovers are answered meanwhile. Each job has
//! a [`Budget`]: a deadline after which it answers with what it has surveyed so far, and a
//! flag the loop raises on `$/cancelRequest`, on a newer request of the same kind for the same
//! document, on an edit of the document, and at shutdown.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use lsp_server::{ErrorCode, Message, RequestId, Response};
use lsp_types::Uri;

const RUNNING: u8 = 0;
const CANCELLED: u8 = 1;
const MODIFIED: u8 = 2;

/// What a job may spend: it stops at the deadline or when the loop cancels it.
pub(super) struct Budget {
    state: Arc<AtomicU8>,
    deadline: Instant,
    limit: Duration,
}

impl Budget {
    /// Whether the job should stop now (cancelled, or out of time).
    pub(super) fn spent(&self) -> bool {
        self.state.load(Ordering::Relaxed) != RUNNING || Instant::now() >= self.deadline
    }

    /// The time the job was given, for saying why a survey stopped early.
    pub(super) fn limit(&self) -> Duration {
        self.limit
    }
}

/// How far a survey of the configured targets got.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Surveyed {
    /// Files read.
    pub done: usize,
    /// Files configured.
    pub of: usize,
}

impl Surveyed {
    /// `None` when every file was surveyed; otherwise the words saying how far it got.
    pub(super) fn shortfall(&self, budget: &Budget) -> Option<String> {
        (self.done < self.of).then(|| {
            format!(
                "surveyed {} of {} target file(s) within {} s",
                self.done,
                self.of,
                budget.limit().as_secs()
            )
        })
    }
}

struct Running {
    id: RequestId,
    method: String,
    uri: Uri,
    state: Arc<AtomicU8>,
    handle: JoinHandle<()>,
}

/// The jobs in flight.
pub(super) struct Jobs {
    sender: crossbeam_channel::Sender<Message>,
    running: Vec<Running>,
}

impl Jobs {
    /// Jobs that answer through `sender`.
    pub(super) fn new(sender: crossbeam_channel::Sender<Message>) -> Jobs {
        Jobs {
            sender,
            running: Vec::new(),
        }
    }

    /// Runs `work` for request `id` on its own thread; it answers exactly once: its value,
    /// or `RequestCancelled` / `ContentModified` when stopped by the loop. An earlier job of the
    /// same method for the same document is cancelled: its answer would be stale.
    pub(super) fn spawn<W>(
        &mut self,
        id: RequestId,
        method: &str,
        uri: Uri,
        limit: Duration,
        work: W,
    ) where
        W: FnOnce(&Budget) -> serde_json::Value + Send + 'static,
    {
        self.running.retain(|r| !r.handle.is_finished());
        for r in &self.running {
            if r.method == method && r.uri == uri {
                stop(&r.state, CANCELLED);
            }
        }
        let state = Arc::new(AtomicU8::new(RUNNING));
        let budget = Budget {
            state: Arc::clone(&state),
            deadline: Instant::now() + limit,
            limit,
        };
        let sender = self.sender.clone();
        let answer_id = id.clone();
        let handle = std::thread::spawn(move || {
            let value = work(&budget);
            let response = match budget.state.load(Ordering::Relaxed) {
                RUNNING => Response::new_ok(answer_id, value),
                MODIFIED => Response::new_err(
                    answer_id,
                    ErrorCode::ContentModified as i32,
                    "the document changed".into(),
                ),
                _ => Response::new_err(
                    answer_id,
                    ErrorCode::RequestCanceled as i32,
                    "cancelled".into(),
                ),
            };
            // The loop may have ended; nobody is left to answer.
            let _ = sender.send(Message::Response(response));
        });
        self.running.push(Running {
            id,
            method: method.into(),
            uri,
            state,
            handle,
        });
    }

    /// `$/cancelRequest`: the job answering `id`, if still running, stops.
    pub(super) fn cancel(&mut self, id: &RequestId) {
        for r in self.running.iter().filter(|r| &r.id == id) {
            stop(&r.state, CANCELLED);
        }
    }

    /// The document `uri` changed or closed: its jobs' answers would be stale.
    pub(super) fn modified(&mut self, uri: &Uri) {
        for r in self.running.iter().filter(|r| &r.uri == uri) {
            stop(&r.state, MODIFIED);
        }
    }

    /// Stops every job and waits for each to answer, so the transport flushes their answers
    /// before the server exits.
    pub(super) fn finish(self) {
        for r in &self.running {
            stop(&r.state, CANCELLED);
        }
        for r in self.running {
            let _ = r.handle.join();
        }
    }
}

/// Marks a job stopped, unless it already was (the first reason stands).
fn stop(state: &AtomicU8, why: u8) {
    let _ = state.compare_exchange(RUNNING, why, Ordering::Relaxed, Ordering::Relaxed);
}
