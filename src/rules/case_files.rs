//! The test cases of a rule as `regraft test` runs them: inline ones, then the files of its
//! `<rule-id>.tests/` folder, each configured by its leading `# regraft:` lines (`with
//! PKG=VER`, `phase P`, `path P`, `unchanged`, `error KIND`). Read here, below the linter and
//! the test runner, so both see the same cases.

use std::fs;
use std::path::{Path, PathBuf};

use super::model::{Rule, Spanned, TestCase, TestExpectation};

/// A rule's case files cannot be read.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum CaseError {
    /// A file of the tests folder cannot be read.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Io(crate::source::FileError),
    /// A test case's directive line cannot be read.
    #[error(
        "{file}: cannot read test directive `{line}` (with PKG=VER, phase P, path P, unchanged, error drift|conflict|error)"
    )]
    #[diagnostic(code(regraft::usage))]
    Directive {
        /// The case file.
        file: String,
        /// The directive line.
        line: String,
    },
}

/// The folder holding a rule's test files and snapshots.
pub fn tests_dir(rule: &Rule) -> PathBuf {
    let file = Path::new(rule.origin.file.name());
    let dir = file.parent().unwrap_or(Path::new("."));
    dir.join(format!("{}.tests", rule.id.value))
}

/// The cases of a rule: inline ones, then the files in its tests folder (in name order).
pub fn cases(rule: &Rule) -> Result<Vec<TestCase>, CaseError> {
    let mut cases = rule.tests.clone();
    let dir = tests_dir(rule);
    let Ok(entries) = fs::read_dir(&dir) else {
        return Ok(cases);
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "py")
                && !p.to_string_lossy().ends_with(".expected.py")
        })
        .collect();
    files.sort();
    for file in files {
        let before = fs::read_to_string(&file)
            .map_err(|e| CaseError::Io(crate::source::FileError::io(&file, e)))?;
        let name = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        cases.push(file_case(&file, name, before)?);
    }
    Ok(cases)
}

/// A case from a file, configured by its leading `# regraft:` lines.
fn file_case(file: &Path, name: String, before: String) -> Result<TestCase, CaseError> {
    let mut case = TestCase {
        name: Spanned::new(name, 0..0),
        before: String::new(),
        versions: Vec::new(),
        phase: None,
        path: None,
        expectation: TestExpectation::Snapshot,
    };
    let bad = |line: &str| CaseError::Directive {
        file: file.display().to_string(),
        line: line.to_string(),
    };
    for line in before.lines() {
        let Some(directive) = line.strip_prefix("# regraft:") else {
            break;
        };
        let directive = directive.trim();
        let (word, rest) = directive.split_once(' ').unwrap_or((directive, ""));
        let rest = rest.trim();
        match word {
            "with" => {
                let (p, v) = rest.split_once('=').ok_or_else(|| bad(line))?;
                case.versions
                    .push((p.trim().to_string(), v.trim().to_string()));
            }
            "phase" => case.phase = Some(rest.parse().map_err(|()| bad(line))?),
            "path" => case.path = Some(rest.to_string()),
            "unchanged" => case.expectation = TestExpectation::Unchanged,
            "error" if super::model::TEST_ERROR_KINDS.contains(&rest) => {
                case.expectation = TestExpectation::Error(rest.to_string());
            }
            _ => return Err(bad(line)),
        }
    }
    case.before = before;
    Ok(case)
}
