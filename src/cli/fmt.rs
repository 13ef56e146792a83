//! `regraft fmt`: lay rule files out, check their layout, or print rules in the other syntax.
//!
//! A YAML file is written back as its author wrote it — a list of rules stays a list, keys
//! keep their order, scalars their quoting and comments their place — with only its layout
//! normalised (`rules::write::layout`); `--canonical` writes the canonical form instead. A DSL
//! file is written in the canonical DSL, its statements in the author's order. Whatever is
//! written must read as the very rules the file held: `fmt` checks that before it writes.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::out;
use crate::error::Error;
use crate::rules::error::{RuleError, RuleErrorKind};
use crate::rules::model::Rule;
use crate::rules::{self, Syntax, write};

#[derive(Debug, Args)]
pub(super) struct FmtArgs {
    /// Print FILE's rules in this syntax (the canonical form) instead of rewriting it.
    #[arg(long, value_enum)]
    to: Option<SyntaxArg>,
    /// Write each file in the canonical form: one YAML document per rule, keys in schema
    /// order, defaults left out, a value in the canonical writer's spelling unless the author's
    /// reads the same (by default a YAML file keeps its author's structure, key order and
    /// spelling, and only its layout is normalised).
    #[arg(long, conflicts_with = "to")]
    canonical: bool,
    /// Exit 1 if a file is not laid out as fmt writes it; write nothing.
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

pub(super) fn run(args: FmtArgs, colors: super::Colors) -> Result<u8, Error> {
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
    // Each file on its own: one that does not load (or would lose a comment) is reported and
    // the others are still formatted; the exit code is the worst file's.
    let mut code = 0;
    for file in &files {
        code = code.max(fmt_file(file, &args, colors.stderr)?);
    }
    Ok(code)
}

/// Formats, checks or diffs one file: 0 where it is laid out already (or now), 1 where
/// `--check` or `--diff` found it is not, 2 where it does not load or cannot be written.
fn fmt_file(file: &Path, args: &FmtArgs, palette: crate::report::Palette) -> Result<u8, Error> {
    let rules = match rules::load_file(file) {
        Ok(rules) => rules,
        Err(e) => {
            super::report_error(&Error::from(e), "not formatted", palette);
            return Ok(2);
        }
    };
    let Some(first) = rules.first() else {
        return Ok(0);
    };
    let original = first.origin.file.text().to_string();
    let syntax = Syntax::of(file).unwrap_or(Syntax::Yaml);
    let output = match args.canonical {
        true => write::render_in_place(&rules, syntax),
        false => in_place(&rules, &original, syntax, file),
    };
    if output == original {
        return Ok(0);
    }
    if !same_rules(&rules, &output, syntax) {
        super::err(format!(
            "error: fmt would change what {} reads as, so it leaves the file as it is (a bug \
             in regraft: please report it with the file)\n",
            file.display()
        ));
        return Ok(2);
    }
    if args.check || args.diff {
        if args.diff {
            let name = crate::targets::glob_path(&crate::source::named_from_here(file));
            out(crate::report::unified_diff(&name, &original, &output))?;
        } else {
            out(format!("would reformat {}", file.display()) + "\n")?;
        }
        return Ok(1);
    }
    if let Some(at) = write::dropped_comment(&original, &output) {
        // Only the canonical writers drop comments: `--canonical`, the DSL, and YAML the
        // layout writer declined (the note above said why).
        let help = "the canonical form keeps the comment lines above each rule and each of its \
                    keys: move it there";
        let error = RuleError::new(RuleErrorKind::CommentWouldBeLost, &first.origin.file, at)
            .with_help(help);
        super::err(crate::report::render(&Error::from(error), palette));
        return Ok(2);
    }
    crate::write::write_one(file, Some(original.as_bytes()), &output)?;
    out(format!("formatted {}", file.display()) + "\n")?;
    Ok(0)
}

/// What `fmt` writes back without `--canonical`: a YAML file as written, laid out; where the
/// layout writer declines it (saying why) or its text would read differently, and for the DSL,
/// the canonical form with the author's key order.
fn in_place(rules: &[Rule], original: &str, syntax: Syntax, file: &Path) -> String {
    if syntax == Syntax::Yaml {
        let reason = match write::layout::format(original) {
            Ok(text)
                if same_rules(rules, &text, syntax)
                    && write::dropped_comment(original, &text).is_none() =>
            {
                return text;
            }
            Ok(_) => "laid out, it would not read the same or would lose a comment".to_string(),
            Err(reason) => reason,
        };
        let canonical = write::render_in_author_order(rules, syntax);
        if canonical != original {
            super::info(format!(
                "note: {}: fmt cannot keep this file as written ({reason}): it writes the \
                 canonical form\n",
                file.display()
            ));
        }
        return canonical;
    }
    write::render_in_author_order(rules, syntax)
}

/// Whether `text` reads as exactly `rules`.
fn same_rules(rules: &[Rule], text: &str, syntax: Syntax) -> bool {
    let name = rules.first().map_or("", |r| r.origin.file.name());
    rules::load_text(name, text, syntax).is_ok_and(|read| read == rules)
}
