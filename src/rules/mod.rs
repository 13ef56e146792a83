//! Loading rules: files and folders of rule files into the rule model.

pub mod convert;
pub mod error;
pub mod model;
pub mod spans;
pub mod yaml;

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::source::SourceFile;
use error::{RuleError, RuleErrorKind};
use model::Rule;

/// Whether `path` names a rule file by its extension.
pub fn is_rule_file(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml")
    )
}

/// Loads a rule file, or every rule file in a folder (recursively, in path order).
pub fn load_path(path: &Path) -> Result<Vec<Rule>, Error> {
    let metadata = fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if !metadata.is_dir() {
        return load_file(path);
    }
    let mut files: Vec<PathBuf> = Vec::new();
    for entry in ignore::WalkBuilder::new(path)
        .standard_filters(false)
        .follow_links(false)
        .build()
    {
        let entry =
            entry.map_err(|e| Error::Usage(format!("cannot walk {}: {e}", path.display())))?;
        if entry.file_type().is_some_and(|t| t.is_file()) && is_rule_file(entry.path()) {
            files.push(entry.into_path());
        }
    }
    files.sort();
    let mut rules = Vec::new();
    for file in files {
        rules.extend(load_file(&file)?);
    }
    Ok(rules)
}

/// Loads the rules of one file.
pub fn load_file(path: &Path) -> Result<Vec<Rule>, Error> {
    let bytes = fs::read(path).map_err(|e| Error::io(path, e))?;
    let name = path.display().to_string();
    Ok(load_bytes(&name, &bytes)?)
}

/// Loads the rules of a file's bytes, reported under `name`.
pub fn load_bytes(name: &str, bytes: &[u8]) -> Result<Vec<Rule>, RuleError> {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let lossy = String::from_utf8_lossy(bytes);
            let valid = e.valid_up_to();
            // Offsets into the lossy text match up to the first invalid byte.
            let file = SourceFile::new(name, lossy.into_owned());
            return Err(RuleError::new(
                RuleErrorKind::NotUtf8,
                &file,
                valid..valid + 1,
            ));
        }
    };
    load_yaml(name, text)
}

/// Loads YAML rule text, reported under `name`.
pub fn load_yaml(name: &str, text: &str) -> Result<Vec<Rule>, RuleError> {
    let file = SourceFile::new(name, text);
    let documents = yaml::read_documents(text).map_err(|e| {
        let end = text[e.offset..]
            .chars()
            .next()
            .map_or(e.offset, |c| e.offset + c.len_utf8());
        RuleError::new(RuleErrorKind::Yaml(e.message), &file, e.offset..end)
    })?;
    let mut rules = Vec::new();
    for document in &documents {
        rules.extend(convert::rules_from_document(
            &file,
            &document.value,
            &document.spans,
        )?);
    }
    if rules.is_empty() {
        return Err(RuleError::new(RuleErrorKind::NoRules, &file, 0..text.len()));
    }
    Ok(rules)
}
