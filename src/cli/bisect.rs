//! `regraft bisect`: the first upstream release where a rule's status changes.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use super::matrix::FetchArgs;
use super::{load_rules, out};
use crate::error::Error;
use crate::fetch::{Fetcher, Selection};
use crate::matrix::{Row, bisect};
use crate::versions::VersionEnv;

#[derive(Debug, Args)]
pub(super) struct BisectArgs {
    /// The id of the rule (or pin) to follow.
    rule: String,
    /// A rule file or a folder of them (repeatable); default `./rules`.
    #[arg(short = 'r', long = "rules", value_name = "RULES")]
    rules: Vec<PathBuf>,
    /// Versions of other packages, e.g. `torch=2.5.1` (repeatable).
    #[arg(long = "with", value_name = "PKG=VER")]
    with: Vec<String>,
    #[command(flatten)]
    fetch: FetchArgs,
    /// Follow the rule as if it had no `requires` or `fixed_upstream`: where the shape it
    /// patches changes, not where its bounds say it stops.
    #[arg(long)]
    ungated: bool,
}

fn cell(row: &Row) -> String {
    match row.message.as_str() {
        "" => format!(
            "{} ({})",
            row.status.name(),
            crate::report::matches(row.matches as usize)
        ),
        message => format!("{} — {message}", row.status.name()),
    }
}

impl super::Configure for BisectArgs {
    fn configure(&mut self, config: &crate::config::Config) {
        super::configured_rules(&mut self.rules, config);
        super::configured_with(&mut self.with, config);
    }
}

pub(super) fn run(args: BisectArgs) -> Result<u8, Error> {
    let started = Instant::now();
    let rules = if args.ungated {
        let mut loaded = Vec::new();
        for path in super::rule_paths(&args.rules) {
            loaded.extend(crate::rules::load_path(&path).map_err(Error::Load)?);
        }
        for rule in loaded.iter_mut().filter(|r| r.id.value == args.rule) {
            rule.requires.clear();
            rule.fixed_upstream.clear();
        }
        crate::compile::RuleSet::compile(loaded)?
    } else {
        load_rules(&args.rules)?
    };
    let with = VersionEnv::from_pairs(&args.with)?;
    let [selection] = args.fetch.fetch.as_slice() else {
        return Err(Error::Usage(
            "bisect takes one --fetch selection, e.g. --fetch 'transformers>=4.46'".into(),
        ));
    };
    let selection = Selection::parse(selection)?;
    let fetcher = Fetcher::new(args.fetch.cache.clone());
    let found = bisect(
        &rules,
        &args.rule,
        &selection,
        args.fetch.pick(None),
        &with,
        &fetcher,
    )?;
    let package = &found.package;
    let mut text = String::new();
    let (good, good_row) = &found.good;
    match &found.bad {
        None => text.push_str(&format!(
            "{}: no change over {} releases of {package} ({good} .. newest): {}\n",
            found.rule,
            found.releases,
            cell(good_row)
        )),
        Some((bad, bad_row)) => {
            text.push_str(&format!(
                "{}: first changed in {package} {bad}\n  last {package} {good}: {}\n  first {package} {bad}: {}\n",
                found.rule,
                cell(good_row),
                cell(bad_row)
            ));
            if found.diff.is_empty() {
                text.push_str("  (no upstream change near the sites it matched)\n");
            } else {
                text.push_str(&format!(
                    "upstream change near the sites it matched in {good}:\n{}",
                    found.diff
                ));
            }
        }
    }
    text.push_str(&format!(
        "{} of {} releases looked at, {} fetched, {:.1} s\n",
        found.looked_at,
        found.releases,
        fetcher.downloads(),
        started.elapsed().as_secs_f64()
    ));
    out(text)?;
    Ok(0)
}
