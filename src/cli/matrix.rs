//! `regraft matrix`: which rules hold on which upstream trees.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{Colors, load_rules, out};
use crate::error::Error;
use crate::fetch::{Fetcher, Selection};
use crate::matrix::{MatrixTarget, Status};
use crate::report::findings::{Finding, Format, Level, render_findings};
use crate::report::matrix::{human, markdown};
use crate::versions::VersionEnv;

#[derive(Debug, Args)]
pub(super) struct MatrixArgs {
    /// A rule file or a folder of them (repeatable); default `./rules`.
    #[arg(short = 'r', long = "rules", value_name = "RULES")]
    rules: Vec<PathBuf>,
    /// An upstream tree and its version, `PKG=VER:DIR` (repeatable).
    #[arg(
        long = "target",
        value_name = "PKG=VER:DIR",
        required_unless_present = "fetch"
    )]
    targets: Vec<String>,
    /// Releases to fetch from the package index (with pip) and add as targets:
    /// `transformers>=4.46`, or patterns `transformers==4.46.*,4.5*,5.*` (repeatable).
    #[command(flatten)]
    fetch: FetchArgs,
    /// Versions of other packages, e.g. `torch=2.5.1` (repeatable).
    #[arg(long = "with", value_name = "PKG=VER")]
    with: Vec<String>,
    /// How to report.
    #[arg(long, value_enum, default_value_t = MatrixFormat::Human)]
    format: MatrixFormat,
    /// After the table, propose `fixed_upstream` and `requires` bounds from what it shows.
    #[arg(long)]
    suggest: bool,
}

/// Releases fetched on demand, shared by `matrix` and `bisect`.
#[derive(Debug, Args)]
pub(super) struct FetchArgs {
    /// Releases to fetch from the package index (with pip) into the cache: `PKG>=4.46`,
    /// `PKG>=4.46,<5`, or patterns `PKG==4.46.*,4.5*,5.*` (repeatable).
    #[arg(long = "fetch", value_name = "SELECTION")]
    pub fetch: Vec<String>,
    /// At most this many releases per selection (the newest).
    #[arg(long, value_name = "N", default_value_t = 12)]
    pub max_releases: usize,
    /// Where fetched releases are kept (default `$REGRAFT_CACHE`, else `~/.cache/regraft`).
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
}

impl FetchArgs {
    /// The fetched releases as matrix targets, each unpacked once into the cache.
    fn targets(&self) -> Result<Vec<MatrixTarget>, Error> {
        let fetcher = Fetcher::new(self.cache.clone());
        let mut out = Vec::new();
        for arg in &self.fetch {
            let selection = Selection::parse(arg)?;
            for version in fetcher.releases(&selection, self.max_releases)? {
                let dir = fetcher.tree(&selection.package, &version)?;
                out.push(MatrixTarget {
                    package: selection.package.clone(),
                    version,
                    dir,
                });
            }
        }
        Ok(out)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum MatrixFormat {
    Human,
    Json,
    Markdown,
    /// A SARIF 2.1.0 log: each failing cell, at its rule.
    Sarif,
    /// GitHub Actions annotations: each failing cell, at its rule.
    Github,
}

impl super::Configure for MatrixArgs {
    fn configure(&mut self, config: &crate::config::Config) {
        super::configured_rules(&mut self.rules, config);
        super::configured_with(&mut self.with, config);
    }
}

pub(super) fn run(args: MatrixArgs, colors: Colors) -> Result<u8, Error> {
    let rules = load_rules(&args.rules)?;
    let with = VersionEnv::from_pairs(&args.with)?;
    let mut targets = args
        .targets
        .iter()
        .map(|t| MatrixTarget::parse(t))
        .collect::<Result<Vec<_>, _>>()?;
    targets.extend(args.fetch.targets()?);
    let matrix = crate::matrix::run(&rules, &targets, &with)?;
    super::detail(format!(
        "{} file(s) in {} target(s); {} took the survey of an identical file of an earlier \
         target\n",
        matrix.files,
        targets.len(),
        matrix.reused
    ));
    let rows = matrix.rows;
    match args.format {
        MatrixFormat::Human => out(human(&rows, colors.stdout))?,
        MatrixFormat::Markdown => out(markdown(&rows))?,
        MatrixFormat::Json => {
            let json = serde_json::to_string_pretty(&rows).expect("rows serialize");
            out(json + "\n")?;
        }
        MatrixFormat::Sarif => {
            out(render_findings(Format::Sarif, &findings(&rules, &rows)).unwrap_or_default())?
        }
        MatrixFormat::Github => {
            out(render_findings(Format::Github, &findings(&rules, &rows)).unwrap_or_default())?
        }
    }
    if args.suggest {
        let lines = crate::matrix::suggestions(&rows, &targets);
        let text = if lines.is_empty() {
            "suggest: nothing: every rule's bounds fit what the matrix shows\n".to_string()
        } else {
            lines.iter().map(|l| format!("suggest: {l}\n")).collect()
        };
        super::err(text);
    }
    // A `missing` of a rule with `on_miss: warn` or `skip` is shown but does not fail.
    let failing = rows
        .iter()
        .any(|r| r.status.is_failure() && (r.fails || r.status != Status::Missing));
    Ok(if failing { 3 } else { 0 })
}

/// Each failing cell as a finding at its rule: an error where it fails the run, else a
/// warning (a `missing` under `on_miss: warn`).
fn findings(rules: &crate::compile::RuleSet, rows: &[crate::matrix::Row]) -> Vec<Finding> {
    rows.iter()
        .filter(|r| r.status.is_failure())
        .filter_map(|row| {
            let rule = rules.rules.iter().find(|r| r.id() == row.rule)?;
            let level = if row.fails || row.status != Status::Missing {
                Level::Error
            } else {
                Level::Warning
            };
            let message = match row.message.as_str() {
                "" => format!("{} on {}", row.status.name(), row.target),
                m => format!("{} on {}: {m}", row.status.name(), row.target),
            };
            Some(Finding::at_rule(
                level,
                format!("regraft::matrix::{}", row.status.name()),
                message,
                &rule.rule,
            ))
        })
        .collect()
}
