//! `regraft explain`: how the engine understands a rule file, and with `--in` what each rule
//! found in a file.

use std::path::{Path, PathBuf};

use clap::Args;

use super::{Colors, load_rules, out, rule_paths};
use crate::engine::{Engine, Target, describe_scope};
use crate::error::Error;
use crate::report::explain::{explain_rule, explanation};
use crate::targets;
use crate::versions::VersionEnv;

#[derive(Debug, Args)]
pub(super) struct ExplainArgs {
    /// The rule file to explain, or the id of a rule in the rules `-r` names.
    rule_file: PathBuf,
    /// Where to look a rule id up (repeatable); default `./rules`.
    #[arg(short = 'r', long = "rules", value_name = "RULES")]
    rules: Vec<PathBuf>,
    /// Show every match in FILE, with bindings, and the near misses with why they failed; a
    /// folder: each file in it that a rule's `files` select.
    #[arg(long = "in", value_name = "FILE|DIR")]
    in_file: Option<PathBuf>,
    /// A target package version, e.g. `transformers=4.57.6` (repeatable).
    #[arg(long = "with", value_name = "PKG=VER")]
    with: Vec<String>,
}

/// The rules to explain: those of the rule file, or the one rule of that id in the `-r`
/// folders. An `after` naming a rule not among them is dropped: the order is not what is
/// explained, and the rule it names may live in another file.
fn explained_rules(args: &ExplainArgs) -> Result<crate::compile::RuleSet, Error> {
    let load = |path: &std::path::Path| crate::rules::load_path(path).map_err(Error::Load);
    let mut rules = if args.rule_file.exists() {
        load(&args.rule_file)?
    } else {
        // Not a file: a rule id, looked up in the rule folders.
        let id = args.rule_file.to_string_lossy().into_owned();
        let mut loaded = Vec::new();
        for path in rule_paths(&args.rules) {
            loaded.extend(load(&path)?);
        }
        let ids: Vec<String> = loaded.iter().map(|r| r.id.value.clone()).collect();
        let Some(rule) = loaded.into_iter().find(|r| r.id.value == id) else {
            let names: Vec<&str> = ids.iter().map(String::as_str).collect();
            let hint = crate::rules::error::did_you_mean(&id, &names)
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            return Err(Error::Usage(format!(
                "`{id}` is neither a rule file nor the id of a rule in {}{hint}",
                rule_paths(&args.rules)
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        vec![rule]
    };
    let ids: Vec<String> = rules.iter().map(|r| r.id.value.clone()).collect();
    for rule in &mut rules {
        rule.after.retain(|a| ids.contains(&a.value));
    }
    if rules.is_empty() {
        return load_rules(std::slice::from_ref(&args.rule_file));
    }
    Ok(crate::compile::RuleSet::compile(rules)?)
}

impl super::Configure for ExplainArgs {
    fn configure(&mut self, config: &crate::config::Config) {
        super::configured_rules(&mut self.rules, config);
        super::configured_with(&mut self.with, config);
    }
}

pub(super) fn run(args: ExplainArgs, colors: Colors) -> Result<u8, Error> {
    let rules = explained_rules(&args)?;
    let versions = VersionEnv::from_pairs(&args.with)?;
    let targets = match &args.in_file {
        Some(path) => {
            let files = targets::collect(std::slice::from_ref(path))?;
            if files.is_empty() {
                return Err(Error::Usage(format!(
                    "{} holds no Python file",
                    path.display()
                )));
            }
            files
        }
        None => Vec::new(),
    };
    // A folder is explained file by file, each rule on the files its `files` select; a file
    // named alone is explained for every rule, saying so where `files` leaves it out.
    let folder = args.in_file.as_ref().is_some_and(|p| p.is_dir());
    let modules = crate::modules::FsModules::default();
    let engine = Engine::new(&rules, &versions, None).with_modules(&modules);
    let mut text = String::new();
    for (i, rule) in rules.rules.iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.push_str(&explain_rule(rule, &describe_scope(rule)));
        let selected: Vec<&targets::TargetFile> = targets
            .iter()
            .filter(|f| !folder || rule.selects(&f.display))
            .collect();
        if folder && selected.is_empty() {
            let globs: Vec<&str> = rule.rule.files.iter().map(|f| f.value.as_str()).collect();
            text.push_str(&format!(
                "\nin {}: no file there is selected by `files` ({})\n",
                args.in_file
                    .as_deref()
                    .unwrap_or_else(|| Path::new("."))
                    .display(),
                globs.join(", ")
            ));
        }
        for file in selected {
            let source = targets::read(file)?;
            let found = engine.explain(
                i,
                Target {
                    path: &file.display,
                    source: &source,
                },
            )?;
            text.push_str(&explanation(&file.display, &found, colors.stdout));
        }
    }
    out(text)?;
    Ok(0)
}
