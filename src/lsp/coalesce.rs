//! Diagnostics of edited documents, linted off the message loop after a quiet period: typing
//! sends a `didChange` per key, and linting each text in turn (hundreds of milliseconds for a
//! pack of hundreds of rules) delayed every completion queued behind them. The loop only
//! records the latest text; one worker thread lints a document once no change has come for
//! `QUIET`, and publishes only if the text it linted is still the latest.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use lsp_server::Message;
use lsp_types::Uri;

/// How long a document must go without a change before it is linted.
pub(super) const QUIET: Duration = Duration::from_millis(150);

/// A document's latest text, waiting to be linted.
struct Pending {
    text: String,
    changed: Instant,
}

#[derive(Default)]
struct State {
    pending: HashMap<Uri, Pending>,
    /// Bumped by every change and close: a lint of an older text is not published.
    versions: HashMap<Uri, u64>,
    stopping: bool,
}

/// The worker and what it shares with the loop.
pub(super) struct Linter {
    shared: Arc<(Mutex<State>, Condvar)>,
    handle: Option<JoinHandle<()>>,
}

impl Linter {
    /// A linter publishing through `sender`, diagnostics made by `lint`.
    pub(super) fn new<L>(sender: crossbeam_channel::Sender<Message>, lint: L) -> Linter
    where
        L: Fn(&Uri, &str) -> Message + Send + 'static,
    {
        let shared = Arc::new((Mutex::new(State::default()), Condvar::new()));
        let worker = Arc::clone(&shared);
        let handle = std::thread::spawn(move || work(&worker, &sender, &lint));
        Linter {
            shared,
            handle: Some(handle),
        }
    }

    /// `uri` now holds `text`: lint it once it has been quiet for `QUIET` (`now`: at once, for
    /// a document just opened).
    pub(super) fn changed(&self, uri: &Uri, text: String, now: bool) {
        let (lock, wake) = &*self.shared;
        let mut state = lock.lock().unwrap_or_else(|e| e.into_inner());
        *state.versions.entry(uri.clone()).or_default() += 1;
        let changed = if now {
            Instant::now() - QUIET
        } else {
            Instant::now()
        };
        state.pending.insert(uri.clone(), Pending { text, changed });
        wake.notify_one();
    }

    /// `uri` closed: nothing of it is linted or published any more.
    pub(super) fn closed(&self, uri: &Uri) {
        let (lock, _) = &*self.shared;
        let mut state = lock.lock().unwrap_or_else(|e| e.into_inner());
        state.pending.remove(uri);
        *state.versions.entry(uri.clone()).or_default() += 1;
    }

    /// Stops the worker (what is pending is dropped) and waits for it.
    pub(super) fn finish(mut self) {
        {
            let (lock, wake) = &*self.shared;
            lock.lock().unwrap_or_else(|e| e.into_inner()).stopping = true;
            wake.notify_one();
        }
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

/// The worker: waits for the document whose last change is oldest to go quiet, lints it
/// without holding the lock, and publishes if no change came meanwhile.
fn work<L>(shared: &(Mutex<State>, Condvar), sender: &crossbeam_channel::Sender<Message>, lint: &L)
where
    L: Fn(&Uri, &str) -> Message,
{
    let (lock, wake) = shared;
    let mut state = lock.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if state.stopping {
            return;
        }
        let next = (state.pending.iter())
            .min_by_key(|(_, p)| p.changed)
            .map(|(uri, p)| (uri.clone(), p.changed));
        let Some((uri, changed)) = next else {
            state = wake.wait(state).unwrap_or_else(|e| e.into_inner());
            continue;
        };
        let quiet_at = changed + QUIET;
        let now = Instant::now();
        if now < quiet_at {
            state = (wake.wait_timeout(state, quiet_at - now))
                .unwrap_or_else(|e| e.into_inner())
                .0;
            continue;
        }
        let Some(pending) = state.pending.remove(&uri) else {
            continue;
        };
        let version = state.versions.get(&uri).copied().unwrap_or_default();
        drop(state);
        let message = lint(&uri, &pending.text);
        state = lock.lock().unwrap_or_else(|e| e.into_inner());
        if state.versions.get(&uri).copied().unwrap_or_default() == version {
            // The loop may have ended; nobody is left to tell.
            let _ = sender.send(message);
        }
    }
}
