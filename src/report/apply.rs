//! Renders outcomes: unified diffs, JSON reports and one-line human summaries.

use serde::Serialize;

use crate::engine::{Patched, RuleReport, RuleStatus};

/// A unified diff of `old` → `new`, with `a/` and `b/` headers naming `path`.
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(
            &format!("a/{}", path.trim_start_matches('/')),
            &format!("b/{}", path.trim_start_matches('/')),
        )
        .to_string()
}

/// The JSON object reported for one file.
#[derive(Debug, Serialize)]
pub struct FileJson<'a> {
    /// The file's path.
    pub path: &'a str,
    /// Whether the rules changed it.
    pub changed: bool,
    /// Every rule that selected it.
    pub rules: &'a [RuleReport],
    /// The failure, if patching failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorJson>,
    /// Drift of rules with `on_miss: warn`, refusals of rules with `on_refuse: warn`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<ErrorJson>,
}

/// A failure in a JSON report.
#[derive(Debug, Serialize)]
pub struct ErrorJson {
    /// `drift`, `conflict`, `action`, `target-syntax`, `unparseable-result`, `not-idempotent`,
    /// `io` or `encoding`.
    pub kind: String,
    /// The one-line message.
    pub message: String,
    /// The exit code it calls for.
    pub exit_code: u8,
}

impl<'a> FileJson<'a> {
    /// The report of a file that was patched (or needed nothing).
    pub fn patched(path: &'a str, patched: &'a Patched) -> Self {
        Self {
            path,
            changed: patched.changed(),
            rules: &patched.rules,
            error: None,
            warnings: patched
                .warnings
                .iter()
                .map(|w| ErrorJson {
                    kind: w.kind().to_string(),
                    message: w.to_string(),
                    exit_code: 0,
                })
                .collect(),
        }
    }

    /// The report of a file that failed.
    pub fn failed(path: &'a str, error: ErrorJson) -> Self {
        Self {
            path,
            changed: false,
            rules: &[],
            error: Some(error),
            warnings: Vec::new(),
        }
    }
}

/// One line per rule that did something: `path: rule-id applied (2 matches)` (`would apply`
/// where nothing is `written`).
pub fn summary(path: &str, patched: &Patched, written: bool) -> Vec<String> {
    patched
        .rules
        .iter()
        .filter(|r| r.status != RuleStatus::NoMatch)
        .map(|r| {
            let what = match r.status {
                // Nothing is written under --check, --diff or to stdout: it would apply.
                RuleStatus::Applied if written => "applied",
                RuleStatus::Applied => "would apply",
                RuleStatus::Redundant => "already applied",
                RuleStatus::Guarded => "guarded",
                RuleStatus::Refused => "refused",
                RuleStatus::Held => "holds",
                RuleStatus::Inactive => "inactive",
                RuleStatus::Retired => "retired",
                RuleStatus::NoMatch => "no match",
                // Its policy made the failure a warning: it drifted, and the file still applies.
                RuleStatus::Failed
                    if patched
                        .warnings
                        .iter()
                        .any(|w| w.rule_id() == Some(r.rule.as_str())) =>
                {
                    "drifted, warned (on_miss: warn)"
                }
                RuleStatus::Failed => "failed",
            };
            let detail = match &r.reason {
                Some(reason) => format!(" ({reason})"),
                None => format!(" ({})", matches(r.matches.len())),
            };
            format!("{path}: {} {what}{detail}", r.rule)
        })
        .collect()
}

/// The prefix of the line `--stamp` appends.
pub const STAMP_PREFIX: &str = "# patched by regraft:";

/// `output` with one comment line at its end naming the rules applied and the versions known;
/// it replaces an earlier stamp, and shifts no line of the file.
pub fn stamp(output: &str, rules: &[&str], versions: &crate::versions::VersionEnv) -> String {
    // The stamp line ends as the file's lines do: a CRLF file gets a CRLF line.
    let newline = if output.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let mut body = output.to_string();
    let trimmed = body.trim_end_matches(['\n', '\r']);
    if let Some(last) = trimmed.rsplit('\n').next()
        && last.starts_with(STAMP_PREFIX)
    {
        let cut = trimmed.len() - last.len();
        body.truncate(cut);
    }
    if !body.is_empty() && !body.ends_with('\n') {
        body.push_str(newline);
    }
    let versions: Vec<String> = versions.iter().map(|(p, v)| format!("{p}=={v}")).collect();
    let on = if versions.is_empty() {
        String::new()
    } else {
        format!(" on {}", versions.join(", "))
    };
    body.push_str(&format!("{STAMP_PREFIX} {}{on}{newline}", rules.join(", ")));
    body
}

/// `n` matches, in words: "1 match", "3 matches".
pub fn matches(n: usize) -> String {
    format!("{n} match{}", if n == 1 { "" } else { "es" })
}
