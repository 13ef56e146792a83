//! The sum of every failure a front end (the CLI, the Python module) can report. Each layer
//! below keeps its own error type; exit codes are decided by the CLI alone.

use miette::Diagnostic;
use thiserror::Error;

use crate::engine::PatchError;
use crate::rules::LoadError;
use crate::rules::error::RuleError;
use crate::source::FileError;
use crate::targets::TargetError;
use crate::versions::VersionError;

/// Any failure of a regraft command.
#[derive(Debug, Error, Diagnostic)]
pub enum Error {
    /// A rule file is wrong.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Rule(#[from] Box<RuleError>),
    /// Patching a target failed.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Patch(#[from] Box<PatchError>),
    /// Rules could not be loaded (unreadable files, or none at all).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Load(LoadError),
    /// A target could not be read as Python source, or a file could not be written.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Target(#[from] TargetError),
    /// A version argument is wrong.
    #[error(transparent)]
    #[diagnostic(code(regraft::usage::version))]
    Version(#[from] VersionError),
    /// A rule's test case files cannot be read.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Case(#[from] crate::rules::case_files::CaseError),
    /// Patched files could not be written (and none was).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Write(#[from] crate::write::WriteError),
    /// Upstream releases could not be listed or fetched.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Fetch(#[from] crate::fetch::FetchError),
    /// A `matrix --target` argument is not `PKG=VERSION:DIR`.
    #[error("`{arg}` is not PKG=VERSION:DIR (e.g. transformers=4.57.6:corpus/transformers)")]
    #[diagnostic(code(regraft::usage))]
    MatrixTarget {
        /// The argument.
        arg: String,
    },
    /// The project configuration (`regraft.toml`, `[tool.regraft]`) is wrong.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// The command line (or a Python call's arguments) is wrong; only front ends build it.
    #[error("{0}")]
    #[diagnostic(code(regraft::usage))]
    Usage(String),
}

impl From<RuleError> for Error {
    fn from(e: RuleError) -> Self {
        Error::Rule(Box::new(e))
    }
}

impl From<PatchError> for Error {
    fn from(e: PatchError) -> Self {
        Error::Patch(Box::new(e))
    }
}

impl From<FileError> for Error {
    fn from(e: FileError) -> Self {
        Error::Target(TargetError::File(e))
    }
}

impl From<LoadError> for Error {
    /// A wrong rule is a rule error whichever way it was reached.
    fn from(e: LoadError) -> Self {
        match e {
            LoadError::Rule(r) => Error::Rule(r),
            other => Error::Load(other),
        }
    }
}

impl Error {
    /// A one-word name for the kind of failure, as `apply --format json` and the Python
    /// exceptions' `.kind` give it.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Patch(p) => p.kind(),
            Error::Load(l) => l.kind(),
            Error::Target(t) => t.kind(),
            Error::Rule(_) => "rule",
            Error::Fetch(_) => "fetch",
            Error::Write(_) => "write",
            Error::Config(_) => "config",
            Error::Version(_) | Error::Usage(_) | Error::Case(_) | Error::MatrixTarget { .. } => {
                "usage"
            }
        }
    }

    /// The rule the failure concerns, where one rule does.
    pub fn rule_id(&self) -> Option<&str> {
        match self {
            Error::Rule(e) => e.kind.rule_id(),
            Error::Patch(e) => e.rule_id(),
            _ => None,
        }
    }
}
