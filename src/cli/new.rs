//! `regraft new rule NAME` and `regraft completions SHELL`: starting points for authors and
//! shells.

use std::fs;
use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory, Subcommand};

use super::{Cli, out};
use crate::error::Error;
use crate::source::FileError;

#[derive(Debug, Args)]
pub(super) struct NewArgs {
    #[command(subcommand)]
    what: NewWhat,
}

#[derive(Debug, Subcommand)]
enum NewWhat {
    /// A rule file and its tests folder, with one case of each kind, that `regraft test`
    /// passes as written: edit the pattern, the action and the cases from there.
    Rule {
        /// The rule's id (one word: letters, digits, `-`, `_`).
        name: String,
        /// The folder to put it in.
        #[arg(long, default_value = "rules")]
        dir: PathBuf,
    },
}

#[derive(Debug, Args)]
pub(super) struct CompletionsArgs {
    /// The shell.
    shell: clap_complete::Shell,
}

pub(super) fn completions(args: CompletionsArgs) -> Result<u8, Error> {
    let mut buffer = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "regraft", &mut buffer);
    out(String::from_utf8_lossy(&buffer))?;
    Ok(0)
}

const RULE: &str = r#"# {name}: what it patches and why (one paragraph: the upstream change, the failure it
# causes, the release range).
id: {name}
description: Say in one sentence what the rule changes.
requires:
  {package}: ">=1.0"
files: ["**/{package}/*.py"]
match: "old_call($$$ARGS)"
action:
  replace: "new_call($$$ARGS)"
expect: 1
"#;

const PATCHES: &str = "# regraft: with {package}=1.0\n# regraft: path {package}/module.py\nresult = old_call(1, key=2)\n";
const EXPECTED: &str = "# regraft: with {package}=1.0\n# regraft: path {package}/module.py\nresult = new_call(1, key=2)\n";
const GATE: &str = "# regraft: with {package}=0.9\n# regraft: unchanged\n# regraft: path {package}/module.py\nresult = old_call(1, key=2)\n";
const NEAR_MISS: &str = "# regraft: with {package}=1.0\n# regraft: error drift\n# regraft: path {package}/module.py\nresult = other_call(1, key=2)\n";

pub(super) fn run(args: NewArgs) -> Result<u8, Error> {
    let NewWhat::Rule { name, dir } = args.what;
    if !crate::rules::convert::is_package_name(&name) || name.contains('.') {
        return Err(Error::Usage(format!(
            "`{name}` is not a rule id: one word of letters, digits, `-` and `_`"
        )));
    }
    let fill = |t: &str| t.replace("{name}", &name).replace("{package}", "mypackage");
    let rule = dir.join(format!("{name}.yaml"));
    let tests = dir.join(format!("{name}.tests"));
    let files = [
        (rule.clone(), fill(RULE)),
        (tests.join("patches-1.0.py"), fill(PATCHES)),
        (tests.join("patches-1.0.expected.py"), fill(EXPECTED)),
        (tests.join("gate-skips-0.9.py"), fill(GATE)),
        (tests.join("near-miss-other-call.py"), fill(NEAR_MISS)),
    ];
    if let Some((existing, _)) = files.iter().find(|(p, _)| p.exists()) {
        return Err(Error::Usage(format!(
            "{} already exists: nothing was written",
            existing.display()
        )));
    }
    let io = |p: &Path, e| Error::from(crate::targets::TargetError::from(FileError::io(p, e)));
    fs::create_dir_all(&tests).map_err(|e| io(&tests, e))?;
    for (path, text) in &files {
        fs::write(path, text).map_err(|e| io(path, e))?;
    }
    out(format!(
        "created {} and {}/ (a case that patches, one the version gate skips, a near miss);\n\
         `regraft test -r {}` passes them as they are: now make them yours\n",
        rule.display(),
        tests.display(),
        dir.display()
    ))?;
    Ok(0)
}
