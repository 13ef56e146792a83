//! The command line: argument parsing and the commands, wiring load → compile → engine → report.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use rayon::prelude::*;

use crate::compile::RuleSet;
use crate::diagnostics::{render, stderr_color};
use crate::engine::{Engine, Patched, Target, describe_scope};
use crate::error::Error;
use crate::report::{ErrorJson, FileJson, summary, unified_diff};
use crate::rules::Syntax;
use crate::rules::error::{RuleError, RuleErrorKind};
use crate::rules::model::Phase;
use crate::source::FileError;
use crate::targets::{self, TargetFile};
use crate::versions::VersionEnv;

/// Declarative, versioned source patches for Python libraries.
#[derive(Debug, Parser)]
#[command(name = "regraft", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Apply rules to Python files, folders or stdin.
    Apply(ApplyArgs),
    /// Show how the engine understands a rule file: scopes, pattern, compiled query.
    Explain(ExplainArgs),
    /// Print rules in the other syntax, or rewrite rule files in their canonical layout.
    Fmt(FmtArgs),
    /// Check rule files: everything the loader rejects, plus duplicates, empty version ranges,
    /// unused loop bindings and rules without `expect`.
    Lint(LintArgs),
    /// Run the test cases rules carry, against their snapshots.
    Test(TestArgs),
    /// Show which rules hold on which upstream trees (the drift matrix).
    Matrix(MatrixArgs),
}

#[derive(Debug, Args)]
struct MatrixArgs {
    /// A rule file or a folder of them (repeatable); default `./rules`.
    #[arg(short = 'r', long = "rules", value_name = "RULES")]
    rules: Vec<PathBuf>,
    /// An upstream tree and its version, `PKG=VER:DIR` (repeatable).
    #[arg(long = "target", value_name = "PKG=VER:DIR", required = true)]
    targets: Vec<String>,
    /// Versions of other packages, e.g. `torch=2.5.1` (repeatable).
    #[arg(long = "with", value_name = "PKG=VER")]
    with: Vec<String>,
    /// How to report.
    #[arg(long, value_enum, default_value_t = MatrixFormat::Human)]
    format: MatrixFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum MatrixFormat {
    Human,
    Json,
    Markdown,
}

#[derive(Debug, Args)]
struct TestArgs {
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

#[derive(Debug, Args)]
struct LintArgs {
    /// A rule file or a folder of them (repeatable); default `./rules`.
    #[arg(short = 'r', long = "rules", value_name = "RULES")]
    rules: Vec<PathBuf>,
    /// How to report.
    #[arg(long, value_enum, default_value_t = LintFormat::Human)]
    format: LintFormat,
    /// Exit 1 on warnings too.
    #[arg(long)]
    deny_warnings: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LintFormat {
    Human,
    Json,
    Sarif,
    Github,
}

#[derive(Debug, Args)]
struct FmtArgs {
    /// Print FILE's rules in this syntax instead of rewriting it.
    #[arg(long, value_enum)]
    to: Option<SyntaxArg>,
    /// Exit 1 if a file is not in canonical layout; write nothing.
    #[arg(long, conflicts_with = "to")]
    check: bool,
    /// Rule files, or folders of them.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SyntaxArg {
    Dsl,
    Yaml,
}

/// Where rules come from and which versions gate them.
#[derive(Debug, Args)]
struct RuleArgs {
    /// A rule file or a folder of them (repeatable); default `./rules`.
    #[arg(short = 'r', long = "rules", value_name = "RULES")]
    rules: Vec<PathBuf>,
    /// A target package version, e.g. `transformers=4.57.6` (repeatable).
    #[arg(long = "with", value_name = "PKG=VER")]
    with: Vec<String>,
    /// Read package versions from a site-packages folder's `*.dist-info`.
    #[arg(long, value_name = "DIR")]
    site_packages: Option<PathBuf>,
    /// Run only this phase (init, pre_compile, post_compile).
    #[arg(long, value_parser = Phase::named)]
    phase: Option<Phase>,
}

#[derive(Debug, Args)]
struct ApplyArgs {
    #[command(flatten)]
    rules: RuleArgs,
    /// Print a unified diff instead of the patched source.
    #[arg(long, group = "mode")]
    diff: bool,
    /// Rewrite files in place, atomically.
    #[arg(long, group = "mode")]
    write: bool,
    /// Exit 1 if any file would change; write nothing.
    #[arg(long, group = "mode")]
    check: bool,
    /// How to report.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// End each patched file with one comment line naming the rules and versions applied.
    #[arg(long)]
    stamp: bool,
    /// The file name rules' `files` globs see when reading stdin.
    #[arg(long, value_name = "NAME")]
    stdin_filename: Option<String>,
    /// Files, folders (walked for `*.py`), or `-` for stdin.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
}

#[derive(Debug, Args)]
struct ExplainArgs {
    /// The rule file to explain.
    rule_file: PathBuf,
    /// Show every match in FILE, with bindings, and the near misses with why they failed.
    #[arg(long = "in", value_name = "FILE")]
    in_file: Option<PathBuf>,
    /// A target package version, e.g. `transformers=4.57.6` (repeatable).
    #[arg(long = "with", value_name = "PKG=VER")]
    with: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Human,
    Json,
}

/// Runs the command line and returns the process exit code.
pub fn run() -> u8 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let result = match cli.command {
        Command::Apply(args) => apply(args),
        Command::Explain(args) => explain(args),
        Command::Fmt(args) => fmt(args),
        Command::Lint(args) => lint(args),
        Command::Test(args) => test(args),
        Command::Matrix(args) => matrix(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprint!("{}", render(&e, stderr_color()));
            exit_code(&e)
        }
    }
}

/// The exit code a failure calls for: 3 for what the rules found in a target (drift,
/// conflicts, refusals, results that cannot be written), 2 for everything else (bad rules,
/// bad arguments, unreadable or unparseable targets).
fn exit_code(error: &Error) -> u8 {
    match error {
        Error::Patch(p) if !matches!(**p, crate::engine::PatchError::TargetSyntax { .. }) => 3,
        _ => 2,
    }
}

/// The rule paths given with `-r`, or `./rules`.
fn rule_paths(paths: &[PathBuf]) -> Vec<PathBuf> {
    if paths.is_empty() {
        vec![PathBuf::from("rules")]
    } else {
        paths.to_vec()
    }
}

/// Loads and compiles the rules named by `-r` (default `./rules`).
fn load_rules(paths: &[PathBuf]) -> Result<RuleSet, Error> {
    Ok(RuleSet::load(&rule_paths(paths))?)
}

fn load_versions(args: &RuleArgs) -> Result<VersionEnv, Error> {
    let mut env = VersionEnv::from_pairs(&args.with)?;
    if let Some(dir) = &args.site_packages {
        env.read_site_packages(dir)?;
    }
    Ok(env)
}

struct Outcome {
    file: TargetFile,
    original: String,
    result: Result<Patched, Error>,
}

fn apply(args: ApplyArgs) -> Result<u8, Error> {
    let rules = load_rules(&args.rules.rules)?;
    let versions = load_versions(&args.rules)?;
    let engine = Engine::new(&rules, &versions, args.rules.phase);
    engine.check_versions_known()?;

    let stdin = args.paths.len() == 1 && args.paths[0].as_os_str() == "-";
    let files = if stdin {
        let name = args
            .stdin_filename
            .clone()
            .unwrap_or_else(|| "<stdin>".into());
        vec![TargetFile {
            path: PathBuf::from("-"),
            display: name,
        }]
    } else {
        if args.paths.iter().any(|p| p.as_os_str() == "-") {
            return Err(Error::Usage(
                "`-` (stdin) cannot be combined with other paths".into(),
            ));
        }
        targets::collect(&args.paths)?
    };
    let to_stdout = !(args.diff || args.write || args.check) && args.format == Format::Human;
    if to_stdout && (files.len() != 1 || args.paths.iter().any(|p| p.is_dir())) {
        return Err(Error::Usage(
            "several target files: choose --diff, --write, --check or --format json".into(),
        ));
    }

    // Files are read and patched in parallel; results keep the order of the walk.
    let outcomes: Vec<Outcome> = files
        .into_par_iter()
        .map(|file| {
            let original = if stdin {
                let mut bytes = Vec::new();
                std::io::stdin()
                    .read_to_end(&mut bytes)
                    .map_err(|e| Error::from(FileError::io(&file.path, e)))
                    .and_then(|_| Ok(targets::decode(&file.display, bytes)?))
            } else {
                targets::read(&file).map_err(Error::from)
            };
            match original {
                Ok(original) => {
                    let mut result = engine
                        .patch(Target {
                            path: &file.display,
                            source: &original,
                        })
                        .map_err(Error::from);
                    // Over a whole tree, keeping every unchanged file's text twice would
                    // dominate memory: only changed files keep theirs (for diffs and writes).
                    if args.stamp
                        && let Ok(p) = &mut result
                        && p.changed()
                    {
                        let applied: Vec<&str> = p
                            .rules
                            .iter()
                            .filter(|r| r.status == crate::engine::RuleStatus::Applied)
                            .map(|r| r.rule.as_str())
                            .collect();
                        let stamped = crate::report::stamp(&p.output, &applied, &versions);
                        p.output = stamped;
                    }
                    let keep = to_stdout || result.as_ref().is_ok_and(Patched::changed);
                    if !keep && let Ok(p) = &mut result {
                        p.output = String::new();
                    }
                    Outcome {
                        file,
                        original: if keep { original } else { String::new() },
                        result,
                    }
                }
                Err(e) => Outcome {
                    file,
                    original: String::new(),
                    result: Err(e),
                },
            }
        })
        .collect();

    let color = stderr_color();
    let mut exit = 0u8;
    for outcome in &outcomes {
        if let Err(e) = &outcome.result {
            exit = exit.max(exit_code(e));
            if args.format == Format::Human {
                eprint!("{}", render(e, color));
            }
        }
    }
    let mut stdout = std::io::stdout().lock();
    if args.format == Format::Json {
        let reports: Vec<FileJson<'_>> = outcomes
            .iter()
            .map(|o| match &o.result {
                Ok(p) => FileJson::patched(&o.file.display, p),
                Err(e) => FileJson::failed(
                    &o.file.display,
                    ErrorJson {
                        kind: e.kind().to_string(),
                        message: e.to_string(),
                        exit_code: exit_code(e),
                    },
                ),
            })
            .collect();
        let json = serde_json::to_string_pretty(&reports).expect("reports serialize");
        let _ = writeln!(stdout, "{json}");
    }
    if exit != 0 {
        if args.write {
            eprintln!("nothing was written: fix the errors above first");
        }
        return Ok(exit);
    }
    let changed: Vec<(&Outcome, &Patched)> = outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().ok().map(|p| (o, p)))
        .filter(|(_, p)| p.changed())
        .collect();
    if args.format == Format::Human {
        for o in &outcomes {
            if let Ok(p) = &o.result {
                for warning in &p.warnings {
                    eprint!("warning (on_miss: warn): {}", render(warning, color));
                }
                for line in summary(&o.file.display, p) {
                    eprintln!("{line}");
                }
            }
        }
    }
    if to_stdout {
        let o = &outcomes[0];
        let text = o.result.as_ref().map_or(&o.original, |p| &p.output);
        let _ = stdout.write_all(text.as_bytes());
    } else if args.diff && args.format == Format::Human {
        for (o, p) in &changed {
            let _ =
                stdout.write_all(unified_diff(&o.file.display, &o.original, &p.output).as_bytes());
        }
    } else if args.write {
        if stdin {
            if let Some((_, p)) = changed.first() {
                let _ = stdout.write_all(p.output.as_bytes());
            }
        } else {
            for (o, p) in &changed {
                targets::write_atomic(&o.file.path, &p.output)?;
            }
        }
    } else if args.check && !changed.is_empty() {
        if args.format == Format::Human {
            for (o, _) in &changed {
                eprintln!("would patch {}", o.file.display);
            }
        }
        return Ok(1);
    }
    Ok(0)
}

fn explain(args: ExplainArgs) -> Result<u8, Error> {
    use std::fmt::Write as _;
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
    let engine = Engine::new(&rules, &versions, None);
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let mut out = String::new();
    for (i, rule) in rules.rules.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&crate::report::explain_rule(rule, &describe_scope(rule)));
        let Some((file, text)) = &target else {
            continue;
        };
        let explanation = engine.explain(
            i,
            Target {
                path: &file.display,
                source: text,
            },
        )?;
        let _ = writeln!(out, "\nin {}:", file.display);
        for reason in &explanation.inactive {
            let _ = writeln!(out, "  would not run: {reason}");
        }
        let n = explanation.matches.len();
        let _ = writeln!(out, "  {n} match{}", if n == 1 { "" } else { "es" });
        for m in &explanation.matches {
            let _ = writeln!(out, "    at {}:{}", m.start.line, m.start.column);
            for (name, value) in &m.bindings {
                let value = crate::report::one_line(value, 60);
                let _ = writeln!(out, "      ${name} = {value}");
            }
        }
        if explanation.near_misses.is_empty() {
            let _ = writeln!(out, "  no near misses");
        } else {
            let _ = writeln!(out, "  near misses, nearest first:");
            for near in &explanation.near_misses {
                out.push_str(&render(near, color));
            }
        }
    }
    print!("{out}");
    Ok(0)
}

/// Rules of one file in `syntax`, each with the comment lines that stood above it.
fn render_rules(rules: &[crate::rules::model::Rule], syntax: Syntax) -> String {
    use crate::rules::write;
    let with_comments: Vec<_> = rules
        .iter()
        .map(|r| {
            let comments = write::leading_comments(r.origin.file.text(), r.origin.span.start);
            (r.clone(), comments)
        })
        .collect();
    match syntax {
        Syntax::Yaml => write::to_yaml(&with_comments),
        Syntax::Dsl => write::to_dsl(&with_comments),
    }
}

fn fmt(args: FmtArgs) -> Result<u8, Error> {
    if let Some(to) = args.to {
        let [file] = args.files.as_slice() else {
            return Err(Error::Usage("--to converts one file at a time".into()));
        };
        let rules = crate::rules::load_file(file)?;
        let syntax = match to {
            SyntaxArg::Dsl => Syntax::Dsl,
            SyntaxArg::Yaml => Syntax::Yaml,
        };
        print!("{}", render_rules(&rules, syntax));
        return Ok(0);
    }
    let mut files = Vec::new();
    for path in &args.files {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = ignore::WalkBuilder::new(path)
                .standard_filters(false)
                .build()
                .flatten()
                .map(|e| e.into_path())
                .filter(|p| p.is_file() && crate::rules::is_rule_file(p))
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    let mut unformatted = false;
    for file in &files {
        let rules = crate::rules::load_file(file)?;
        let Some(first) = rules.first() else { continue };
        let original = first.origin.file.text().to_string();
        let syntax = Syntax::of(file).unwrap_or(Syntax::Yaml);
        let output = render_rules(&rules, syntax);
        if output == original {
            continue;
        }
        if args.check {
            println!("would reformat {}", file.display());
            unformatted = true;
            continue;
        }
        if let Some(at) = crate::rules::write::dropped_comment(&original, &output) {
            return Err(
                RuleError::new(RuleErrorKind::CommentWouldBeLost, &first.origin.file, at)
                    .with_help("fmt keeps the comment lines above each rule: move it there")
                    .into(),
            );
        }
        targets::write_atomic(file, &output)?;
        println!("formatted {}", file.display());
    }
    Ok(u8::from(unformatted))
}

fn lint(args: LintArgs) -> Result<u8, Error> {
    use miette::Severity;
    let findings = crate::lint::lint(&rule_paths(&args.rules))?;
    let errors = findings
        .iter()
        .filter(|f| f.kind.severity() == Severity::Error)
        .count();
    let warnings = findings.len() - errors;
    match args.format {
        LintFormat::Human => {
            let color = stderr_color();
            for f in &findings {
                eprint!("{}", render(f, color));
            }
            eprintln!("{errors} error(s), {warnings} warning(s)");
        }
        LintFormat::Json => {
            let flat: Vec<_> = findings.iter().map(crate::lint::FindingJson::new).collect();
            println!(
                "{}",
                serde_json::to_string_pretty(&flat).expect("serializes")
            );
        }
        LintFormat::Sarif => {
            let log = crate::lint::sarif(&findings);
            println!(
                "{}",
                serde_json::to_string_pretty(&log).expect("serializes")
            );
        }
        LintFormat::Github => print!("{}", crate::lint::github(&findings)),
    }
    Ok(if errors > 0 {
        2
    } else if warnings > 0 && args.deny_warnings {
        1
    } else {
        0
    })
}

fn test(args: TestArgs) -> Result<u8, Error> {
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let (green, red, reset) = if color {
        ("\x1b[32m", "\x1b[31m", "\x1b[0m")
    } else {
        ("", "", "")
    };
    let mut rules = Vec::new();
    for path in rule_paths(&args.rules) {
        rules.extend(crate::rules::load_path(&path)?);
    }
    let (mut passed, mut failed) = (0, 0);
    for rule in &rules {
        if args
            .filter
            .as_ref()
            .is_some_and(|f| !rule.id.value.contains(f.as_str()))
        {
            continue;
        }
        for result in crate::testing::run_rule(rule, &rules, args.update)? {
            let name = format!("{} › {}", result.rule, result.case);
            match &result.failure {
                None if result.updated => {
                    passed += 1;
                    println!("{green}UPDATED{reset} {name}");
                }
                None => {
                    passed += 1;
                    println!("{green}PASS{reset} {name}");
                }
                Some(failure) => {
                    failed += 1;
                    println!("{red}FAIL{reset} {name}: {}", failure.message);
                    if let Some((expected, actual)) = &failure.texts {
                        print!("{}", crate::testing::colored_diff(expected, actual, color));
                    }
                }
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    Ok(u8::from(failed > 0))
}

fn matrix(args: MatrixArgs) -> Result<u8, Error> {
    let rules = load_rules(&args.rules)?;
    let with = VersionEnv::from_pairs(&args.with)?;
    let targets = args
        .targets
        .iter()
        .map(|t| crate::matrix::MatrixTarget::parse(t))
        .collect::<Result<Vec<_>, _>>()?;
    let rows = crate::matrix::run(&rules, &targets, &with)?;
    match args.format {
        MatrixFormat::Human => {
            let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            print!("{}", crate::matrix::human(&rows, color));
        }
        MatrixFormat::Markdown => print!("{}", crate::matrix::markdown(&rows)),
        MatrixFormat::Json => {
            println!(
                "{}",
                serde_json::to_string_pretty(&rows).expect("rows serialize")
            );
        }
    }
    // A `missing` of a rule with `on_miss: warn` or `skip` is shown but does not fail.
    let failing = rows
        .iter()
        .any(|r| r.status.is_failure() && (r.fails || r.status != crate::matrix::Status::Missing));
    Ok(if failing { 3 } else { 0 })
}
