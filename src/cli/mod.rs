//! The command line: arguments, printing and exit codes live here and nowhere below. Each
//! command is one file; this one parses the arguments, decides colour once per stream, runs
//! the command and turns a failure into its exit code.

mod apply;
mod bisect;
mod docs;
mod explain;
mod fmt;
mod lint;
mod matrix;
mod new;
mod progress;
mod reach;
mod repo_paths;
mod test;
mod unselected;

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};

use crate::compile::RuleSet;
use crate::config::Config;
use crate::engine::PatchError;
use crate::error::Error;
use crate::report::color::ColorChoice;
use crate::report::{Palette, render};
use crate::rules::model::Phase;
use crate::source::FileError;
use crate::targets::TargetError;
use crate::versions::VersionEnv;

/// Declarative, versioned source patches for Python libraries.
/// The version `--version` prints: the crate's, the commit it was built from and its date.
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("REGRAFT_BUILD"), ")");

#[derive(Debug, Parser)]
#[command(name = "regraft", version = VERSION, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// When to colour output: `auto` (terminals; `NO_COLOR` and `FORCE_COLOR` are honoured),
    /// `always` or `never`.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    /// Read the project configuration from this file (`regraft.toml`, or a `pyproject.toml`
    /// with `[tool.regraft]`) instead of looking for one from the working directory up.
    #[arg(long, global = true, value_name = "FILE", conflicts_with = "no_config")]
    config: Option<PathBuf>,
    /// Read no project configuration.
    #[arg(long, global = true)]
    no_config: bool,
    /// Say less: `-q` leaves out summaries and progress (diagnostics and requested output
    /// stay); `-qq` prints nothing on stderr, the exit code alone tells.
    #[arg(short, long, global = true, action = clap::ArgAction::Count, conflicts_with = "verbose")]
    quiet: u8,
    /// Say more: the configuration read, what was loaded and walked, rules that matched
    /// nothing, and the time taken.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    /// How a rule file that does not load is reported: `full`, its diagnostics; `summary`,
    /// one line naming it and what was skipped (`regraft lint` shows why). The pre-commit
    /// hooks other than regraft-lint pass `summary`, so a broken rule is reported once a run.
    #[arg(long, global = true, value_enum, default_value_t = RuleErrors::Full)]
    rule_errors: RuleErrors,
}

/// How a rule file that does not load is reported (`--rule-errors`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum RuleErrors {
    /// The file's diagnostics.
    Full,
    /// One line naming the file and what was skipped.
    Summary,
}

/// `--rule-errors summary`, decided once per run.
static SUMMARY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Reports `error`: in full, or where it is a rule file's that does not load and
/// `--rule-errors summary` is given, in one line saying what was `skipped` for it.
fn report_error(error: &Error, skipped: &str, palette: Palette) {
    match error {
        Error::Rule(e) if SUMMARY.load(std::sync::atomic::Ordering::Relaxed) => err(format!(
            "error: {} does not load: {skipped} (`regraft lint {}` shows why)\n",
            e.file_name, e.file_name
        )),
        _ => err(render(error, palette)),
    }
}

/// How much a run says on stderr beside its results: -1 per `-q`, +1 per `-v`. Decided once
/// per run, like colour, and read by the printing helpers below.
static VERBOSITY: std::sync::atomic::AtomicI8 = std::sync::atomic::AtomicI8::new(0);

fn verbosity() -> i8 {
    VERBOSITY.load(std::sync::atomic::Ordering::Relaxed)
}

/// A command's flags that the project configuration supplies where the command line is
/// silent: what the user typed always wins.
trait Configure {
    /// Fills in the flags left out from `config`.
    fn configure(&mut self, config: &Config);
}

/// Paths the command line left out, taken from the configuration.
fn configured_rules(rules: &mut Vec<PathBuf>, config: &Config) {
    if rules.is_empty() {
        rules.clone_from(&config.rules);
    }
}

/// The configuration's versions first, so the command line's `--with` overrides a package.
fn configured_with(with: &mut Vec<String>, config: &Config) {
    let mut all = config.with.clone();
    all.append(with);
    *with = all;
}

impl Command {
    fn configure(&mut self, config: &Config) {
        match self {
            Command::Apply(a) => a.configure(config),
            Command::Explain(a) => a.configure(config),
            Command::Fmt(a) => a.configure(config),
            Command::Lint(a) => a.configure(config),
            Command::Test(a) => a.configure(config),
            Command::Matrix(a) => a.configure(config),
            Command::Bisect(a) => a.configure(config),
            Command::New(_)
            | Command::Init(_)
            | Command::Completions(_)
            | Command::Reach(_)
            | Command::Docs(_)
            | Command::Lsp => {}
        }
    }
}

/// The configuration in force: `--config`, else the nearest one found, else none.
fn project_config(cli: &Cli) -> Result<Config, Error> {
    if cli.no_config {
        return Ok(Config::default());
    }
    Ok(match &cli.config {
        Some(file) => Config::load(file)?,
        None => {
            let config = Config::discover(&std::env::current_dir().unwrap_or_default())?;
            if let Some(u) = &config.untrusted {
                eprintln!(
                    "warning: ignoring {}: it is owned by uid {}, not by you (set {}={} to trust \
                     it, or pass --config)",
                    u.file.display(),
                    u.owner,
                    crate::config::SAFE_DIRECTORIES,
                    std::fs::canonicalize(&u.file)
                        .ok()
                        .and_then(|f| f.parent().map(|p| p.display().to_string()))
                        .unwrap_or_else(|| ".".into()),
                );
            }
            config
        }
    })
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Apply rules to Python files, folders or stdin.
    Apply(apply::ApplyArgs),
    /// Show how the engine understands a rule file: scopes, pattern, compiled query.
    Explain(explain::ExplainArgs),
    /// Lay rule files out (as their authors wrote them, or in the canonical form), check
    /// their layout, or print rules in the other syntax.
    Fmt(fmt::FmtArgs),
    /// Check rule files: everything the loader rejects, plus duplicates, empty version ranges,
    /// unused loop bindings and rules without `expect`.
    Lint(lint::LintArgs),
    /// Run the test cases rules carry, against their snapshots.
    Test(test::TestArgs),
    /// Show which rules hold on which upstream trees (the drift matrix).
    Matrix(matrix::MatrixArgs),
    /// Find the first upstream release where a rule's status changes, fetching releases on
    /// demand, and show the upstream change near what it matched.
    Bisect(bisect::BisectArgs),
    /// Whether a release's code calls a function from given entry points, and how.
    Reach(reach::ReachArgs),
    /// Start a project: a regraft.toml, a rules/ folder with one rule and its cases, and a
    /// pre-commit set-up.
    Init(new::InitArgs),
    /// Scaffold a rule with its tests folder: `regraft new rule NAME`.
    New(new::NewArgs),
    /// Print a shell completion script: `regraft completions bash > /etc/bash_completion.d/regraft`.
    Completions(new::CompletionsArgs),
    /// Serve the Language Server Protocol on stdin/stdout for rule files (diagnostics, hover,
    /// completion, go to definition): point an editor's LSP client at `regraft lsp`.
    Lsp,
    /// Write the documentation site's generated pages (rule and command-line reference).
    #[command(hide = true)]
    Docs(docs::DocsArgs),
}

/// Colour for each output stream, decided once per run.
#[derive(Debug, Clone, Copy)]
struct Colors {
    stdout: Palette,
    stderr: Palette,
}

/// Runs the command line and returns the process exit code.
pub fn run() -> u8 {
    run_with(std::env::args_os())
}

/// Runs the command line `args` (the program name first) and returns the exit code: the
/// `regraft` console script of the Python wheel enters here.
pub fn run_with<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let mut cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let colors = Colors {
        stdout: Palette::for_stream(&std::io::stdout(), cli.color),
        stderr: Palette::for_stream(&std::io::stderr(), cli.color),
    };
    let level =
        i8::try_from(cli.verbose).unwrap_or(i8::MAX) - i8::try_from(cli.quiet).unwrap_or(i8::MAX);
    VERBOSITY.store(level, std::sync::atomic::Ordering::Relaxed);
    progress::install(level);
    SUMMARY.store(
        cli.rule_errors == RuleErrors::Summary,
        std::sync::atomic::Ordering::Relaxed,
    );
    let started = std::time::Instant::now();
    match project_config(&cli) {
        Ok(config) => {
            if let Some(file) = &config.file {
                detail(format!("config: {}\n", file.display()));
            }
            cli.command.configure(&config);
        }
        Err(e) => {
            err(render(&e, colors.stderr));
            return exit_code(&e);
        }
    }
    let result = match cli.command {
        Command::Apply(args) => apply::run(args, colors),
        Command::Explain(args) => explain::run(args, colors),
        Command::Fmt(args) => fmt::run(args, colors),
        Command::Lint(args) => lint::run(args, colors),
        Command::Test(args) => test::run(args, colors),
        Command::Matrix(args) => matrix::run(args, colors),
        Command::Bisect(args) => bisect::run(args),
        Command::Reach(args) => reach::run(args),
        Command::New(args) => new::run(args),
        Command::Init(args) => new::init(args),
        Command::Completions(args) => new::completions(args),
        Command::Docs(args) => docs::run(args),
        Command::Lsp => Ok(match crate::lsp::serve() {
            Ok(()) => 0,
            // The protocol's exit code for an `exit` without `shutdown`, and for a transport
            // that failed.
            Err(e) => {
                err(render(&e, colors.stderr));
                1
            }
        }),
    };
    detail(format!("done in {:.2?}\n", started.elapsed()));
    match result {
        Ok(code) => code,
        // A reader that stopped early (`regraft lint | head`) is a normal end.
        Err(e) if closed_stdout(&e) => 0,
        Err(e) => {
            report_error(&e, "nothing checked", colors.stderr);
            exit_code(&e)
        }
    }
}

/// Writes `text` to stdout. A failure ends the command; a closed stdout ends it quietly.
fn out(text: impl AsRef<str>) -> Result<(), Error> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_ref().as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| Error::from(FileError::io(Path::new("<stdout>"), e)))
}

/// Writes `text` to stderr (diagnostics, failures) unless `-qq`; a failure to write there
/// cannot be reported anywhere.
fn err(text: impl AsRef<str>) {
    if verbosity() > -2 {
        let _ = std::io::stderr().lock().write_all(text.as_ref().as_bytes());
    }
}

/// Summaries and notes on stderr, left out under `-q`.
pub(crate) fn info(text: impl AsRef<str>) {
    if verbosity() > -1 {
        err(text);
    }
}

/// Details on stderr, shown under `-v` only.
fn detail(text: impl AsRef<str>) {
    if verbosity() > 0 {
        err(text);
    }
}

/// Whether `error` is stdout having been closed by its reader.
fn closed_stdout(error: &Error) -> bool {
    matches!(
        error,
        Error::Target(TargetError::File(FileError::Io { path, error }))
            if path == "<stdout>" && error.kind() == std::io::ErrorKind::BrokenPipe
    )
}

/// The exit code a failure calls for: 3 for what the rules found in a target (drift,
/// conflicts, refusals, results that cannot be written), 2 for everything else (bad rules,
/// bad arguments, unreadable or unparseable targets).
fn exit_code(error: &Error) -> u8 {
    use crate::write::WriteError;
    match error {
        // 128 + the signal's number, as a shell reports a process a signal ended.
        Error::Write(WriteError::Interrupted { signal: "SIGTERM" }) => 143,
        Error::Write(WriteError::Interrupted { .. }) => 130,
        Error::Patch(p)
            if !matches!(
                **p,
                PatchError::TargetSyntax { .. } | PatchError::MixedLineEnds { .. }
            ) =>
        {
            3
        }
        _ => 2,
    }
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

impl Configure for RuleArgs {
    fn configure(&mut self, config: &Config) {
        configured_rules(&mut self.rules, config);
        configured_with(&mut self.with, config);
        if self.site_packages.is_none() {
            self.site_packages.clone_from(&config.site_packages);
        }
    }
}

impl RuleArgs {
    /// The package versions these arguments give.
    fn versions(&self) -> Result<VersionEnv, Error> {
        let mut env = VersionEnv::from_pairs(&self.with)?;
        if let Some(dir) = &self.site_packages {
            env.read_site_packages(dir)?;
        }
        Ok(env)
    }

    /// Where a target's imports are followed: beside it, above it, and in `--site-packages`.
    fn modules(&self) -> crate::modules::FsModules {
        crate::modules::FsModules::new(self.site_packages.iter().cloned().collect())
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

/// The rule paths given with `-r` (or by the configuration), or `./rules`, each of which
/// must exist: one that does not is named with where it came from and what to do.
fn existing_rule_paths(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    let all = rule_paths(paths);
    if let Some(missing) = all.iter().find(|p| std::fs::symlink_metadata(p).is_err()) {
        return Err(Error::Usage(if paths.is_empty() {
            format!(
                "no rules here: `{}` (the default of `-r/--rules`) does not exist; give \
                 `-r FILE_OR_FOLDER`, or `rules = [...]` in regraft.toml",
                missing.display()
            )
        } else {
            format!(
                "rules `{}` (from `-r/--rules` or the configuration's `rules`): no such file \
                 or folder",
                missing.display()
            )
        }));
    }
    Ok(all)
}

/// Loads and compiles the rules named by `-r` (default `./rules`).
fn load_rules(paths: &[PathBuf]) -> Result<RuleSet, Error> {
    Ok(RuleSet::load(&existing_rule_paths(paths)?)?)
}
