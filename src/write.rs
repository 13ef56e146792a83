//! Writing patched files so that a run cannot lose data: every new text is first written to a
//! temporary file beside its target (through symlinks, keeping owner, group and mode); only
//! when all exist, and every target still holds exactly what was read, are they renamed over
//! the targets. Any failure before that removes every temporary file and leaves every target
//! untouched. What remains non-atomic is the rename loop itself: one `rename(2)` per file.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tempfile::TempPath;

mod lock;

/// Why a set of writes was not carried out (nothing was written).
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum WriteError {
    /// A temporary file could not be made or filled, or a rename failed.
    #[error("cannot write {path}: {source}")]
    #[diagnostic(code(regraft::write::io))]
    Io {
        /// The target.
        path: String,
        /// The system's reason.
        source: std::io::Error,
    },
    /// The target changed on disk since it was read: writing would lose that change.
    #[error("{path} changed on disk while regraft ran; it was not overwritten")]
    #[diagnostic(
        code(regraft::write::changed),
        help("run again on the file as it is now")
    )]
    Changed {
        /// The target.
        path: String,
    },
    /// The new file cannot be given the original's owner and group.
    #[error("cannot keep the owner of {path} (uid {uid}, gid {gid}): {source}")]
    #[diagnostic(
        code(regraft::write::owner),
        help("run as the file's owner (or root), so the patched file keeps its owner")
    )]
    Owner {
        /// The target.
        path: String,
        /// The owner.
        uid: u32,
        /// The group.
        gid: u32,
        /// The system's reason.
        source: std::io::Error,
    },
    /// An extended attribute of the target could not be given to its replacement.
    #[error("cannot keep the extended attribute `{name}` of {path}: {source}")]
    #[diagnostic(
        code(regraft::write::xattr),
        help("run as a user who may set it (or remove it first), so the patched file keeps it")
    )]
    Xattr {
        /// The target.
        path: String,
        /// The attribute.
        name: String,
        /// The system's reason.
        source: std::io::Error,
    },
    /// The target is immutable or append-only (`chattr +i`/`+a`): it cannot be replaced.
    #[error("{path} is {flag}, so it cannot be replaced; nothing was written")]
    #[diagnostic(
        code(regraft::write::immutable),
        help("clear the flag (`chattr -i` / `chattr -a`) to patch it, or leave it out")
    )]
    Immutable {
        /// The target.
        path: String,
        /// `immutable` or `append-only`.
        flag: &'static str,
    },
    /// The target has other names (hard links): a new file in its place would detach them,
    /// leaving them the old text.
    #[error(
        "{path} has {links} hard links; replacing it would leave the other names with the old text, so nothing was written"
    )]
    #[diagnostic(
        code(regraft::write::hard_links),
        help(
            "pass --detach-links to give this name a file of its own (a package installed as links into a cache, as uv does), or patch the file the links share where it is meant to change everywhere"
        )
    )]
    HardLinks {
        /// The target.
        path: String,
        /// How many names the file has.
        links: u64,
    },
    /// A rename failed after others had replaced their targets; those were put back.
    #[error(
        "cannot replace {path}: {source}; the {restored} file(s) already replaced were restored"
    )]
    #[diagnostic(code(regraft::write::io))]
    RolledBack {
        /// The target whose rename failed.
        path: String,
        /// How many were put back.
        restored: usize,
        /// The system's reason.
        source: std::io::Error,
    },
    /// A signal arrived before the renames began.
    #[error("interrupted by {signal} before any file was written; nothing was changed")]
    #[diagnostic(code(regraft::write::interrupted))]
    Interrupted {
        /// The signal's name.
        signal: &'static str,
    },
}

fn io(path: &Path, source: std::io::Error) -> WriteError {
    WriteError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// One staged write: the temporary file, the real target, what it held when read and what
/// it is to hold.
#[derive(Debug)]
struct Staged {
    temp: TempPath,
    target: PathBuf,
    shown: PathBuf,
    original: Option<Vec<u8>>,
    contents: Vec<u8>,
}

/// Writes staged to be carried out together, or not at all.
#[derive(Debug, Default)]
pub struct WriteSet {
    staged: Vec<Staged>,
    detach_links: bool,
}

impl WriteSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Lets a target with hard links be replaced, its other names keeping the old file
    /// (refused otherwise: see [`WriteError::HardLinks`]).
    pub fn detaching_links(mut self) -> Self {
        self.detach_links = true;
        self
    }

    /// How many files are staged.
    pub fn len(&self) -> usize {
        self.staged.len()
    }

    /// Whether nothing is staged.
    pub fn is_empty(&self) -> bool {
        self.staged.is_empty()
    }

    /// Stages `contents` for `path`, whose bytes were `original` when read (`None`: a new
    /// file). A symlink is written through: its target is replaced, the link kept.
    pub fn stage(
        &mut self,
        path: &Path,
        original: Option<&[u8]>,
        contents: impl AsRef<[u8]>,
    ) -> Result<(), WriteError> {
        let contents = contents.as_ref();
        let target = match fs::canonicalize(path) {
            Ok(real) => real,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && original.is_none() => {
                path.to_path_buf()
            }
            Err(e) => return Err(io(path, e)),
        };
        if let Some(flag) = unreplaceable(&target) {
            return Err(WriteError::Immutable {
                path: path.display().to_string(),
                flag,
            });
        }
        let dir = target
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let mut temp = tempfile::Builder::new()
            .prefix(".regraft-")
            .tempfile_in(dir)
            .map_err(|e| io(path, e))?;
        temp.write_all(contents)
            .and_then(|()| temp.as_file().sync_all())
            .map_err(|e| io(path, e))?;
        match fs::metadata(&target) {
            Ok(meta) if meta.nlink() > 1 && !self.detach_links => {
                return Err(WriteError::HardLinks {
                    path: path.display().to_string(),
                    links: meta.nlink(),
                });
            }
            Ok(meta) => {
                let file = temp.as_file();
                let (uid, gid) = (meta.uid(), meta.gid());
                let temp_meta = file.metadata().map_err(|e| io(path, e))?;
                if (temp_meta.uid(), temp_meta.gid()) != (uid, gid) {
                    std::os::unix::fs::fchown(file, Some(uid), Some(gid)).map_err(|source| {
                        WriteError::Owner {
                            path: path.display().to_string(),
                            uid,
                            gid,
                            source,
                        }
                    })?;
                }
                file.set_permissions(meta.permissions())
                    .map_err(|e| io(path, e))?;
                keep_xattrs(&target, file, path)?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                temp.as_file()
                    .set_permissions(fs::Permissions::from_mode(0o644))
                    .map_err(|e| io(path, e))?;
            }
            Err(e) => return Err(io(path, e)),
        }
        self.staged.push(Staged {
            temp: temp.into_temp_path(),
            target,
            shown: path.to_path_buf(),
            original: original.map(<[u8]>::to_vec),
            contents: contents.to_vec(),
        });
        Ok(())
    }

    /// Checks that every target still holds what was read, then renames every temporary file
    /// over its target. `interrupted` (set by a signal handler) is honoured up to the first
    /// rename; once renames begin they all run, so the tree is never left half-patched by a
    /// signal. On error nothing is renamed and the temporary files are removed.
    pub fn commit(
        self,
        interrupted: &dyn Fn() -> Option<&'static str>,
    ) -> Result<usize, WriteError> {
        // Another run's commit finishes before this one's checks begin (see `lock`).
        let _lock = lock::acquire();
        // What each target is now (content compared with what was read; identity kept), checked
        // again by identity right before its own rename, the narrowest window the OS leaves. A
        // target that already holds what this run would write (another run patched it the
        // same way) is left as it is: done, not changed under us.
        let mut seen = Vec::with_capacity(self.staged.len());
        let mut staged = Vec::with_capacity(self.staged.len());
        for s in self.staged {
            let Some(original) = &s.original else {
                seen.push(None);
                staged.push(s);
                continue;
            };
            let now = fs::read(&s.target).map_err(|e| io(&s.shown, e))?;
            if now == s.contents {
                continue;
            }
            if &now != original {
                return Err(WriteError::Changed {
                    path: s.shown.display().to_string(),
                });
            }
            seen.push(identity(&s.target));
            staged.push(s);
        }
        if let Some(signal) = interrupted() {
            return Err(WriteError::Interrupted { signal });
        }
        let count = staged.len();
        // Each replaced target, what it held, and the identity of the file this run put there.
        let mut done: Vec<(PathBuf, Option<Vec<u8>>, Option<Identity>)> = Vec::new();
        for (staged, seen) in staged.into_iter().zip(seen) {
            let moved = seen.is_some() && identity(&staged.target) != seen;
            let renamed = if moved {
                Err(std::io::Error::other(
                    "it changed on disk (size, time or inode) while the write was under way",
                ))
            } else {
                staged.temp.persist(&staged.target).map_err(|e| e.error)
            };
            if let Err(e) = renamed {
                // Put back what was replaced, so the tree is as it was (best effort: the
                // originals are in memory, and each goes back by the same stage-and-rename) —
                // only where the file is still the one this run wrote: another writer's
                // version is never overwritten with the original.
                let restored = done
                    .iter()
                    .filter(|(target, original, ours)| {
                        identity(target) == *ours
                            && original
                                .as_ref()
                                .is_some_and(|o| write_one(target, None, o).is_ok())
                    })
                    .count();
                return Err(WriteError::RolledBack {
                    path: staged.shown.display().to_string(),
                    restored,
                    source: e,
                });
            }
            let ours = identity(&staged.target);
            done.push((staged.target, staged.original, ours));
        }
        Ok(count)
    }
}

/// A file's device, inode, size and modification time (seconds, nanoseconds).
type Identity = (u64, u64, u64, i64, i64);

/// A file's identity for the last check before its rename: device, inode, size and
/// modification time in nanoseconds.
fn identity(path: &Path) -> Option<Identity> {
    let m = fs::metadata(path).ok()?;
    Some((m.dev(), m.ino(), m.len(), m.mtime(), m.mtime_nsec()))
}

/// Whether `target` carries a flag that makes a rename over it fail (`chattr +i`, `+a`):
/// found while staging, so one such file in a tree stops the write before any rename.
#[cfg(target_os = "linux")]
fn unreplaceable(target: &Path) -> Option<&'static str> {
    use std::os::fd::AsRawFd;
    // _IOR('f', 1, long): FS_IOC_GETFLAGS; the flags are FS_IMMUTABLE_FL and FS_APPEND_FL.
    const FS_IOC_GETFLAGS: libc::c_ulong = 0x8008_6601;
    let file = fs::File::open(target).ok()?;
    let mut flags: libc::c_long = 0;
    // SAFETY: the descriptor is open for the call, and `flags` is the long the ioctl fills.
    let ok = unsafe { libc::ioctl(file.as_raw_fd(), FS_IOC_GETFLAGS as _, &mut flags) } == 0;
    match (ok, flags & 0x10 != 0, flags & 0x20 != 0) {
        (true, true, _) => Some("immutable"),
        (true, _, true) => Some("append-only"),
        _ => None,
    }
}

#[cfg(not(target_os = "linux"))]
fn unreplaceable(_target: &Path) -> Option<&'static str> {
    None
}

/// Gives `file` (the replacement of `target`) every extended attribute `target` has (ACLs,
/// `user.*` tags, labels): a rewrite must not drop what it never read. A file system without
/// extended attributes has none to keep; one that cannot be set refuses the write.
fn keep_xattrs(target: &Path, file: &fs::File, shown: &Path) -> Result<(), WriteError> {
    let Ok(names) = xattr::list(target) else {
        return Ok(());
    };
    for name in names {
        let refuse = |source| WriteError::Xattr {
            path: shown.display().to_string(),
            name: name.to_string_lossy().into_owned(),
            source,
        };
        let Some(value) = xattr::get(target, &name).map_err(refuse)? else {
            continue;
        };
        xattr::FileExt::set_xattr(file, &name, &value).map_err(refuse)?;
    }
    Ok(())
}

/// Replaces one file (a rule file `fmt` rewrites, a test snapshot) by the same rules: through
/// symlinks, keeping owner and mode, refusing if it changed since `original` was read.
pub fn write_one(
    path: &Path,
    original: Option<&[u8]>,
    contents: impl AsRef<[u8]>,
) -> Result<(), WriteError> {
    let mut set = WriteSet::new();
    set.stage(path, original, contents)?;
    set.commit(&|| None).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temps(dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        for entry in walk(dir) {
            let name = entry.file_name().unwrap().to_string_lossy().to_string();
            if name.starts_with(".regraft-") {
                out.push(name);
            }
        }
        out
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
        out
    }

    #[test]
    fn a_failure_in_the_middle_of_a_tree_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            dir.path().join("a.py"),
            dir.path().join("b/b.py"),
            dir.path().join("c.py"),
        );
        fs::create_dir(dir.path().join("b")).unwrap();
        for p in [&a, &b, &c] {
            fs::write(p, "x = 1\n").unwrap();
        }
        let mut set = WriteSet::new();
        set.stage(&a, Some(b"x = 1\n"), "x = 2\n").unwrap();
        // b's folder vanishes between the read and the write.
        fs::remove_dir_all(dir.path().join("b")).unwrap();
        assert!(set.stage(&b, Some(b"x = 1\n"), "x = 2\n").is_err());
        drop(set);
        assert_eq!(fs::read_to_string(&a).unwrap(), "x = 1\n");
        assert_eq!(fs::read_to_string(&c).unwrap(), "x = 1\n");
        assert!(temps(dir.path()).is_empty(), "{:?}", temps(dir.path()));
    }

    #[test]
    fn a_file_changed_since_it_was_read_stops_every_write() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.py"), dir.path().join("b.py"));
        fs::write(&a, "x = 1\n").unwrap();
        fs::write(&b, "y = 1\n").unwrap();
        let mut set = WriteSet::new();
        set.stage(&a, Some(b"x = 1\n"), "x = 2\n").unwrap();
        set.stage(&b, Some(b"y = 1\n"), "y = 2\n").unwrap();
        fs::write(&b, "y = 1  # someone else's edit\n").unwrap();
        let err = set.commit(&|| None).unwrap_err();
        assert!(matches!(err, WriteError::Changed { .. }), "{err}");
        assert_eq!(fs::read_to_string(&a).unwrap(), "x = 1\n");
        assert_eq!(
            fs::read_to_string(&b).unwrap(),
            "y = 1  # someone else's edit\n"
        );
        assert!(temps(dir.path()).is_empty());
    }

    #[test]
    fn a_file_another_run_already_patched_the_same_way_is_done_not_changed() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.py"), dir.path().join("b.py"));
        fs::write(&a, "x = 1\n").unwrap();
        fs::write(&b, "y = 1\n").unwrap();
        // Two runs read the same tree; the first commits, then the second.
        let mut first = WriteSet::new();
        let mut second = WriteSet::new();
        for set in [&mut first, &mut second] {
            set.stage(&a, Some(b"x = 1\n"), "x = 2\n").unwrap();
            set.stage(&b, Some(b"y = 1\n"), "y = 2\n").unwrap();
        }
        assert_eq!(first.commit(&|| None).unwrap(), 2);
        assert_eq!(second.commit(&|| None).unwrap(), 0, "nothing left to write");
        assert_eq!(fs::read_to_string(&a).unwrap(), "x = 2\n");
        assert_eq!(fs::read_to_string(&b).unwrap(), "y = 2\n");
        assert!(temps(dir.path()).is_empty());
    }

    #[test]
    fn a_hard_linked_target_is_refused_unless_detaching() {
        let dir = tempfile::tempdir().unwrap();
        let (a, link) = (dir.path().join("a.py"), dir.path().join("link.py"));
        fs::write(&a, "x = 1\n").unwrap();
        fs::hard_link(&a, &link).unwrap();
        let err = WriteSet::new()
            .stage(&a, Some(b"x = 1\n"), "x = 2\n")
            .unwrap_err();
        assert!(
            matches!(err, WriteError::HardLinks { links: 2, .. }),
            "{err}"
        );
        let mut set = WriteSet::new().detaching_links();
        set.stage(&a, Some(b"x = 1\n"), "x = 2\n").unwrap();
        set.commit(&|| None).unwrap();
        assert_eq!(fs::read_to_string(&a).unwrap(), "x = 2\n");
        assert_eq!(fs::read_to_string(&link).unwrap(), "x = 1\n");
        assert!(temps(dir.path()).is_empty());
    }

    #[test]
    fn a_symlink_is_written_through_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.py");
        let link = dir.path().join("link.py");
        fs::write(&real, "x = 1\n").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_one(&link, Some(b"x = 1\n"), "x = 2\n").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), "x = 2\n");
    }

    #[test]
    fn owner_group_and_mode_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.py");
        fs::write(&path, "x = 1\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        // Only root can give a file to someone else; elsewhere the mode is still checked.
        let root = is_root();
        if root {
            std::os::unix::fs::chown(&path, Some(1234), Some(1234)).unwrap();
        }
        write_one(&path, Some(b"x = 1\n"), "x = 2\n").unwrap();
        let meta = fs::metadata(&path).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o640);
        if root {
            assert_eq!((meta.uid(), meta.gid()), (1234, 1234));
        }
    }

    #[test]
    fn extended_attributes_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.py");
        fs::write(&path, "x = 1\n").unwrap();
        // Not every file system takes user attributes (tmpfs before Linux 6.6): nothing to
        // check there.
        if xattr::set(&path, "user.regraft.test", b"kept").is_err() {
            return;
        }
        write_one(&path, Some(b"x = 1\n"), "x = 2\n").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "x = 2\n");
        assert_eq!(
            xattr::get(&path, "user.regraft.test").unwrap().as_deref(),
            Some(&b"kept"[..])
        );
    }

    /// Whether this process runs as root (its files are created owned by uid 0).
    fn is_root() -> bool {
        let probe = tempfile::NamedTempFile::new().unwrap();
        probe.as_file().metadata().unwrap().uid() == 0
    }

    #[test]
    fn a_signal_before_the_renames_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.py");
        fs::write(&a, "x = 1\n").unwrap();
        let mut set = WriteSet::new();
        set.stage(&a, Some(b"x = 1\n"), "x = 2\n").unwrap();
        let err = set.commit(&|| Some("SIGINT")).unwrap_err();
        assert!(matches!(err, WriteError::Interrupted { .. }));
        assert_eq!(fs::read_to_string(&a).unwrap(), "x = 1\n");
        assert!(temps(dir.path()).is_empty());
    }

    #[test]
    fn a_rename_that_fails_midway_puts_back_what_was_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.py"), dir.path().join("b.py"));
        fs::write(&a, "x = 1\n").unwrap();
        let mut set = WriteSet::new();
        set.stage(&a, Some(b"x = 1\n"), "x = 2\n").unwrap();
        set.stage(&b, None, "y = 2\n").unwrap();
        // After staging, `b.py` becomes a folder: its rename fails after `a.py`'s went in.
        fs::create_dir(&b).unwrap();
        fs::write(b.join("keep"), "").unwrap();
        let err = set.commit(&|| None).unwrap_err();
        assert!(
            matches!(err, WriteError::RolledBack { restored: 1, .. }),
            "{err}"
        );
        assert_eq!(fs::read_to_string(&a).unwrap(), "x = 1\n");
        assert!(temps(dir.path()).is_empty());
    }
}
