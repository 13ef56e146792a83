//! Renderings of `lint` findings: flattened JSON, GitHub workflow commands and SARIF.

use miette::Severity;
use serde::Serialize;

use crate::rules::error::RuleError;
use crate::source::{LineCol, LineIndex};

/// One finding, flattened for machine-readable output.
#[derive(Debug, Serialize)]
pub struct FindingJson {
    /// `error` or `warning`.
    pub severity: &'static str,
    /// The diagnostic code.
    pub code: &'static str,
    /// The message.
    pub message: String,
    /// The rule file.
    pub file: String,
    /// Where the finding starts.
    pub start: LineCol,
    /// Where it ends.
    pub end: LineCol,
    /// A hint, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
}

impl FindingJson {
    /// Flattens a finding.
    pub fn new(e: &RuleError) -> Self {
        let text = e.file.text();
        let index = LineIndex::new(text);
        Self {
            severity: severity_name(e),
            code: e.kind.code_name(),
            message: e.to_string(),
            file: e.file_name.clone(),
            start: index.line_col(text, e.span.start),
            end: index.line_col(text, e.span.end.max(e.span.start)),
            help: e.help.clone(),
        }
    }
}

fn severity_name(e: &RuleError) -> &'static str {
    match e.kind.severity() {
        Severity::Warning | Severity::Advice => "warning",
        Severity::Error => "error",
    }
}

/// GitHub Actions workflow commands, one line per finding.
pub fn github(findings: &[RuleError]) -> String {
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
        .map(|e| {
            let f = FindingJson::new(e);
            format!(
                "::{} file={},line={},col={},endLine={},endColumn={},title={}::{}\n",
                f.severity,
                property(&f.file),
                f.start.line,
                f.start.column,
                f.end.line,
                f.end.column,
                property(f.code),
                escape(&f.message)
            )
        })
        .collect()
}

/// A SARIF 2.1.0 log of the findings.
pub fn sarif(findings: &[RuleError]) -> serde_json::Value {
    let mut codes: Vec<&'static str> = findings.iter().map(|e| e.kind.code_name()).collect();
    codes.sort_unstable();
    codes.dedup();
    let rules: Vec<serde_json::Value> = codes
        .iter()
        .map(|c| serde_json::json!({"id": c, "shortDescription": {"text": c}}))
        .collect();
    let results: Vec<serde_json::Value> = findings
        .iter()
        .map(|e| {
            let f = FindingJson::new(e);
            let mut message = f.message.clone();
            if let Some(h) = &f.help {
                message.push_str(&format!(" ({h})"));
            }
            serde_json::json!({
                "ruleId": f.code,
                "ruleIndex": codes.iter().position(|c| *c == f.code),
                "level": f.severity,
                "message": {"text": message},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": f.file},
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
