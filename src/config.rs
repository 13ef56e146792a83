//! Project configuration: `regraft.toml`, or `[tool.regraft]` in `pyproject.toml`, found by
//! walking up from the working directory as ruff and ast-grep find theirs. It supplies
//! defaults for the flags a command line leaves out: rule folders, package versions, a
//! site-packages folder, and folders and files to leave out of target walks.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use miette::{Diagnostic, NamedSource, SourceSpan};
use serde::Deserialize;
use thiserror::Error;

use crate::source::FileError;

/// The name of the configuration file regraft reads first in each folder.
pub const CONFIG_FILE: &str = "regraft.toml";

/// The keys of the configuration, as written in either file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Raw {
    /// Rule files or folders, relative to the configuration file.
    rules: Option<Vec<String>>,
    /// Package versions, `PKG=VER`.
    with: Option<Vec<String>>,
    /// A site-packages folder to read versions from and follow imports into.
    site_packages: Option<String>,
    /// Globs of target paths (relative to the configuration file) to leave out of walks.
    exclude: Option<Vec<String>>,
    /// Target files or folders (relative to the configuration file) that `apply` reads when
    /// the command line names none.
    targets: Option<Vec<String>>,
}

/// `pyproject.toml`, as far as regraft reads it.
#[derive(Debug, Deserialize)]
struct Pyproject {
    tool: Option<Tool>,
}

#[derive(Debug, Deserialize)]
struct Tool {
    regraft: Option<Raw>,
}

/// Why a configuration file could not be used.
#[derive(Debug, Error, Diagnostic)]
pub enum ConfigError {
    /// It could not be read.
    #[error(transparent)]
    #[diagnostic(transparent)]
    File(#[from] FileError),
    /// It is not valid TOML, or holds a key or value regraft does not take.
    #[error("{path}: {message}")]
    #[diagnostic(
        code(regraft::config),
        help(
            "keys: rules, with, site-packages, exclude, targets (in regraft.toml, or under [tool.regraft] in pyproject.toml)"
        )
    )]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
        /// Its text.
        #[source_code]
        src: NamedSource<String>,
        /// Where.
        #[label("here")]
        at: Option<SourceSpan>,
    },
}

/// A project's configuration, paths resolved against the folder of the file it came from.
#[derive(Debug, Default)]
pub struct Config {
    /// The file read; `None` where there is none.
    pub file: Option<PathBuf>,
    /// Rule files or folders.
    pub rules: Vec<PathBuf>,
    /// Package versions, `PKG=VER`.
    pub with: Vec<String>,
    /// A site-packages folder.
    pub site_packages: Option<PathBuf>,
    /// Target paths left out of folder walks.
    pub exclude: Option<Exclude>,
    /// Targets `apply` reads when the command line names none.
    pub targets: Vec<PathBuf>,
    /// A configuration file discovery found but did not read: another user owns it (or its
    /// folder), as git's `safe.directory` rule refuses such a repository.
    pub untrusted: Option<Untrusted>,
}

/// A configuration file passed over because someone else owns it.
#[derive(Debug, Clone, PartialEq)]
pub struct Untrusted {
    /// The file.
    pub file: PathBuf,
    /// Its owner (of the file, or of its folder where that is the foreign one).
    pub owner: u32,
}

/// The environment variable listing folders (separated like `PATH`) whose configuration is
/// read whoever owns it; `*` trusts every folder.
pub const SAFE_DIRECTORIES: &str = "REGRAFT_SAFE_DIRECTORIES";

/// The owner of `file` or of its folder, where that is not the current user: configuration
/// names rule files and a site-packages folder whose code regraft reads and the runtime runs,
/// so it is taken only from the user's own files (or folders trusted in `SAFE_DIRECTORIES`).
#[cfg(unix)]
fn foreign_owner(file: &Path, dir: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let trusted = std::env::var_os(SAFE_DIRECTORIES).is_some_and(|list| {
        std::env::split_paths(&list).any(|p| {
            p.as_os_str() == "*"
                || std::fs::canonicalize(&p).ok() == std::fs::canonicalize(dir).ok()
        })
    });
    if trusted {
        return None;
    }
    [file, dir]
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.uid())
        .find(|&uid| uid != me)
}

#[cfg(not(unix))]
fn foreign_owner(_file: &Path, _dir: &Path) -> Option<u32> {
    None
}

/// Globs of target paths that folder walks leave out, relative to a folder.
#[derive(Debug, Clone)]
pub struct Exclude {
    set: GlobSet,
    root: PathBuf,
}

impl Exclude {
    /// Whether a folder walk leaves out `path`: a glob matches its path relative to the
    /// configuration's folder, or (a glob without `/`) one of its components.
    pub fn matches(&self, path: &Path) -> bool {
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let root = std::path::absolute(&self.root).unwrap_or_else(|_| self.root.clone());
        let relative = absolute.strip_prefix(&root).unwrap_or(&absolute);
        self.set.is_match(relative)
            || relative
                .components()
                .any(|c| self.set.is_match(Path::new(c.as_os_str())))
    }
}

impl Config {
    /// The configuration that applies in `start`: the nearest `regraft.toml`, or
    /// `pyproject.toml` with a `[tool.regraft]` table, in `start` or a folder above it. A
    /// `pyproject.toml` without that table is passed over, as ruff does. The first file found
    /// that another user owns (or whose folder another user owns) ends the search with no
    /// configuration, and is named in `untrusted`, unless its folder is in
    /// `SAFE_DIRECTORIES`.
    pub fn discover(start: &Path) -> Result<Config, ConfigError> {
        // A file below the working directory is named as the user would name it.
        let shown = |file: PathBuf| crate::source::named_from_here(&file);
        for dir in start.ancestors() {
            let file = dir.join(CONFIG_FILE);
            let pyproject = dir.join("pyproject.toml");
            let found = if file.is_file() {
                file
            } else if pyproject.is_file() {
                // Another user's broken pyproject.toml is passed over, not an error of ours.
                let foreign = foreign_owner(&pyproject, dir).is_some();
                let has_table = match read(&pyproject) {
                    Ok((raw, _)) => raw.is_some(),
                    Err(_) if foreign => false,
                    Err(e) => return Err(e),
                };
                if !has_table {
                    continue;
                }
                pyproject
            } else {
                continue;
            };
            if let Some(owner) = foreign_owner(&found, dir) {
                let untrusted = Some(Untrusted {
                    file: shown(found),
                    owner,
                });
                return Ok(Config {
                    untrusted,
                    ..Config::default()
                });
            }
            return Config::load(&shown(found));
        }
        Ok(Config::default())
    }

    /// The configuration in `file` (`regraft.toml`, or a `pyproject.toml` whose
    /// `[tool.regraft]` table is read; without one it configures nothing).
    pub fn load(file: &Path) -> Result<Config, ConfigError> {
        let (raw, text) = read(file)?;
        let raw = raw.unwrap_or_default();
        let root = file
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        // Paths below the working directory stay relative, so diagnostics name them as a
        // user would type them.
        let resolve = |p: &str| crate::source::named_from_here(&root.join(p));
        let exclude = match &raw.exclude {
            None => None,
            Some(globs) => Some(Exclude {
                set: exclude_set(file, &text, globs)?,
                root: root.clone(),
            }),
        };
        for path in raw.rules.iter().flatten() {
            if let Some(kind) = not_file_or_folder(&root.join(path)) {
                let name = file.display().to_string();
                let at = text.find(path.as_str());
                return Err(ConfigError::Invalid {
                    path: name.clone(),
                    message: format!(
                        "the rules path `{path}` is {kind}: a configured rules path must be a file or a folder (a stream is for `-r` on the command line)"
                    ),
                    src: NamedSource::new(&name, text.clone()),
                    at: at.map(|a| (a, path.len()).into()),
                });
            }
        }
        Ok(Config {
            file: Some(file.to_path_buf()),
            rules: raw.rules.iter().flatten().map(|p| resolve(p)).collect(),
            with: raw.with.unwrap_or_default(),
            site_packages: raw.site_packages.as_deref().map(resolve),
            exclude,
            targets: raw.targets.iter().flatten().map(|p| resolve(p)).collect(),
            untrusted: None,
        })
    }
}

/// What `path` is when it exists but is neither a regular file nor a folder (links followed):
/// reading a FIFO or a device named in a configuration would hang or never end.
fn not_file_or_folder(path: &Path) -> Option<&'static str> {
    let kind = std::fs::metadata(path).ok()?.file_type();
    if kind.is_file() || kind.is_dir() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return Some("a FIFO");
        }
        if kind.is_socket() {
            return Some("a socket");
        }
    }
    Some("neither a file nor a folder")
}

/// Reads `file`: the regraft table (the whole of `regraft.toml`; `[tool.regraft]` of a
/// `pyproject.toml`, if it has one) and the text.
fn read(file: &Path) -> Result<(Option<Raw>, String), ConfigError> {
    let bytes = FileError::read_regular(file, 1 << 20, "configuration file", "")?;
    let name = file.display().to_string();
    let invalid =
        |text: &str, message: String, at: Option<std::ops::Range<usize>>| ConfigError::Invalid {
            path: name.clone(),
            message,
            src: NamedSource::new(&name, text.to_string()),
            at: at.map(|r| (r.start, r.end.saturating_sub(r.start)).into()),
        };
    let text =
        String::from_utf8(bytes).map_err(|e| invalid("", format!("not UTF-8 ({e})"), None))?;
    let is_pyproject = file.file_name().is_some_and(|n| n == "pyproject.toml");
    let raw = if is_pyproject {
        toml::from_str::<Pyproject>(&text).map(|p| p.tool.and_then(|t| t.regraft))
    } else {
        toml::from_str::<Raw>(&text).map(Some)
    };
    let raw = raw.map_err(|e| invalid(&text, e.message().to_string(), e.span()))?;
    Ok((raw, text))
}

/// The exclude globs of `file`, each checked.
fn exclude_set(file: &Path, text: &str, globs: &[String]) -> Result<GlobSet, ConfigError> {
    let mut set = GlobSetBuilder::new();
    for glob in globs {
        let built = GlobBuilder::new(glob).build().map_err(|e| {
            let at = text
                .find(&format!("\"{glob}\""))
                .map(|i| i..i + glob.len() + 2);
            ConfigError::Invalid {
                path: file.display().to_string(),
                message: format!("exclude glob `{glob}`: {}", e.kind()),
                src: NamedSource::new(file.display().to_string(), text.to_string()),
                at: at.map(|r| (r.start, r.end - r.start).into()),
            }
        })?;
        set.add(built);
    }
    set.build().map_err(|e| ConfigError::Invalid {
        path: file.display().to_string(),
        message: e.to_string(),
        src: NamedSource::new(file.display().to_string(), text.to_string()),
        at: None,
    })
}
