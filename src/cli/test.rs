//! `regraft test`: run the test cases rules carry, against their snapshots.

use std::path::{Path, PathBuf};

use clap::Args;

use super::{Colors, out};
use crate::error::Error;
use crate::report::color::{BAD, GOOD};
use crate::report::findings::{Finding, Format, Level, render_findings};
use crate::report::testing::colored_diff;
use crate::testing::Update;

#[derive(Debug, Args)]
pub(super) struct TestArgs {
    /// A rule file or a folder of them (repeatable); default `./rules`.
    #[arg(short = 'r', long = "rules", value_name = "RULES")]
    rules: Vec<PathBuf>,
    /// Write snapshots for the cases whose output differs (or has none yet), each shown as a
    /// diff.
    #[arg(long, conflicts_with = "review")]
    update: bool,
    /// Show each snapshot that differs (or is missing) as a diff and ask whether to write it,
    /// one answer per line on stdin: `a` accepts, anything else (or the end of input) skips.
    #[arg(long)]
    review: bool,
    /// Run only the rules whose id contains ID.
    #[arg(long, value_name = "ID")]
    filter: Option<String>,
    /// How to report: `json` (every case), `sarif` or `github` (failing cases, at their rule).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

/// One case in the JSON report.
#[derive(Debug, serde::Serialize)]
struct CaseJson<'a> {
    rule: &'a str,
    case: &'a str,
    passed: bool,
    updated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
}

impl super::Configure for TestArgs {
    fn configure(&mut self, config: &crate::config::Config) {
        super::configured_rules(&mut self.rules, config);
    }
}

pub(super) fn run(args: TestArgs, colors: Colors) -> Result<u8, Error> {
    let palette = colors.stdout;
    let mut rules = Vec::new();
    for path in super::existing_rule_paths(&args.rules)? {
        rules.extend(crate::rules::load_path(&path)?);
    }
    let (mut passed, mut failed) = (0, 0);
    let selected = selected_rules(&rules, args.filter.as_deref())?;
    let human = args.format == Format::Human;
    let mut ask =
        |path: &Path, before: Option<&str>, after: &str| review(path, before, after, palette);
    let mut update = match (args.update, args.review) {
        (true, _) => Update::All,
        (_, true) => Update::Ask(&mut ask),
        _ => Update::No,
    };
    let mut all = Vec::new();
    for rule in selected {
        let results = crate::testing::run_rule(rule, &rules, &mut update)?;
        if results.is_empty() && human {
            out(format!("NO TESTS {}", rule.id.value) + "\n")?;
        }
        for result in results {
            match &result.failure {
                Some(_) => failed += 1,
                None => passed += 1,
            }
            // `-q` keeps the failures and the count.
            if human && (result.failure.is_some() || super::verbosity() > -1) {
                print_case(&result, palette, !args.review)?;
            }
            all.push((rule, result));
        }
    }
    match args.format {
        Format::Human => out(format!("{passed} passed, {failed} failed") + "\n")?,
        Format::Json => {
            let cases: Vec<CaseJson<'_>> = all
                .iter()
                .map(|(_, r)| CaseJson {
                    rule: &r.rule,
                    case: &r.case,
                    passed: r.failure.is_none(),
                    updated: r.updated,
                    message: r.failure.as_ref().map(|f| f.message.as_str()),
                })
                .collect();
            out(serde_json::to_string_pretty(&cases).expect("cases serialize") + "\n")?;
        }
        format => {
            let findings: Vec<Finding> = all
                .iter()
                .filter_map(|(rule, r)| {
                    let failure = r.failure.as_ref()?;
                    let message = format!("case `{}` fails: {}", r.case, failure.message);
                    Some(Finding::at_rule(
                        Level::Error,
                        "regraft::test",
                        message,
                        rule,
                    ))
                })
                .collect();
            out(render_findings(format, &findings).unwrap_or_default())?;
        }
    }
    Ok(u8::from(failed > 0))
}

/// One case's line, and the diff of a failed comparison.
fn print_case(
    result: &crate::testing::CaseResult,
    palette: crate::report::Palette,
    diff_written: bool,
) -> Result<(), Error> {
    let name = format!("{} › {}", result.rule, result.case);
    let Some(failure) = &result.failure else {
        let Some(wrote) = &result.wrote else {
            return out(format!("{} {name}", palette.paint(GOOD, "PASS")) + "\n");
        };
        // What was written, as the diff from what was there (all new for a first snapshot).
        let what = if wrote.before.is_some() {
            "wrote"
        } else {
            "created"
        };
        out(format!(
            "{} {name}: {what} {}\n",
            palette.paint(GOOD, "UPDATED"),
            wrote.path.display()
        ))?;
        // `--review` showed it already, before it was accepted.
        let before = wrote.before.as_deref().unwrap_or("");
        return match diff_written {
            true => out(colored_diff(before, &wrote.after, palette)),
            false => Ok(()),
        };
    };
    out(format!("{} {name}: {}", palette.paint(BAD, "FAIL"), failure.message) + "\n")?;
    if let Some((expected, actual)) = &failure.texts {
        out(colored_diff(expected, actual, palette))?;
    }
    Ok(())
}

/// `--review`: shows a snapshot's change and reads the answer, one line of stdin; `a`
/// accepts. The end of input, or no answer that can be read, keeps the snapshot as it is.
fn review(path: &Path, before: Option<&str>, after: &str, palette: crate::report::Palette) -> bool {
    let what = if before.is_some() {
        "differs"
    } else {
        "is new"
    };
    let shown = out(format!("snapshot {} {what}:\n", path.display()))
        .and_then(|()| out(colored_diff(before.unwrap_or(""), after, palette)))
        .and_then(|()| out("write it? [a]ccept, [s]kip: "));
    let mut answer = String::new();
    let read = std::io::stdin().read_line(&mut answer).unwrap_or(0);
    let accepted = shown.is_ok() && read > 0 && answer.trim() == "a";
    let _ = out(if accepted { "accepted\n" } else { "skipped\n" });
    accepted
}

/// The rules `--filter` selects (all without one); a filter that selects none is an error,
/// which would otherwise pass with nothing tested.
fn selected_rules<'r>(
    rules: &'r [crate::rules::model::Rule],
    filter: Option<&str>,
) -> Result<Vec<&'r crate::rules::model::Rule>, Error> {
    let selected: Vec<_> = rules
        .iter()
        .filter(|rule| filter.is_none_or(|f| rule.id.value.contains(f)))
        .collect();
    if let Some(filter) = filter
        && selected.is_empty()
    {
        let ids: Vec<&str> = rules.iter().map(|r| r.id.value.as_str()).collect();
        return Err(Error::Usage(format!(
            "no rule id contains `{filter}` (rules: {})",
            ids.join(", ")
        )));
    }
    Ok(selected)
}
