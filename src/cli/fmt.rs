//! `regraft fmt`: rewrite rule files in their canonical layout, check it, or print rules in
//! the other syntax.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::out;
use crate::error::Error;
use crate::rules::error::{RuleError, RuleErrorKind};
use crate::rules::{self, Syntax, write};

#[derive(Debug, Args)]
pub(super) struct FmtArgs {
    /// Print FILE's rules in this syntax instead of rewriting it.
    #[arg(long, value_enum)]
    to: Option<SyntaxArg>,
    /// Exit 1 if a file is not in canonical layout; write nothing.
    #[arg(long, conflicts_with = "to")]
    check: bool,
    /// With `--check` (or alone, writing nothing), print the unified diff of each file that
    /// would be reformatted.
    #[arg(long, conflicts_with = "to")]
    diff: bool,
    /// Rule files, or folders of them; default: the configuration's rules, else `./rules`.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
}

impl super::Configure for FmtArgs {
    fn configure(&mut self, config: &crate::config::Config) {
        super::configured_rules(&mut self.files, config);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SyntaxArg {
    Dsl,
    Yaml,
}

pub(super) fn run(args: FmtArgs) -> Result<u8, Error> {
    if let Some(to) = args.to {
        let [file] = args.files.as_slice() else {
            return Err(Error::Usage("--to converts one file at a time".into()));
        };
        let syntax = match to {
            SyntaxArg::Dsl => Syntax::Dsl,
            SyntaxArg::Yaml => Syntax::Yaml,
        };
        out(write::render(&rules::load_file(file)?, syntax))?;
        return Ok(0);
    }
    let mut files = Vec::new();
    for path in &super::rule_paths(&args.files) {
        files.extend(rules::rule_files(path)?);
    }
    let mut unformatted = false;
    for file in &files {
        let rules = rules::load_file(file)?;
        let Some(first) = rules.first() else { continue };
        let original = first.origin.file.text().to_string();
        let output = write::render_in_place(&rules, Syntax::of(file).unwrap_or(Syntax::Yaml));
        if output == original {
            continue;
        }
        if args.check || args.diff {
            if args.diff {
                let name = crate::targets::glob_path(&crate::source::named_from_here(file));
                out(crate::report::unified_diff(&name, &original, &output))?;
            } else {
                out(format!("would reformat {}", file.display()) + "\n")?;
            }
            unformatted = true;
            continue;
        }
        if let Some(at) = write::dropped_comment(&original, &output) {
            return Err(
                RuleError::new(RuleErrorKind::CommentWouldBeLost, &first.origin.file, at)
                    .with_help("fmt keeps the comment lines above each rule: move it there")
                    .into(),
            );
        }
        crate::write::write_one(file, Some(original.as_bytes()), &output)?;
        out(format!("formatted {}", file.display()) + "\n")?;
    }
    Ok(u8::from(unformatted))
}
