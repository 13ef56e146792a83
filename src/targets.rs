//! Finding, reading and writing target files.

use std::fs;
use std::path::{Path, PathBuf};

use miette::Diagnostic;
use thiserror::Error;

use crate::source::{FileError, span};

/// A target that cannot be read as Python source, or a file that cannot be written.
#[derive(Debug, Error, Diagnostic)]
pub enum TargetError {
    /// The file or folder itself failed.
    #[error(transparent)]
    #[diagnostic(transparent)]
    File(#[from] FileError),
    /// A target file is not UTF-8.
    #[error(
        "{path} is not valid UTF-8 (first invalid byte at offset {offset}); it is left untouched"
    )]
    #[diagnostic(code(regraft::target::encoding))]
    NotUtf8 {
        /// The file.
        path: String,
        /// Byte offset of the first invalid byte.
        offset: usize,
        /// The text up to the invalid byte, lossily decoded.
        #[source_code]
        src: miette::NamedSource<String>,
        /// The invalid byte.
        #[label("invalid UTF-8")]
        at: miette::SourceSpan,
    },
    /// A target file holds a NUL byte, which Python source cannot.
    #[error(
        "{path} holds a NUL byte at offset {offset}, which Python source cannot; it is left untouched"
    )]
    #[diagnostic(code(regraft::target::nul))]
    NulByte {
        /// The file.
        path: String,
        /// Byte offset of the NUL.
        offset: usize,
        /// The file's text.
        #[source_code]
        src: miette::NamedSource<String>,
        /// The NUL byte.
        #[label("NUL byte")]
        at: miette::SourceSpan,
    },
    /// A target declares (PEP 263) an encoding regraft does not read.
    #[error(
        "{path} declares the encoding `{name}`, which regraft does not read; it is left untouched"
    )]
    #[diagnostic(
        code(regraft::target::encoding),
        help("regraft reads UTF-8, ASCII and Latin-1 sources")
    )]
    UnknownEncoding {
        /// The file.
        path: String,
        /// The encoding as declared.
        name: String,
    },
    /// The patched text holds a character the file's declared encoding cannot.
    #[error(
        "{path} declares an encoding that cannot hold `{character}`, which the patch writes; nothing was written"
    )]
    #[diagnostic(code(regraft::target::encoding))]
    Unencodable {
        /// The file.
        path: String,
        /// The character.
        character: char,
        /// The patched text.
        #[source_code]
        src: miette::NamedSource<String>,
        /// Where.
        #[label("not in the file's encoding")]
        at: miette::SourceSpan,
    },
}

impl TargetError {
    /// A one-word name for the kind of failure.
    pub fn kind(&self) -> &'static str {
        match self {
            TargetError::File(f) => f.kind(),
            TargetError::NotUtf8 { .. }
            | TargetError::NulByte { .. }
            | TargetError::UnknownEncoding { .. }
            | TargetError::Unencodable { .. } => "encoding",
        }
    }
}

fn io(path: &Path, e: std::io::Error) -> TargetError {
    TargetError::File(FileError::io(path, e))
}

/// A Python file to patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetFile {
    /// Where it is on disk.
    pub path: PathBuf,
    /// The path shown in reports and matched by `files` globs, `/`-separated.
    pub display: String,
}

/// Expands files and folders (walked for `*.py`, honouring `.gitignore`) into target files,
/// each folder's files in path order.
pub fn collect(paths: &[PathBuf]) -> Result<Vec<TargetFile>, TargetError> {
    collect_excluding(paths, std::sync::Arc::new(|_: &Path| false))
}

/// Which paths a folder walk leaves out (shared with the walker's threads).
pub type Excluded = std::sync::Arc<dyn Fn(&Path) -> bool + Send + Sync>;

/// [`collect`], leaving out of folder walks the files and folders `excluded` names (a path
/// given by name is always kept, as ruff keeps it).
pub fn collect_excluding(
    paths: &[PathBuf],
    excluded: Excluded,
) -> Result<Vec<TargetFile>, TargetError> {
    let mut out = Vec::new();
    for path in paths {
        let metadata = fs::metadata(path).map_err(|e| io(path, e))?;
        if !metadata.is_dir() {
            out.push(target(path.clone()));
            continue;
        }
        let mut found = Vec::new();
        let excluded = excluded.clone();
        let walk = ignore::WalkBuilder::new(path)
            .follow_links(false)
            .filter_entry(move |e| e.depth() == 0 || !excluded(e.path()))
            .build();
        for entry in walk {
            let entry = entry.map_err(|e| FileError::walk(path, e))?;
            let is_py = entry.path().extension().is_some_and(|e| e == "py");
            if is_py && entry.file_type().is_some_and(|t| t.is_file()) {
                found.push(target(entry.into_path()));
            }
        }
        found.sort_by(|a, b| a.path.cmp(&b.path));
        out.extend(found);
    }
    Ok(out)
}

/// `files` with each file on disk once: a later path that names the same file as an earlier
/// one (a hard link, a symlink, the same path twice) is dropped, and returned with the
/// `display` of the one kept. Two writes of one file would see the first as a change on disk.
pub fn distinct(files: Vec<TargetFile>) -> (Vec<TargetFile>, Vec<(TargetFile, String)>) {
    let mut seen: Vec<(FileId, String)> = Vec::new();
    let mut kept = Vec::with_capacity(files.len());
    let mut dropped = Vec::new();
    for file in files {
        let Some(id) = file_id(&file.path) else {
            kept.push(file);
            continue;
        };
        match seen.iter().find(|(other, _)| *other == id) {
            Some((_, first)) => dropped.push((file, first.clone())),
            None => {
                seen.push((id, file.display.clone()));
                kept.push(file);
            }
        }
    }
    (kept, dropped)
}

/// What identifies a file on disk, links followed.
#[derive(PartialEq, Eq)]
struct FileId(u64, u64);

#[cfg(unix)]
fn file_id(path: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::metadata(path).ok()?;
    Some(FileId(meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn file_id(path: &Path) -> Option<FileId> {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    fs::canonicalize(path).ok()?.hash(&mut hasher);
    Some(FileId(0, hasher.finish()))
}

fn target(path: PathBuf) -> TargetFile {
    let display = glob_path(&path);
    TargetFile { path, display }
}

/// A path as globs see it: `/`-separated, without a leading `./`.
pub fn glob_path(path: &Path) -> String {
    let s = path.to_string_lossy().replace('\\', "/");
    // Lexically normal, so `models//x`, `models/./x` and `a/../models/x` are seen as
    // `models/x` by `files` globs (an exclusion must not be stepped around by spelling).
    let absolute = s.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in s.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            ".." if absolute => {}
            part => parts.push(part),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

/// The encoding a source file declares in a PEP 263 coding cookie (a comment on its first or
/// second line), as CPython reads it; UTF-8 without one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-8 (and its aliases).
    Utf8,
    /// ASCII: UTF-8's first 128 characters only.
    Ascii,
    /// Latin-1 (ISO 8859-1): each byte is the character of that number.
    Latin1,
    /// Any other codec, which regraft does not read or write (named as written).
    Other(String),
}

/// The encoding `start` (a file's first bytes or its text) declares.
pub fn declared_encoding(start: &[u8]) -> Encoding {
    static COOKIE: std::sync::LazyLock<regex::bytes::Regex> = std::sync::LazyLock::new(|| {
        regex::bytes::Regex::new(r"^[ \t\x0c]*#.*?coding[:=][ \t]*([-\w.]+)").expect("valid")
    });
    let start = start.strip_prefix(b"\xef\xbb\xbf").unwrap_or(start);
    let mut lines = start.split(|&b| b == b'\n').take(2);
    let first = lines.next().unwrap_or_default();
    // The second line counts only below a first line that holds nothing but a comment.
    let first_is_comment = first
        .iter()
        .find(|b| !b" \t\x0c\r".contains(b))
        .is_none_or(|&b| b == b'#');
    let candidates = std::iter::once(first).chain(lines.filter(|_| first_is_comment));
    for line in candidates {
        if let Some(name) = COOKIE.captures(line).and_then(|c| c.get(1)) {
            let name = String::from_utf8_lossy(name.as_bytes())
                .to_ascii_lowercase()
                .replace('_', "-");
            let is = |base: &str| name == base || name.starts_with(&format!("{base}-"));
            return if is("utf-8") || name == "utf8" {
                Encoding::Utf8
            } else if [
                "latin-1",
                "latin1",
                "iso-8859-1",
                "iso8859-1",
                "iso-latin-1",
                "l1",
            ]
            .iter()
            .any(|b| is(b))
            {
                Encoding::Latin1
            } else if name == "ascii" || name == "us-ascii" {
                Encoding::Ascii
            } else {
                Encoding::Other(name)
            };
        }
    }
    Encoding::Utf8
}

/// `text`, a target's (patched) text, as the bytes its coding cookie says: Latin-1 files are
/// written back in Latin-1, never as UTF-8. `Err` names the first character the encoding
/// cannot hold.
pub fn encode<'t>(display: &str, text: &'t str) -> Result<std::borrow::Cow<'t, [u8]>, TargetError> {
    let unencodable = |limit: u32| {
        text.char_indices()
            .find(|(_, c)| u32::from(*c) > limit)
            .map(|(at, c)| TargetError::Unencodable {
                path: display.to_string(),
                character: c,
                src: miette::NamedSource::new(display, text.to_string()),
                at: span(at..at + c.len_utf8()),
            })
    };
    match declared_encoding(text.as_bytes()) {
        Encoding::Utf8 | Encoding::Other(_) => Ok(text.as_bytes().into()),
        Encoding::Ascii => match unencodable(0x7f) {
            Some(e) => Err(e),
            None => Ok(text.as_bytes().into()),
        },
        Encoding::Latin1 => match unencodable(0xff) {
            Some(e) => Err(e),
            None => Ok(text.chars().map(|c| c as u8).collect::<Vec<u8>>().into()),
        },
    }
}

/// Decodes a target's bytes by its coding cookie (UTF-8 without one), refusing bytes its
/// encoding cannot hold, an encoding regraft does not read, and NUL bytes, with the offset of
/// the first.
pub fn decode(display: &str, bytes: Vec<u8>) -> Result<String, TargetError> {
    match declared_encoding(&bytes[..bytes.len().min(4096)]) {
        Encoding::Latin1 if memchr::memchr(0, &bytes).is_none() => {
            return Ok(bytes.iter().map(|&b| char::from(b)).collect());
        }
        Encoding::Other(name) => {
            return Err(TargetError::UnknownEncoding {
                path: display.to_string(),
                name,
            });
        }
        _ => {}
    }
    decode_utf8(display, bytes)
}

/// Decodes UTF-8, refusing invalid bytes and NUL bytes with the offset of the first.
fn decode_utf8(display: &str, bytes: Vec<u8>) -> Result<String, TargetError> {
    if let Some(offset) = memchr::memchr(0, &bytes) {
        let shown = String::from_utf8_lossy(&bytes).replace('\0', "\u{2400}");
        return Err(TargetError::NulByte {
            path: display.to_string(),
            offset,
            src: miette::NamedSource::new(display, shown),
            at: span(offset..offset + 1),
        });
    }
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
        TargetError::NotUtf8 {
            path: display.to_string(),
            offset,
            src: miette::NamedSource::new(display, lossy),
            at: span(offset..offset + 1),
        }
    })
}

/// The largest target read unless the caller raises it (`--max-file-size`): Python modules
/// are kilobytes to a few megabytes, and tree-sitter's tree of the densest code (one flat
/// list) takes about 420 bytes per byte of source — 3.5 GB and 51 s for 8 MB with a match.
pub const MAX_FILE_BYTES: u64 = 8 << 20;

/// Reads a target file as UTF-8.
pub fn read(file: &TargetFile) -> Result<String, TargetError> {
    read_capped(file, MAX_FILE_BYTES)
}

/// Reads a target file as UTF-8, refusing before reading one that is not a regular file
/// (`/dev/zero`, a FIFO) or is larger than `max` bytes.
pub fn read_capped(file: &TargetFile, max: u64) -> Result<String, TargetError> {
    let bytes = FileError::read_regular(
        &file.path,
        max,
        "target",
        " (raise it with --max-file-size)",
    )?;
    decode(&file.display, bytes)
}
