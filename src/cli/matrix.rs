//! `regraft matrix`: which rules hold on which upstream trees.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{Colors, load_rules, out};
use crate::error::Error;
use crate::fetch::{Fetcher, Pick, Selection};
use crate::matrix::MatrixTarget;
use crate::report::findings::{Finding, Format, Level, render_findings};
use crate::report::matrix::{human, human_transposed, markdown};
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
    /// `rules`: a row per rule, a column per release; `releases`: the other way round;
    /// `auto` (default): releases as rows when the table is wider than the terminal.
    #[arg(long, value_enum, default_value_t = Layout::Auto)]
    layout: Layout,
}

/// How the human table is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Layout {
    /// Releases as rows when rules as rows would be wider than the terminal.
    Auto,
    /// A row per rule.
    Rules,
    /// A row per release.
    Releases,
}

/// Releases fetched on demand, shared by `matrix` and `bisect`.
#[derive(Debug, Args)]
pub(super) struct FetchArgs {
    /// Releases to fetch from the package index (with pip) into the cache: `PKG>=4.46`,
    /// `PKG>=4.46,<5`, or patterns `PKG==4.46.*,4.5*,5.*` (repeatable).
    #[arg(long = "fetch", value_name = "SELECTION")]
    pub fetch: Vec<String>,
    /// At most this many releases per selection, the newest kept (matrix: 12 unless given;
    /// bisect: the whole range it is given, which it samples in O(log n) fetches).
    #[arg(long, value_name = "N")]
    pub max_releases: Option<usize>,
    /// `minor`: only the newest patch release of each minor release the selection admits;
    /// `sample`: the oldest, the highest of each major release and the newest.
    #[arg(long, value_enum, value_name = "WHICH")]
    pub per: Option<Per>,
    /// Also the newest pre-release in each selection's range, where it is newer than every
    /// release (a release candidate of the next version).
    #[arg(long)]
    pub pre: bool,
    /// Where fetched releases are kept (default `$REGRAFT_CACHE`, else `~/.cache/regraft`).
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
}

/// Which releases of a selection `--per` keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum Per {
    /// The newest patch release of each minor release.
    Minor,
    /// The oldest, the highest of each major release and the newest (Sentry's sampling).
    Sample,
}

impl FetchArgs {
    /// What to take of each selection: `--per` and `--max-releases`, else `default_max`.
    pub(super) fn pick(&self, default_max: Option<usize>) -> Pick {
        Pick {
            per_minor: self.per == Some(Per::Minor),
            max: self.max_releases.or(default_max),
            sample: self.per == Some(Per::Sample),
            pre: self.pre,
        }
    }

    /// The fetched releases as matrix targets, each unpacked once into the cache. Releases a
    /// selection admits but the pick leaves out are named on stderr: a range asked for is
    /// never cut in silence.
    fn targets(&self) -> Result<Vec<MatrixTarget>, Error> {
        let fetcher = Fetcher::new(self.cache.clone());
        let mut out = Vec::new();
        for arg in &self.fetch {
            let selection = Selection::parse(arg)?;
            let (chosen, left_out) = fetcher.pick(&selection, self.pick(Some(12)))?;
            if let (Some(first), Some(last)) = (left_out.first(), left_out.last()) {
                super::err(format!(
                    "warning: `{arg}` admits {} releases; the matrix shows {} ({} .. {}) and leaves out {} ({first} .. {last}): --per minor takes the newest patch of each minor, --max-releases N more of the newest\n",
                    chosen.len() + left_out.len(),
                    chosen.len(),
                    chosen.first().map(ToString::to_string).unwrap_or_default(),
                    chosen.last().map(ToString::to_string).unwrap_or_default(),
                    left_out.len(),
                ));
            }
            for version in chosen {
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
        MatrixFormat::Human => {
            let by_rule = human(&rows, colors.stdout);
            // The terminal's width where stdout is one; 100 columns for a pipe or file.
            let width = terminal_size::terminal_size_of(std::io::stdout())
                .map_or(100, |(w, _)| usize::from(w.0));
            let first = |t: &str| t.lines().next().map_or(0, |l| l.chars().count());
            let by_release = human_transposed(&rows, colors.stdout);
            let transposed = match args.layout {
                Layout::Rules => false,
                Layout::Releases => true,
                // Too wide by rule, and narrower by release.
                Layout::Auto => first(&by_rule) > width && first(&by_release) < first(&by_rule),
            };
            out(if transposed { by_release } else { by_rule })?;
            for line in crate::matrix::pin_lines(&rules, &rows) {
                super::info(format!("{line}\n"));
            }
        }
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
        .any(|r| r.status.is_failure() && (r.fails || !r.status.is_drift()));
    Ok(if failing { 3 } else { 0 })
}

/// Each failing cell as a finding at its rule: an error where it fails the run, else a
/// warning (a `missing` under `on_miss: warn`).
fn findings(rules: &crate::compile::RuleSet, rows: &[crate::matrix::Row]) -> Vec<Finding> {
    rows.iter()
        .filter(|r| r.status.is_failure())
        .filter_map(|row| {
            let rule = rules.rules.iter().find(|r| r.id() == row.rule)?;
            let level = if row.fails || !row.status.is_drift() {
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
