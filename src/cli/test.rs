//! `regraft test`: run the test cases rules carry, against their snapshots.

use std::path::PathBuf;

use clap::Args;

use super::{Colors, out, rule_paths};
use crate::error::Error;
use crate::report::color::{BAD, GOOD};
use crate::report::testing::colored_diff;

#[derive(Debug, Args)]
pub(super) struct TestArgs {
    /// A rule file or a folder of them (repeatable); default `./rules`.
    #[arg(short = 'r', long = "rules", value_name = "RULES")]
    rules: Vec<PathBuf>,
    /// Write snapshots for the cases whose output differs (or has none yet).
    #[arg(long)]
    update: bool,
    /// Run only the rules whose id contains ID.
    #[arg(long, value_name = "ID")]
    filter: Option<String>,
}

pub(super) fn run(args: TestArgs, colors: Colors) -> Result<u8, Error> {
    let palette = colors.stdout;
    let mut rules = Vec::new();
    for path in rule_paths(&args.rules) {
        rules.extend(crate::rules::load_path(&path)?);
    }
    let (mut passed, mut failed) = (0, 0);
    let selected: Vec<_> = rules
        .iter()
        .filter(|rule| {
            args.filter
                .as_ref()
                .is_none_or(|f| rule.id.value.contains(f.as_str()))
        })
        .collect();
    if let Some(filter) = &args.filter
        && selected.is_empty()
    {
        // A filter that selects nothing would otherwise pass with nothing tested.
        let ids: Vec<&str> = rules.iter().map(|r| r.id.value.as_str()).collect();
        return Err(Error::Usage(format!(
            "no rule id contains `{filter}` (rules: {})",
            ids.join(", ")
        )));
    }
    for rule in selected {
        let results = crate::testing::run_rule(rule, &rules, args.update)?;
        if results.is_empty() {
            out(format!("NO TESTS {}", rule.id.value) + "\n")?;
        }
        for result in results {
            let name = format!("{} › {}", result.rule, result.case);
            let Some(failure) = &result.failure else {
                passed += 1;
                let word = if result.updated { "UPDATED" } else { "PASS" };
                out(format!("{} {name}", palette.paint(GOOD, word)) + "\n")?;
                continue;
            };
            failed += 1;
            out(format!("{} {name}: {}", palette.paint(BAD, "FAIL"), failure.message) + "\n")?;
            if let Some((expected, actual)) = &failure.texts {
                out(colored_diff(expected, actual, palette))?;
            }
        }
    }
    out(format!("{passed} passed, {failed} failed") + "\n")?;
    Ok(u8::from(failed > 0))
}
