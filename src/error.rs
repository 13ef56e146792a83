//! The crate's top-level error: every failure a command can report, with its exit code.

use std::path::Path;

use miette::Diagnostic;
use thiserror::Error;

use crate::engine::PatchError;
use crate::rules::error::RuleError;
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
    /// A file could not be read or written.
    #[error("{path}")]
    #[diagnostic(code(regraft::io))]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
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
    /// A version argument is wrong.
    #[error(transparent)]
    #[diagnostic(code(regraft::usage::version))]
    Version(#[from] VersionError),
    /// The command line is wrong.
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

impl Error {
    /// An I/O error on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.display().to_string(),
            source,
        }
    }

    /// A one-word name for the kind of failure, as `apply --format json` and the Python
    /// exceptions' `.kind` give it.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Patch(p) => p.kind(),
            Error::Io { .. } => "io",
            Error::NotUtf8 { .. } | Error::NulByte { .. } => "encoding",
            Error::Rule(_) => "rule",
            Error::Version(_) | Error::Usage(_) => "usage",
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

    /// The exit code: 2 for rule, usage and target errors, 3 for drift, conflicts and
    /// results that cannot be written.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Patch(p) => p.exit_code(),
            _ => 2,
        }
    }
}
