//! Findings: what any command found, each placed in a file, in the one shape that the
//! machine-readable formats render — GitHub workflow commands and SARIF 2.1.0 — whichever
//! command (lint, apply, matrix, test) found them.

use miette::{Diagnostic, Severity};
use serde::Serialize;

use crate::rules::model::Rule;
use crate::source::{LineCol, LineIndex};

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Fails the run.
    Error,
    /// Reported; fails only where the user asks it to.
    Warning,
    /// For information (a rule that would apply, outside `--check`).
    Note,
}

impl Level {
    /// The level of a diagnostic's severity.
    pub fn of(severity: Option<Severity>) -> Self {
        match severity {
            Some(Severity::Warning) => Level::Warning,
            Some(Severity::Advice) => Level::Note,
            Some(Severity::Error) | None => Level::Error,
        }
    }

    /// The GitHub workflow command of this level.
    fn github(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "notice",
        }
    }

    /// The SARIF `level` of this level.
    fn sarif(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "note",
        }
    }
}

/// One finding, placed in a file.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// `error`, `warning` or `note`.
    pub severity: Level,
    /// What kind of finding: a diagnostic code (`regraft::drift`) or a rule id.
    pub code: String,
    /// The message, one line.
    pub message: String,
    /// The file it is in.
    pub file: String,
    /// Where it starts.
    pub start: LineCol,
    /// Where it ends.
    pub end: LineCol,
    /// A hint, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    /// The id of the rule it is about, where it is about one (SARIF's `ruleId`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

/// Line 1, column 1: where a finding without a better place points.
const TOP: LineCol = LineCol { line: 1, column: 1 };

impl Finding {
    /// A finding at `range` of `text` in `file`.
    pub fn at(
        level: Level,
        code: impl Into<String>,
        message: impl Into<String>,
        file: &str,
        text: &str,
        range: std::ops::Range<usize>,
    ) -> Self {
        let index = LineIndex::new(text);
        let start = range.start.min(text.len());
        Self {
            severity: level,
            code: code.into(),
            message: message.into(),
            file: file.to_string(),
            start: index.line_col(text, start),
            end: index.line_col(text, range.end.clamp(start, text.len())),
            help: None,
            rule: None,
        }
    }

    /// A finding about `rule`, placed at its id in its rule file.
    pub fn at_rule(
        level: Level,
        code: impl Into<String>,
        message: impl Into<String>,
        rule: &Rule,
    ) -> Self {
        let file = &rule.origin.file;
        let mut finding = Self::at(
            level,
            code,
            message,
            file.name(),
            file.text(),
            rule.id.span.clone(),
        );
        finding.rule = Some(rule.id.value.clone());
        finding
    }

    /// A diagnostic as a finding: its code, its message and the place of its first label
    /// (else the top of `fallback_file`).
    pub fn of_diagnostic(diagnostic: &dyn Diagnostic, fallback_file: &str) -> Self {
        let level = Level::of(diagnostic.severity());
        let code = diagnostic
            .code()
            .map_or_else(|| "regraft".to_string(), |c| c.to_string());
        let mut finding = Self {
            severity: level,
            code,
            message: diagnostic.to_string(),
            file: fallback_file.to_string(),
            start: TOP,
            end: TOP,
            help: diagnostic.help().map(|h| h.to_string()),
            rule: None,
        };
        let label = diagnostic.labels().and_then(|mut l| l.next());
        if let (Some(source), Some(label)) = (diagnostic.source_code(), label) {
            let at = |offset: usize| {
                source
                    .read_span(&(offset, 0).into(), 0, 0)
                    .ok()
                    .map(|c| (c.name().map(str::to_string), c.line(), c.column()))
            };
            let span = label.inner();
            if let (Some((name, l0, c0)), Some((_, l1, c1))) =
                (at(span.offset()), at(span.offset() + span.len()))
            {
                if let Some(name) = name {
                    finding.file = name;
                }
                finding.start = LineCol {
                    line: l0 + 1,
                    column: c0 + 1,
                };
                finding.end = LineCol {
                    line: l1 + 1,
                    column: c1 + 1,
                };
            }
        }
        finding
    }

    /// The message with its hint, for formats that have one text field.
    fn full_message(&self) -> String {
        match &self.help {
            Some(h) => format!("{} ({h})", self.message),
            None => self.message.clone(),
        }
    }
}

/// GitHub Actions workflow commands, one line per finding.
pub fn github(findings: &[Finding]) -> String {
    // The runner's escaping: data (the message) escapes `%`, CR and LF; a property (file,
    // title) also `:` and `,`, which would otherwise end it (`title=regraft::rule::x` was cut
    // at the first `::`).
    let escape = |s: &str| {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    };
    let property = |s: &str| escape(s).replace(':', "%3A").replace(',', "%2C");
    findings
        .iter()
        .map(|f| {
            format!(
                "::{} file={},line={},col={},endLine={},endColumn={},title={}::{}\n",
                f.severity.github(),
                property(&f.file),
                f.start.line,
                f.start.column,
                f.end.line,
                f.end.column,
                property(&f.code),
                escape(&f.message)
            )
        })
        .collect()
}

/// A SARIF 2.1.0 log of the findings: one run, one reporting rule per regraft rule. A
/// result's `ruleId` is the id of the rule it is about, and its diagnostic code is the
/// property `code`; a finding about no rule (a rule file that does not parse, a target CPython
/// rejects) takes its code as `ruleId`.
pub fn sarif(findings: &[Finding]) -> serde_json::Value {
    let rule_id = |f: &Finding| f.rule.clone().unwrap_or_else(|| f.code.clone());
    let mut ids: Vec<String> = findings.iter().map(rule_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let rules: Vec<serde_json::Value> = ids
        .iter()
        .map(|c| serde_json::json!({"id": c, "shortDescription": {"text": c}}))
        .collect();
    let results: Vec<serde_json::Value> = findings
        .iter()
        .map(|f| {
            let id = rule_id(f);
            serde_json::json!({
                "ruleId": id,
                "ruleIndex": ids.iter().position(|c| *c == id),
                "level": f.severity.sarif(),
                "message": {"text": f.full_message()},
                "properties": {"code": f.code},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": crate::source::path_uri(&f.file)},
                        "region": {
                            "startLine": f.start.line,
                            "startColumn": f.start.column,
                            "endLine": f.end.line,
                            "endColumn": f.end.column,
                        }
                    }
                }]
            })
        })
        .collect();
    serde_json::json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "regraft",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/regraft/regraft",
                "rules": rules,
            }},
            "results": results,
        }]
    })
}

/// How a command reports what it found to machines, beside its own human output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Text for people: diagnostics on stderr.
    Human,
    /// The command's own JSON report.
    Json,
    /// A SARIF 2.1.0 log of the findings.
    Sarif,
    /// GitHub Actions workflow commands (annotations).
    Github,
}

/// The findings in `format` (SARIF or GitHub), or `None` for the formats a command renders
/// itself (human, JSON).
pub fn render_findings(format: Format, findings: &[Finding]) -> Option<String> {
    match format {
        Format::Sarif => {
            Some(serde_json::to_string_pretty(&sarif(findings)).expect("SARIF serializes") + "\n")
        }
        Format::Github => Some(github(findings)),
        Format::Human | Format::Json => None,
    }
}
