//! The versions of target packages that gate rules: from `--with PKG=VER` or a site-packages folder.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::str::FromStr;

use pep440_rs::Version;

use crate::rules::model::{Requirement, Rule, normalize_package};

/// Known package versions, by normalised name.
#[derive(Debug, Clone, Default)]
pub struct VersionEnv {
    versions: BTreeMap<String, Version>,
}

/// Why a `--with` value or a site-packages folder could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VersionError {
    /// Not of the form `PKG=VER`.
    #[error("`{0}` is not PKG=VERSION (e.g. transformers=4.57.6)")]
    NotAPair(String),
    /// The version part is not a PEP 440 version.
    #[error("`{version}` is not a PEP 440 version for `{package}`: {reason}")]
    BadVersion {
        /// The package.
        package: String,
        /// The version as written.
        version: String,
        /// pep440_rs's reason.
        reason: String,
    },
    /// The folder could not be listed.
    #[error("cannot read site-packages folder {path}: {reason}")]
    SitePackages {
        /// The folder.
        path: String,
        /// The I/O error.
        reason: String,
    },
}

/// Whether a rule's version gate lets it run.
#[derive(Debug, Clone, PartialEq)]
pub enum Gate<'r> {
    /// Every requirement holds (or there are none).
    Open,
    /// A requirement does not hold for the known version.
    Closed {
        /// The requirement that failed.
        requirement: &'r Requirement,
        /// The version it was checked against.
        version: Version,
    },
    /// Every `requires` holds, and so does every `fixed_upstream`: upstream fixed what the
    /// patch fixes, and the rule is retired here.
    Retired {
        /// The first `fixed_upstream` requirement.
        requirement: &'r Requirement,
        /// The version it was checked against.
        version: Version,
    },
    /// A required package's version is not known.
    Unknown {
        /// The requirement whose package is unknown.
        requirement: &'r Requirement,
    },
}

impl VersionEnv {
    /// Sets a package's version.
    pub fn insert(&mut self, package: &str, version: Version) {
        self.versions.insert(normalize_package(package), version);
    }

    /// The versions of `PKG=VER` arguments.
    pub fn from_pairs(pairs: &[String]) -> Result<Self, VersionError> {
        let mut env = Self::default();
        for pair in pairs {
            env.insert_pair(pair)?;
        }
        Ok(env)
    }

    /// Parses and records a `PKG=VER` (or `PKG==VER`) argument.
    pub fn insert_pair(&mut self, pair: &str) -> Result<(), VersionError> {
        let (package, version) = pair
            .split_once("==")
            .or_else(|| pair.split_once('='))
            .ok_or_else(|| VersionError::NotAPair(pair.to_string()))?;
        let (package, version) = (package.trim(), version.trim());
        if package.is_empty() || version.is_empty() {
            return Err(VersionError::NotAPair(pair.to_string()));
        }
        self.insert_version(package, version)
    }

    /// Sets `package` to the PEP 440 version written `version`.
    pub fn insert_version(&mut self, package: &str, version: &str) -> Result<(), VersionError> {
        let parsed = Version::from_str(version).map_err(|e| VersionError::BadVersion {
            package: package.to_string(),
            version: version.to_string(),
            reason: e.to_string(),
        })?;
        self.insert(package, parsed);
        Ok(())
    }

    /// Reads every `*.dist-info/METADATA` (and `*.egg-info/PKG-INFO`) in a site-packages folder.
    /// Entries set explicitly before are kept: `--with` wins over what is installed.
    pub fn read_site_packages(&mut self, dir: &Path) -> Result<(), VersionError> {
        let entries = fs::read_dir(dir).map_err(|e| VersionError::SitePackages {
            path: dir.display().to_string(),
            reason: e.to_string(),
        })?;
        for entry in entries.flatten() {
            let path = entry.path();
            let file = match path.extension().and_then(|e| e.to_str()) {
                Some("dist-info") => path.join("METADATA"),
                Some("egg-info") => path.join("PKG-INFO"),
                _ => continue,
            };
            // A regular file of bounded size only: a FIFO would block the read forever and a
            // link to /dev/zero would never end (neither is opened).
            let bytes = crate::source::FileError::read_regular(&file, 4 << 20, "metadata file", "");
            let Some(text) = bytes.ok().and_then(|b| String::from_utf8(b).ok()) else {
                continue;
            };
            let header = |key: &str| {
                text.lines()
                    .take_while(|l| !l.is_empty())
                    .find_map(|l| l.strip_prefix(key).map(str::trim))
            };
            if let (Some(name), Some(version)) = (header("Name:"), header("Version:"))
                && let Ok(version) = Version::from_str(version)
            {
                self.versions
                    .entry(normalize_package(name))
                    .or_insert(version);
            }
        }
        Ok(())
    }

    /// The known version of `package`.
    pub fn get(&self, package: &str) -> Option<&Version> {
        self.versions.get(&normalize_package(package))
    }

    /// Known packages and versions, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Version)> {
        self.versions.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Whether `rule`'s requirements hold.
    pub fn gate<'r>(&self, rule: &'r Rule) -> Gate<'r> {
        for requirement in &rule.requires {
            let Some(version) = self.get(&requirement.package.value) else {
                return Gate::Unknown { requirement };
            };
            if !admits(&requirement.specifiers.value, version) {
                return Gate::Closed {
                    requirement,
                    version: version.clone(),
                };
            }
        }
        let mut fixed = None;
        for requirement in &rule.fixed_upstream {
            let Some(version) = self.get(&requirement.package.value) else {
                return Gate::Unknown { requirement };
            };
            if !admits(&requirement.specifiers.value, version) {
                return Gate::Open;
            }
            fixed.get_or_insert((requirement, version));
        }
        match fixed {
            Some((requirement, version)) => Gate::Retired {
                requirement,
                version: version.clone(),
            },
            None => Gate::Open,
        }
    }
}

/// Whether `version` satisfies every specifier, by PEP 440. pep440_rs also refuses `<V` for a
/// pre-release of V's release when V is itself a pre-release (`<5.6.0rc2` against
/// `5.6.0rc1`), which PEP 440 allows; that one case is decided by plain ordering here.
pub fn admits(specifiers: &pep440_rs::VersionSpecifiers, version: &Version) -> bool {
    specifiers.iter().all(|s| {
        if *s.operator() == pep440_rs::Operator::LessThan && s.version().any_prerelease() {
            version < s.version()
        } else {
            s.contains(version)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_parse_with_one_or_two_equals() {
        let mut env = VersionEnv::default();
        env.insert_pair("Transformers=4.57.6").unwrap();
        env.insert_pair("torch==2.5.0").unwrap();
        assert_eq!(env.get("transformers").unwrap().to_string(), "4.57.6");
        assert_eq!(env.get("torch").unwrap().to_string(), "2.5.0");
        assert!(matches!(
            env.insert_pair("transformers"),
            Err(VersionError::NotAPair(_))
        ));
        assert!(matches!(
            env.insert_pair("transformers=banana"),
            Err(VersionError::BadVersion { .. })
        ));
    }

    /// PEP 440 as a gate on an installed version: pre-releases, post-releases and local
    /// versions order as the spec says, and `<V` excludes V's own pre-releases.
    #[test]
    fn pep440_semantics_on_real_transformers_versions() {
        let admits = |spec: &str, version: &str| {
            let spec: pep440_rs::VersionSpecifiers = spec.parse().unwrap();
            super::admits(&spec, &version.parse().unwrap())
        };
        // main-branch builds are dev releases of the next version.
        assert!(!admits(">=5.6", "5.6.0.dev0"));
        assert!(admits(">=5.6.0.dev0", "5.6.0.dev0"));
        assert!(admits(">=5.5", "5.6.0.dev0"));
        assert!(admits("<5.6", "5.5.4"));
        assert!(!admits("<5.6", "5.6.0rc1"), "<V excludes V's pre-releases");
        assert!(admits("<5.6.0rc2", "5.6.0rc1"));
        assert!(admits(">=4.57.0rc1", "4.57.0"));
        assert!(
            !admits(">4.57.6", "4.57.6.post1"),
            ">V excludes V's post-releases"
        );
        assert!(admits(">=4.57.6", "4.57.6.post1"));
        assert!(
            admits("==4.57.6", "4.57.6+cpu"),
            "a local version matches its public one"
        );
        assert!(!admits("==4.57.6+cu121", "4.57.6+cpu"));
        assert!(admits("~=4.57.0", "4.57.6"));
        assert!(!admits("~=4.57.0", "4.58.0"));
        assert!(admits(">=4.51,<5", "4.57.6"));
        assert!(!admits(">=4.51,<5", "5.0.0rc0"));
    }

    #[test]
    fn site_packages_metadata_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let info = dir.path().join("transformers-4.52.4.dist-info");
        fs::create_dir(&info).unwrap();
        fs::write(
            info.join("METADATA"),
            "Metadata-Version: 2.1\nName: transformers\nVersion: 4.52.4\n\nbody\n",
        )
        .unwrap();
        let mut env = VersionEnv::default();
        env.read_site_packages(dir.path()).unwrap();
        assert_eq!(env.get("transformers").unwrap().to_string(), "4.52.4");
    }

    #[cfg(unix)]
    #[test]
    fn metadata_that_is_a_fifo_or_dev_zero_is_passed_over_without_hanging() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("a-1.0.dist-info");
        fs::create_dir(&fifo).unwrap();
        let path = std::ffi::CString::new(fifo.join("METADATA").to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
        let zero = dir.path().join("b-1.0.dist-info");
        fs::create_dir(&zero).unwrap();
        std::os::unix::fs::symlink("/dev/zero", zero.join("METADATA")).unwrap();
        let ok = dir.path().join("c-2.0.dist-info");
        fs::create_dir(&ok).unwrap();
        fs::write(ok.join("METADATA"), "Name: c\nVersion: 2.0\n").unwrap();
        let mut env = VersionEnv::default();
        env.read_site_packages(dir.path()).unwrap();
        assert_eq!(env.get("c").unwrap().to_string(), "2.0");
        assert!(env.get("a").is_none() && env.get("b").is_none());
    }
}
