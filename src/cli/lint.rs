//! `regraft lint`: check rule files and report every finding.

use std::path::PathBuf;

use clap::Args;
use miette::Severity;

use super::{Colors, err, out};
use crate::error::Error;
use crate::report::findings::{Finding, Format, render_findings};
use crate::report::lint::findings as located;
use crate::report::render;

#[derive(Debug, Args)]
pub(super) struct LintArgs {
    /// A rule file or a folder of them (repeatable); default `./rules`.
    #[arg(short = 'r', long = "rules", value_name = "RULES")]
    rules: Vec<PathBuf>,
    /// How to report.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Exit 1 on warnings too.
    #[arg(long)]
    deny_warnings: bool,
    /// Rule files to lint, as `-r` names them (what pre-commit passes).
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
}

impl super::Configure for LintArgs {
    fn configure(&mut self, config: &crate::config::Config) {
        if self.files.is_empty() {
            super::configured_rules(&mut self.rules, config);
        }
    }
}

pub(super) fn run(args: LintArgs, colors: Colors) -> Result<u8, Error> {
    let mut paths = args.rules.clone();
    paths.extend(args.files.iter().cloned());
    let findings = crate::lint::lint(&super::existing_rule_paths(&paths)?)?;
    let errors = findings
        .iter()
        .filter(|f| f.kind.severity() == Severity::Error)
        .count();
    let warnings = findings.len() - errors;
    let flat: Vec<Finding> = match args.format {
        Format::Human => Vec::new(),
        _ => located(&findings),
    };
    match args.format {
        Format::Human => {
            for f in &findings {
                err(render(f, colors.stderr));
            }
            super::info(format!("{errors} error(s), {warnings} warning(s)") + "\n");
        }
        Format::Json => {
            let json = serde_json::to_string_pretty(&flat).expect("serializes");
            out(json + "\n")?;
        }
        format => out(render_findings(format, &flat).unwrap_or_default())?,
    }
    Ok(if errors > 0 {
        2
    } else if warnings > 0 && args.deny_warnings {
        1
    } else {
        0
    })
}
