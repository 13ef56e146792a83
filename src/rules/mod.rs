//! Loading rules: files and folders of rule files into the rule model.

pub mod action;
pub mod case_files;
mod cases;
pub mod convert;
pub mod dsl;
pub mod error;
pub mod model;
mod reader;
pub mod reference;
pub mod spans;
pub mod write;
pub mod yaml;

use std::fs;
use std::path::{Path, PathBuf};

use miette::Diagnostic;
use thiserror::Error;

use crate::source::{FileError, SourceFile};
pub use convert::ReadRules;
use error::{RuleError, RuleErrorKind};
use model::Rule;

/// Why rules could not be loaded: a file, a rule in it, or nothing to load at all.
#[derive(Debug, Error, Diagnostic)]
pub enum LoadError {
    /// A rule file or folder could not be read.
    #[error(transparent)]
    #[diagnostic(transparent)]
    File(#[from] FileError),
    /// A rule is wrong.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Rule(#[from] Box<RuleError>),
    /// The paths hold no rule file, so nothing would ever be patched.
    #[error("no rules in {paths} (rule files end in .yaml, .yml or .graft)")]
    #[diagnostic(code(regraft::usage))]
    NoRules {
        /// The paths given, comma-separated.
        paths: String,
    },
}

impl From<RuleError> for LoadError {
    fn from(e: RuleError) -> Self {
        LoadError::Rule(Box::new(e))
    }
}

impl LoadError {
    /// A one-word name for the kind of failure.
    pub fn kind(&self) -> &'static str {
        match self {
            LoadError::File(f) => f.kind(),
            LoadError::Rule(_) => "rule",
            LoadError::NoRules { .. } => "usage",
        }
    }
}

/// The two ways of writing rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// `*.yaml` / `*.yml`.
    Yaml,
    /// `*.graft`, the text DSL.
    Dsl,
}

impl Syntax {
    /// The syntax a rule file's extension names, if it is a rule file.
    pub fn of(path: &Path) -> Option<Syntax> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("yaml" | "yml") => Some(Syntax::Yaml),
            Some("graft") => Some(Syntax::Dsl),
            _ => None,
        }
    }
}

/// Whether `path` names a rule file by its extension.
pub fn is_rule_file(path: &Path) -> bool {
    Syntax::of(path).is_some()
}

/// Loads a rule file, or every rule file in a folder (recursively, in path order).
pub fn load_path(path: &Path) -> Result<Vec<Rule>, LoadError> {
    let mut rules = Vec::new();
    for file in rule_files(path)? {
        rules.extend(load_file(&file)?);
    }
    Ok(rules)
}

/// The rule files `path` names: itself, or the rule files below it (recursively, in path order).
pub fn rule_files(path: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let metadata = fs::metadata(path).map_err(|e| FileError::io(path, e))?;
    if !metadata.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = Vec::new();
    for entry in ignore::WalkBuilder::new(path)
        .standard_filters(false)
        .follow_links(false)
        .build()
    {
        let entry = entry.map_err(|e| FileError::walk(path, e))?;
        if entry.file_type().is_some_and(|t| t.is_file()) && is_rule_file(entry.path()) {
            files.push(entry.into_path());
        }
    }
    files.sort();
    Ok(files)
}

/// The largest rule file read (a pack of thousands of rules is a few MiB); a bigger one is
/// refused before it is read, a stream (`-r <(...)`, `/dev/zero`) once this much was read.
pub const MAX_RULE_FILE_BYTES: u64 = 16 << 20;

/// Loads the rules of one file.
pub fn load_file(path: &Path) -> Result<Vec<Rule>, LoadError> {
    Ok(first_error(load_file_lenient(path)?)?)
}

/// The rules of one file that read, and every error of the others (`lint`'s reading: it
/// reports every mistake, and lints the rules that read).
pub fn load_file_lenient(path: &Path) -> Result<ReadRules, LoadError> {
    let bytes = FileError::read_bounded(path, MAX_RULE_FILE_BYTES, "rule file")?;
    let name = path.display().to_string();
    let syntax = Syntax::of(path).unwrap_or(Syntax::Yaml);
    Ok(read_bytes(&name, &bytes, syntax))
}

/// The rules, or the first error where there is one.
fn first_error(read: ReadRules) -> Result<Vec<Rule>, RuleError> {
    match read.errors.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(read.rules),
    }
}

/// Loads the rules of a file's bytes, reported under `name`.
pub fn load_bytes(name: &str, bytes: &[u8], syntax: Syntax) -> Result<Vec<Rule>, RuleError> {
    first_error(read_bytes(name, bytes, syntax))
}

fn read_bytes(name: &str, bytes: &[u8], syntax: Syntax) -> ReadRules {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let lossy = String::from_utf8_lossy(bytes);
            let valid = e.valid_up_to();
            // Offsets into the lossy text match up to the first invalid byte.
            let file = SourceFile::new(name, lossy.into_owned());
            let error = RuleError::new(RuleErrorKind::NotUtf8, &file, valid..valid + 1);
            return ReadRules {
                errors: vec![error],
                ..ReadRules::default()
            };
        }
    };
    // A byte-order mark is no part of the rules (editors on Windows write one): it is left
    // out, and diagnostics show the text after it.
    read_text(name, text.strip_prefix('\u{feff}').unwrap_or(text), syntax)
}

/// The rules of `text` that read and every error of the others, reported under `name`
/// (`lint`'s reading of unsaved text, as an editor has it).
pub fn read_text_lenient(name: &str, text: &str, syntax: Syntax) -> ReadRules {
    read_text(name, text.strip_prefix('\u{feff}').unwrap_or(text), syntax)
}

/// Loads rule text of either syntax, reported under `name`.
pub fn load_text(name: &str, text: &str, syntax: Syntax) -> Result<Vec<Rule>, RuleError> {
    first_error(read_text(name, text, syntax))
}

/// Where YAML stops at a `: ` inside a plain value (`description: Fix: the call`, a pattern
/// `lambda x: x`), the fix: quote the value. `None` where the line is not of that shape.
fn colon_in_plain_value(text: &str, offset: usize) -> Option<String> {
    let start = text[..offset.min(text.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let line = text[start..end].trim_end_matches('\r');
    let (key, value) = line
        .trim_start()
        .trim_start_matches("- ")
        .split_once(": ")?;
    let plain = !value.starts_with(['"', '\'', '[', '{', '|', '>']);
    (plain && value.contains(": ") && !key.contains(' ')).then(|| {
        let quoted = value.trim().replace('\'', "''");
        format!("a plain YAML value cannot hold `: `; quote it: `{key}: '{quoted}'`")
    })
}

fn read_text(name: &str, text: &str, syntax: Syntax) -> ReadRules {
    let file = SourceFile::new(name, text);
    let documents = match syntax {
        Syntax::Yaml => yaml::read_documents(text)
            .map(|docs| docs.into_iter().map(|d| (d.value, d.spans)).collect())
            .map_err(|e| {
                let end = text[e.offset..]
                    .chars()
                    .next()
                    .map_or(e.offset, |c| e.offset + c.len_utf8());
                let hint = colon_in_plain_value(text, e.offset);
                let error = RuleError::new(RuleErrorKind::Yaml(e.message), &file, e.offset..end);
                match hint {
                    Some(h) => error.with_help(h),
                    None => error,
                }
            }),
        Syntax::Dsl => dsl::read(text).map(|doc| vec![doc]).map_err(|e| {
            let error = RuleError::new(RuleErrorKind::DslSyntax(e.message), &file, e.span);
            match e.help {
                Some(h) => error.with_help(h),
                None => error,
            }
        }),
    };
    let documents: Vec<(serde_yaml::Value, spans::SpanIndex)> = match documents {
        Ok(documents) => documents,
        Err(e) => {
            return ReadRules {
                errors: vec![e],
                ..ReadRules::default()
            };
        }
    };
    let mut read = ReadRules::default();
    for (value, spans) in &documents {
        convert::rules_from_document(&file, value, spans, syntax, &mut read);
    }
    if read.rules.is_empty() && read.errors.is_empty() {
        let error = RuleError::new(RuleErrorKind::NoRules, &file, 0..text.len());
        read.errors.push(error);
    }
    read
}

/// Loads DSL rule text, reported under `name`.
pub fn load_dsl(name: &str, text: &str) -> Result<Vec<Rule>, RuleError> {
    load_text(name, text, Syntax::Dsl)
}

/// Loads YAML rule text, reported under `name`.
pub fn load_yaml(name: &str, text: &str) -> Result<Vec<Rule>, RuleError> {
    load_text(name, text, Syntax::Yaml)
}
