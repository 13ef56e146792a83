//! `regraft init`, `regraft new rule NAME` and `regraft completions SHELL`: starting points
//! for projects, authors and shells.

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
pub(super) struct InitArgs {
    /// The project's folder.
    #[arg(default_value = ".")]
    dir: PathBuf,
}

const CONFIG: &str = r#"# regraft's project configuration: what the command line leaves out (what you type wins).
# Paths are relative to this file. See the manual's "Command line" page.
rules = ["rules"]
# with = ["mypackage=1.0"]                              # versions the rules are checked against
# site-packages = ".venv/lib/python3.12/site-packages"  # or read them from an environment
"#;

const PRE_COMMIT: &str = r#"# pre-commit (https://pre-commit.com): `pre-commit install`, then each commit checks the rule
# files. The mirror installs regraft's wheel: no Rust toolchain is needed.
repos:
  - repo: https://github.com/regraft/regraft-pre-commit
    rev: v0.1.0
    hooks:
      - id: regraft-lint    # every error and warning of the rule files
      - id: regraft-fmt     # their layout, as written
      # - id: regraft-check # once the rules name installed packages: they still apply cleanly
"#;

/// `regraft init [DIR]`: a configuration, a `rules/` folder with one rule and its cases, and
/// a pre-commit set-up (printed instead where the project has one). Writes nothing where any
/// of its files exists.
pub(super) fn init(args: InitArgs) -> Result<u8, Error> {
    let config = args.dir.join("regraft.toml");
    let rules = args.dir.join("rules");
    let pre_commit = args.dir.join(".pre-commit-config.yaml");
    let mut files = vec![(config.clone(), CONFIG.to_string())];
    files.extend(rule_files("example-rule", &rules));
    let has_pre_commit = pre_commit.exists();
    if !has_pre_commit {
        files.push((pre_commit.clone(), PRE_COMMIT.to_string()));
    }
    write_new(&files)?;
    let mut said = format!(
        "created {}, {}/ (example-rule and its cases){}\n",
        config.display(),
        rules.display(),
        if has_pre_commit {
            String::new()
        } else {
            format!(" and {}", pre_commit.display())
        }
    );
    if has_pre_commit {
        said.push_str(&format!(
            "{} exists: add these hooks to it:\n\n{PRE_COMMIT}\n",
            pre_commit.display()
        ));
    }
    said.push_str(
        "next: `regraft test` runs the rule's cases; `regraft new rule NAME` adds a rule\n",
    );
    out(said)?;
    Ok(0)
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
    let files = rule_files(&name, &dir);
    write_new(&files)?;
    out(format!(
        "created {} and {}/ (a case that patches, one the version gate skips, a near miss);\n\
         `regraft test -r {}` passes them as they are: now make them yours\n",
        files[0].0.display(),
        dir.join(format!("{name}.tests")).display(),
        dir.display()
    ))?;
    Ok(0)
}

/// A rule `name` in `dir` and its tests folder: each file with its text.
fn rule_files(name: &str, dir: &Path) -> Vec<(PathBuf, String)> {
    let fill = |t: &str| t.replace("{name}", name).replace("{package}", "mypackage");
    let tests = dir.join(format!("{name}.tests"));
    vec![
        (dir.join(format!("{name}.yaml")), fill(RULE)),
        (tests.join("patches-1.0.py"), fill(PATCHES)),
        (tests.join("patches-1.0.expected.py"), fill(EXPECTED)),
        (tests.join("gate-skips-0.9.py"), fill(GATE)),
        (tests.join("near-miss-other-call.py"), fill(NEAR_MISS)),
    ]
}

/// Writes `files`, none of which may exist: where one does, nothing is written.
fn write_new(files: &[(PathBuf, String)]) -> Result<(), Error> {
    if let Some((existing, _)) = files.iter().find(|(p, _)| p.exists()) {
        return Err(Error::Usage(format!(
            "{} already exists: nothing was written",
            existing.display()
        )));
    }
    let io = |p: &Path, e| Error::from(crate::targets::TargetError::from(FileError::io(p, e)));
    for (path, text) in files {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        fs::write(path, text).map_err(|e| io(path, e))?;
    }
    Ok(())
}
