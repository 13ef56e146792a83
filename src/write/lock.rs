//! One commit at a time per user: two `apply --write` runs on one tree at once would otherwise
//! interleave their checks and renames, and the rollback of one could put back the original
//! of a file the other had just patched. A commit holds an exclusive `flock` on one lock file
//! of the user's (in the temporary folder) from its first check to its last rename: commits
//! are short (checks and renames), so serializing them all costs nothing a user sees.

use std::fs;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};

/// The held lock; released when dropped (the descriptor closes).
pub(super) struct CommitLock(Option<fs::File>);

thread_local! {
    /// Whether this thread holds the lock: a rollback's own writes run inside the commit that
    /// holds it, and a second `flock` of the file from this process would wait for itself.
    static HELD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl Drop for CommitLock {
    fn drop(&mut self) {
        if self.0.take().is_some() {
            HELD.with(|h| h.set(false));
        }
    }
}

/// Takes the user's commit lock, waiting for another run's commit to end. Where the lock file
/// cannot be had as the user's own (another user made it, the folder is read-only), commits
/// go on without it: the per-file checks still refuse what changed since it was read.
pub(super) fn acquire() -> CommitLock {
    if HELD.with(std::cell::Cell::get) {
        return CommitLock(None);
    }
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let path = std::env::temp_dir().join(format!("regraft-{uid}-commit.lock"));
    let file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .ok()
        .filter(|f| f.metadata().is_ok_and(|m| m.uid() == uid));
    let Some(file) = file else {
        return CommitLock(None);
    };
    loop {
        // SAFETY: the descriptor is open for the call.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            HELD.with(|h| h.set(true));
            return CommitLock(Some(file));
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return CommitLock(None);
        }
    }
}
