//! Upstream releases on demand: the versions a package index has, and each release's Python
//! sources unpacked into a cache outside the project (never committed), fetched once.
//!
//! pip does the talking to the index, so the user's pip configuration (index URL, proxies,
//! `PIP_FIND_LINKS` / `PIP_NO_INDEX` for a local mirror) applies as it does to every install;
//! a wheel is a zip, unpacked with Python's own `zipfile` by the same interpreter. Writing an
//! index client and a zip reader here would duplicate both for no gain.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::str::FromStr;

use pep440_rs::{Version, VersionSpecifiers};

/// Why a release could not be listed or fetched.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum FetchError {
    /// The `--fetch` argument is not `PKG<specifiers>` or `PKG==PATTERN,...`.
    #[error(
        "`{arg}` is not a release selection: write `PKG>=4.46`, `PKG>=4.46,<5` or `PKG==4.46.*,4.5*,5.*`"
    )]
    #[diagnostic(code(regraft::fetch::spec))]
    Spec {
        /// The argument as given.
        arg: String,
    },
    /// pip could not be run or failed.
    #[error("{what} failed: {detail}")]
    #[diagnostic(
        code(regraft::fetch::pip),
        help(
            "releases are fetched with `{python} -m pip` into {cache}; offline, fill that cache (bench/fetch-transformers.sh) or point PIP_FIND_LINKS at local wheels with PIP_NO_INDEX=1"
        )
    )]
    Pip {
        /// What was attempted.
        what: String,
        /// pip's last words.
        detail: String,
        /// The interpreter used.
        python: String,
        /// The cache folder.
        cache: String,
    },
    /// A cached release's files are not what was fetched: edited, added or removed since.
    #[error("the cached release {release} was changed after it was fetched: {detail}")]
    #[diagnostic(
        code(regraft::fetch::tampered),
        help("remove {folder} to fetch the release again")
    )]
    Tampered {
        /// `package==version`.
        release: String,
        /// Which file and how.
        detail: String,
        /// The release's cache folder.
        folder: String,
    },
    /// No release matches.
    #[error("no release of {package} matches `{selection}` (the index has {available})")]
    #[diagnostic(code(regraft::fetch::none))]
    NoRelease {
        /// The package.
        package: String,
        /// The selection as written.
        selection: String,
        /// A few versions the index has.
        available: String,
    },
}

/// Which releases of a package: PEP 440 specifiers (all must hold), or version patterns
/// (`4.46.*`, `4.5*`; any may match).
#[derive(Debug, Clone)]
pub struct Selection {
    /// The package.
    pub package: String,
    /// The selection as written after the package name.
    pub text: String,
    matcher: Matcher,
}

#[derive(Debug, Clone)]
enum Matcher {
    Specifiers(VersionSpecifiers),
    Patterns(Vec<String>),
}

impl Selection {
    /// Parses `transformers>=4.46`, `transformers>=4.46,<5` or `transformers==4.46.*,4.5*`.
    pub fn parse(arg: &str) -> Result<Self, FetchError> {
        let bad = || FetchError::Spec {
            arg: arg.to_string(),
        };
        let split = arg.find(|c: char| "<>=!~".contains(c)).ok_or_else(bad)?;
        let (package, text) = (arg[..split].trim(), arg[split..].trim());
        if package.is_empty() {
            return Err(bad());
        }
        let items: Vec<&str> = text.split(',').map(str::trim).collect();
        let has_operator = |i: &str| i.starts_with(|c: char| "<>=!~".contains(c));
        let matcher = if items.iter().all(|i| has_operator(i)) && !text.contains("*,") {
            Matcher::Specifiers(VersionSpecifiers::from_str(text).map_err(|_| bad())?)
        } else {
            // A list of patterns: any may match.
            Matcher::Patterns(
                items
                    .iter()
                    .map(|i| i.trim_start_matches("==").to_string())
                    .collect(),
            )
        };
        Ok(Self {
            package: package.to_string(),
            text: text.to_string(),
            matcher,
        })
    }

    /// Whether the pre-release `version` lies in the selection's range (`--pre`): `>=4.46`
    /// holds `5.0.0rc1`, a pattern `5.*` too.
    pub fn admits_prerelease(&self, version: &Version) -> bool {
        match &self.matcher {
            Matcher::Specifiers(s) => s.contains(version),
            Matcher::Patterns(patterns) => {
                let text = version.to_string();
                patterns.iter().any(|p| {
                    p.strip_suffix('*')
                        .map_or(text == *p, |pre| text.starts_with(pre))
                })
            }
        }
    }

    /// Whether `version` is selected. Pre-releases only where a pattern names them.
    pub fn admits(&self, version: &Version) -> bool {
        match &self.matcher {
            Matcher::Specifiers(s) => !version.any_prerelease() && s.contains(version),
            Matcher::Patterns(patterns) => {
                let text = version.to_string();
                patterns.iter().any(|p| match p.strip_suffix('*') {
                    Some(prefix) => text.starts_with(prefix) && !version.any_prerelease(),
                    None => text == *p,
                })
            }
        }
    }
}

/// Lists and fetches releases through pip, into a cache folder.
#[derive(Debug)]
pub struct Fetcher {
    python: String,
    cache: PathBuf,
    downloads: Cell<usize>,
}

/// `all` (oldest first) as `pick` takes them, and the ones it leaves out. A pre-release in
/// `all` (there only under `--pre`) is kept when it is the newest version of all.
fn choose(all: Vec<Version>, pick: Pick) -> (Vec<Version>, Vec<Version>) {
    let newest_pre = all
        .last()
        .filter(|v| v.any_prerelease())
        .cloned()
        .filter(|_| pick.pre);
    let releases: Vec<Version> = all
        .iter()
        .filter(|v| !v.any_prerelease())
        .cloned()
        .collect();
    let mut chosen = releases.clone();
    if pick.sample {
        // Sentry's sampling: the oldest, the highest of each major, the newest.
        let major = |v: &Version| v.release().first().copied();
        chosen = releases
            .iter()
            .enumerate()
            .filter(|(i, v)| {
                *i == 0
                    || releases
                        .get(i + 1)
                        .is_none_or(|next| major(next) != major(v))
            })
            .map(|(_, v)| v.clone())
            .collect();
    }
    if pick.per_minor {
        let minor = |v: &Version| {
            let r = v.release();
            (r.first().copied(), r.get(1).copied())
        };
        // Of each run of one minor release, the last (newest) stays.
        chosen.dedup_by(|later, earlier| {
            let same = minor(later) == minor(earlier);
            if same {
                std::mem::swap(later, earlier);
            }
            same
        });
    }
    if let Some(max) = pick.max
        && chosen.len() > max
    {
        chosen.drain(..chosen.len() - max);
    }
    chosen.extend(newest_pre);
    let left_out = all.into_iter().filter(|v| !chosen.contains(v)).collect();
    (chosen, left_out)
}

/// Which of the releases a selection admits to take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pick {
    /// Only the newest patch release of each minor release.
    pub per_minor: bool,
    /// At most this many, the newest kept; `None`: all.
    pub max: Option<usize>,
    /// Only the oldest, the highest of each major release and the newest (Sentry's sampling).
    pub sample: bool,
    /// Also the newest pre-release in the selection's range, where it is newer than every
    /// release.
    pub pre: bool,
}

impl Fetcher {
    /// A fetcher using `$REGRAFT_PYTHON` (default `python3`) and the cache `cache`, else
    /// `$REGRAFT_CACHE`, else `~/.cache/regraft`.
    pub fn new(cache: Option<PathBuf>) -> Self {
        let cache = cache
            .or_else(|| std::env::var_os("REGRAFT_CACHE").map(PathBuf::from))
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/regraft")))
            .unwrap_or_else(|| PathBuf::from(".regraft-cache"));
        Self {
            python: std::env::var("REGRAFT_PYTHON").unwrap_or_else(|_| "python3".into()),
            cache,
            downloads: Cell::new(0),
        }
    }

    /// How many releases this fetcher downloaded (cache hits not counted).
    pub fn downloads(&self) -> usize {
        self.downloads.get()
    }

    fn pip_error(&self, what: String, detail: String) -> FetchError {
        FetchError::Pip {
            what,
            detail,
            python: self.python.clone(),
            cache: self.cache.display().to_string(),
        }
    }

    fn run(&self, what: String, args: &[&str]) -> Result<String, FetchError> {
        let out = Command::new(&self.python)
            .args(args)
            .output()
            .map_err(|e| self.pip_error(what.clone(), e.to_string()))?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let last = stderr.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
            return Err(self.pip_error(what, last.trim().to_string()));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The selected releases the index has, oldest first, as `pick` says: with `per_minor`
    /// the newest patch of each minor release, then at most `max`, the newest kept. The
    /// releases left out are returned too, so the caller can say so.
    pub fn pick(
        &self,
        selection: &Selection,
        pick: Pick,
    ) -> Result<(Vec<Version>, Vec<Version>), FetchError> {
        let mut all = self.releases(selection, usize::MAX)?;
        if pick.pre {
            // Only the newest version of all, if that is a pre-release: a pre-release of a
            // version already released is behind.
            let newest = self
                .listing(&selection.package, true)?
                .into_iter()
                .filter(|v| selection.admits_prerelease(v))
                .max();
            all.extend(newest.filter(|v| v.any_prerelease() && all.last() < Some(v)));
        }
        Ok(choose(all, pick))
    }

    /// Every version the index lists for `package` (pre-releases too with `pre`), oldest first.
    fn listing(&self, package: &str, pre: bool) -> Result<Vec<Version>, FetchError> {
        let mut args = vec!["-m", "pip", "index", "versions", package];
        args.extend(["--disable-pip-version-check"]);
        if pre {
            args.push("--pre");
        }
        let listing = self.run(format!("listing the releases of {package}"), &args)?;
        let mut all: Vec<Version> = listing
            .lines()
            .find_map(|l| l.strip_prefix("Available versions:"))
            .unwrap_or("")
            .split(',')
            .filter_map(|v| Version::from_str(v.trim()).ok())
            .collect();
        all.sort();
        Ok(all)
    }

    /// The selected releases the index has, oldest first; at most `max`, the newest kept.
    pub fn releases(&self, selection: &Selection, max: usize) -> Result<Vec<Version>, FetchError> {
        let package = &selection.package;
        let all = self.listing(package, false)?;
        let mut chosen: Vec<Version> = all
            .iter()
            .filter(|v| selection.admits(v))
            .cloned()
            .collect();
        if chosen.is_empty() {
            let newest: Vec<String> = all.iter().rev().take(5).map(ToString::to_string).collect();
            return Err(FetchError::NoRelease {
                package: package.clone(),
                selection: selection.text.clone(),
                available: if newest.is_empty() {
                    "none".into()
                } else {
                    newest.join(", ") + ", …"
                },
            });
        }
        if chosen.len() > max {
            chosen.drain(..chosen.len() - max);
        }
        Ok(chosen)
    }

    /// The folder holding release `version`'s sources (`<cache>/<pkg>-<version>/`, with the
    /// package's folders inside), downloaded and unpacked the first time.
    /// A release found in the cache is checked against the hashes recorded when it was
    /// fetched, and refused if any file was edited, added or removed; one cached before hashes
    /// were recorded is fetched again.
    pub fn tree(&self, package: &str, version: &Version) -> Result<PathBuf, FetchError> {
        let dest = self.cache.join(format!("{package}-{version}"));
        let manifest = dest.join(MANIFEST);
        if manifest.is_file() {
            verify_release(&dest, &manifest).map_err(|detail| FetchError::Tampered {
                release: format!("{package}=={version}"),
                detail,
                folder: dest.display().to_string(),
            })?;
            return Ok(dest);
        }
        let _ = std::fs::remove_dir_all(&dest);
        let _task = crate::progress::begin(&format!("fetching {package}=={version}"), None);
        let scratch = self.cache.join(format!(".download-{package}-{version}"));
        let _ = std::fs::remove_dir_all(&scratch);
        let what = format!("fetching {package}=={version}");
        std::fs::create_dir_all(&scratch)
            .map_err(|e| self.pip_error(what.clone(), e.to_string()))?;
        let scratch_text = scratch.display().to_string();
        let requirement = format!("{package}=={version}");
        let download = [
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "--quiet",
            "-d",
            &scratch_text,
            &requirement,
        ];
        self.run(what.clone(), &download)?;
        let dest_text = dest.display().to_string();
        self.run(what, &["-c", UNPACK, &scratch_text, &dest_text])?;
        let _ = std::fs::remove_dir_all(&scratch);
        self.downloads.set(self.downloads.get() + 1);
        Ok(dest)
    }
}

/// The file of a cached release that lists each of its files with its sha256, written last:
/// its presence marks the release complete.
const MANIFEST: &str = ".complete-sha256";

/// Checks every file of the release in `dest` against `manifest` (`HEX  PATH` lines), and that
/// no file was added; `Err` says what differs.
fn verify_release(dest: &Path, manifest: &Path) -> Result<(), String> {
    use sha2::{Digest, Sha256};
    let listed = std::fs::read_to_string(manifest).map_err(|e| format!("{MANIFEST}: {e}"))?;
    let mut names = std::collections::HashSet::new();
    for line in listed.lines() {
        let (hash, name) = line
            .split_once("  ")
            .ok_or_else(|| format!("{MANIFEST}: a line is not `HASH  PATH`"))?;
        let bytes = std::fs::read(dest.join(name)).map_err(|e| format!("{name}: {e}"))?;
        let actual = format!("{:x}", Sha256::digest(&bytes));
        if actual != hash {
            return Err(format!("{name} does not have the content fetched"));
        }
        names.insert(name.to_string());
    }
    let mut stack = vec![dest.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)
            .map_err(|e| e.to_string())?
            .flatten()
        {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
                continue;
            }
            let relative = path.strip_prefix(dest).unwrap_or(&path);
            let name = relative.to_string_lossy().replace('\\', "/");
            if name != MANIFEST && !names.contains(&name) {
                return Err(format!("{name} was not in the release"));
            }
        }
    }
    Ok(())
}

/// Unpacks the `.py` files of the one wheel in argv[1] into argv[2], then writes the manifest
/// of their hashes, which marks the release complete.
const UNPACK: &str = r#"
import hashlib, os, sys, zipfile
src, dest = sys.argv[1], sys.argv[2]
wheels = [f for f in os.listdir(src) if f.endswith(".whl")]
if len(wheels) != 1:
    sys.exit("expected one wheel, found %d" % len(wheels))
lines = []
with zipfile.ZipFile(os.path.join(src, wheels[0])) as z:
    for name in z.namelist():
        if name.endswith(".py") and ".dist-info/" not in name and not name.startswith("/") and ".." not in name.split("/"):
            z.extract(name, dest)
            lines.append("%s  %s\n" % (hashlib.sha256(z.read(name)).hexdigest(), name))
tmp = os.path.join(dest, ".manifest.tmp")
with open(tmp, "w") as f:
    f.writelines(sorted(lines))
os.replace(tmp, os.path.join(dest, ".complete-sha256"))
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pick_keeps_the_newest_patch_of_each_minor_and_names_what_it_leaves_out() {
        let v = |s: &str| Version::from_str(s).unwrap();
        let all: Vec<Version> = ["4.40.0", "4.40.2", "4.41.0", "4.43.0", "4.43.4", "4.44.1"]
            .into_iter()
            .map(v)
            .collect();
        let names = |vs: &[Version]| vs.iter().map(ToString::to_string).collect::<Vec<_>>();
        let (chosen, left) = choose(
            all.clone(),
            Pick {
                per_minor: true,
                ..Pick::default()
            },
        );
        assert_eq!(names(&chosen), ["4.40.2", "4.41.0", "4.43.4", "4.44.1"]);
        assert_eq!(names(&left), ["4.40.0", "4.43.0"]);
        let (chosen, left) = choose(
            all.clone(),
            Pick {
                max: Some(2),
                ..Pick::default()
            },
        );
        assert_eq!(names(&chosen), ["4.43.4", "4.44.1"]);
        assert_eq!(left.len(), 4);
        assert_eq!(choose(all.clone(), Pick::default()).0, all);
    }

    #[test]
    fn a_sample_keeps_the_oldest_the_highest_of_each_major_the_newest_and_a_newer_pre_release() {
        let v = |s: &str| Version::from_str(s).unwrap();
        let names = |vs: &[Version]| vs.iter().map(ToString::to_string).collect::<Vec<_>>();
        let all: Vec<Version> = [
            "3.9.0",
            "3.10.1",
            "4.40.0",
            "4.57.6",
            "5.0.0",
            "5.25.0",
            "5.26.0rc1",
        ]
        .into_iter()
        .map(v)
        .collect();
        let sample = Pick {
            sample: true,
            pre: true,
            ..Pick::default()
        };
        let (chosen, left) = choose(all.clone(), sample);
        assert_eq!(
            names(&chosen),
            ["3.9.0", "3.10.1", "4.57.6", "5.25.0", "5.26.0rc1"]
        );
        assert_eq!(names(&left), ["4.40.0", "5.0.0"]);
        // Without `pre`, a pre-release is never chosen; one older than the newest release is
        // behind and never chosen either.
        let without = Pick {
            pre: false,
            ..sample
        };
        assert!(!names(&choose(all.clone(), without).0).contains(&"5.26.0rc1".to_string()));
        let behind = vec![v("5.25.0rc1"), v("5.25.0")];
        assert_eq!(names(&choose(behind, sample).0), ["5.25.0"]);
    }

    #[test]
    fn selections_are_specifiers_or_patterns() {
        let v = |s: &str| Version::from_str(s).unwrap();
        let range = Selection::parse("transformers>=4.46,<5").unwrap();
        assert!(range.admits(&v("4.57.6")) && !range.admits(&v("5.0.0")));
        assert!(!range.admits(&v("4.50.0rc1")), "no pre-releases by default");
        let patterns = Selection::parse("transformers==4.46.*,4.5*,5.*").unwrap();
        assert_eq!(patterns.package, "transformers");
        assert!(patterns.admits(&v("4.46.3")) && patterns.admits(&v("4.51.3")));
        assert!(patterns.admits(&v("5.1.0")) && !patterns.admits(&v("4.47.0")));
        assert!(Selection::parse("transformers").is_err());
        assert!(Selection::parse(">=4").is_err());
    }
}
