//! `regraft reach`: whether a release's code calls a function from given entry points, and
//! the chain of calls that does — the question `reached_from` asks, asked by hand.

use std::path::PathBuf;

use clap::Args;

use super::out;
use crate::error::Error;
use crate::reach::{Program, Verdict};

#[derive(Debug, Args)]
pub(super) struct ReachArgs {
    /// The release's folder (holding its top-level package, or the package itself).
    root: PathBuf,
    /// An entry point, `package.module.Class.method` (repeatable).
    #[arg(long = "from", required = true, value_name = "ENTRY")]
    from: Vec<String>,
    /// The function to reach: `package.module.Class.method`, or `FILE:LINE` (a file below the
    /// root and a line inside the function).
    #[arg(long, value_name = "FUNCTION")]
    to: String,
}

pub(super) fn run(args: ReachArgs) -> Result<u8, Error> {
    let package = args.from[0].split('.').next().unwrap_or_default();
    let root = Program::root_for(&args.root, package);
    let program = Program::new(&root);
    let sites = match args.to.rsplit_once(':') {
        Some((file, line)) if line.parse::<usize>().is_ok() => {
            vec![(root.join(file), line.parse().unwrap_or(1))]
        }
        _ => program.sites_of(&args.to).unwrap_or_default(),
    };
    if sites.is_empty() {
        out(format!(
            "unreached: this release does not define {}\n",
            args.to
        ))?;
        return Ok(3);
    }
    let verdict = program.reach(&args.from, &sites);
    out(format!(
        "{}\n({} modules read)\n",
        match &verdict {
            Verdict::Reached { .. } => verdict.message(&args.from),
            Verdict::Unreached { .. } => format!("unreached: {}", verdict.message(&args.from)),
        },
        program.modules_read()
    ))?;
    Ok(match verdict {
        Verdict::Reached { .. } => 0,
        Verdict::Unreached { .. } => 3,
    })
}
