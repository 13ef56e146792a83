//! `regraft explain`: how the engine understands a rule file, and with `--in` what each rule
//! found in a file.

use std::path::PathBuf;

use clap::Args;

use super::{Colors, load_rules, out};
use crate::engine::{Engine, Target, describe_scope};
use crate::error::Error;
use crate::report::explain::{explain_rule, explanation};
use crate::targets;
use crate::versions::VersionEnv;

#[derive(Debug, Args)]
pub(super) struct ExplainArgs {
    /// The rule file to explain.
    rule_file: PathBuf,
    /// Show every match in FILE, with bindings, and the near misses with why they failed.
    #[arg(long = "in", value_name = "FILE")]
    in_file: Option<PathBuf>,
    /// A target package version, e.g. `transformers=4.57.6` (repeatable).
    #[arg(long = "with", value_name = "PKG=VER")]
    with: Vec<String>,
}

pub(super) fn run(args: ExplainArgs, colors: Colors) -> Result<u8, Error> {
    let rules = load_rules(std::slice::from_ref(&args.rule_file))?;
    let versions = VersionEnv::from_pairs(&args.with)?;
    let target = match &args.in_file {
        Some(path) => {
            let file = targets::collect(std::slice::from_ref(path))?
                .into_iter()
                .next()
                .ok_or_else(|| Error::Usage(format!("{} holds no Python file", path.display())))?;
            let text = targets::read(&file)?;
            Some((file, text))
        }
        None => None,
    };
    let modules = crate::modules::FsModules::default();
    let engine = Engine::new(&rules, &versions, None).with_modules(&modules);
    let mut text = String::new();
    for (i, rule) in rules.rules.iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.push_str(&explain_rule(rule, &describe_scope(rule)));
        if let Some((file, source)) = &target {
            let found = engine.explain(
                i,
                Target {
                    path: &file.display,
                    source,
                },
            )?;
            text.push_str(&explanation(&file.display, &found, colors.stdout));
        }
    }
    out(text)?;
    Ok(0)
}
