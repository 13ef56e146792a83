//! `regraft apply`: patch files, folders or stdin, and print, diff, check or write the result.

use std::io::{Read, Write};
use std::path::PathBuf;

use clap::Args;
use rayon::prelude::*;

mod closing;

use super::{Colors, RuleArgs, err, exit_code, load_rules};
use crate::engine::{Engine, Patched, RuleStatus, Target};
use crate::error::Error;
use crate::report::findings::{Finding, Format, Level, render_findings};
use crate::report::{ErrorJson, FileJson, render, stamp, summary, unified_diff};
use crate::source::FileError;
use crate::targets::{self, TargetFile};
use crate::versions::VersionEnv;
use crate::write::{WriteError, WriteSet};

#[derive(Debug, Args)]
pub(super) struct ApplyArgs {
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
    /// Exit 0 when every rule still applies cleanly (pins hold, expectations met; no drift,
    /// conflict or refusal), whether or not files would change; write nothing. The check of a
    /// runtime patcher, whose targets are upstream's sources.
    #[arg(long, group = "mode")]
    verify: bool,
    /// How to report: `json` (every file and rule), `sarif` or `github` (failures, warnings,
    /// and each site a rule changes or would change).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// With `--write`: replace a target that has hard links, its other names keeping the old
    /// file (refused otherwise).
    #[arg(long, requires = "write")]
    detach_links: bool,
    /// End each patched file with one comment line naming the rules and versions applied.
    #[arg(long)]
    stamp: bool,
    /// Refuse targets larger than this many bytes (they are read whole).
    #[arg(long, value_name = "BYTES", default_value_t = targets::MAX_FILE_BYTES)]
    max_file_size: u64,
    /// The file name rules' `files` globs see when reading stdin.
    #[arg(long, value_name = "NAME")]
    stdin_filename: Option<String>,
    /// Target paths the configuration's `exclude` leaves out of folder walks.
    #[arg(skip)]
    exclude: Option<crate::config::Exclude>,
    /// Files, folders (walked for `*.py`), or `-` for stdin; default: the configuration's
    /// `targets`.
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
}

/// One target after patching: its text kept only where it is needed (diffs, writes, stdout).
struct Outcome {
    file: TargetFile,
    original: String,
    result: Result<Patched, Error>,
}

/// What the run reads and where its result goes, from checked arguments.
struct Plan {
    files: Vec<TargetFile>,
    stdin: bool,
    /// The one file's patched text goes to stdout.
    to_stdout: bool,
}

impl super::Configure for ApplyArgs {
    fn configure(&mut self, config: &crate::config::Config) {
        self.rules.configure(config);
        self.exclude.clone_from(&config.exclude);
        if self.paths.is_empty() {
            self.paths.clone_from(&config.targets);
        }
    }
}

pub(super) fn run(args: ApplyArgs, colors: Colors) -> Result<u8, Error> {
    let rules = load_rules(&args.rules.rules)?;
    let versions = args.rules.versions()?;
    let modules = args.rules.modules();
    let engine = Engine::new(&rules, &versions, args.rules.phase).with_modules(&modules);
    engine.check_versions_known()?;
    let plan = plan(&args)?;
    super::detail(format!(
        "{} rule(s) from {}; {} target file(s); versions: {}\n",
        rules.rules.len(),
        super::rule_paths(&args.rules.rules)
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        plan.files.len(),
        versions
            .iter()
            .map(|(p, v)| format!("{p}=={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    if plan.stdin && args.stdin_filename.is_none() {
        super::unselected::note_stdin(&rules)?;
    }
    let outcomes = patch_all(&engine, &versions, &plan, &args);
    let unselected = match plan.stdin {
        true => Vec::new(),
        false => super::unselected::report(&rules, &plan.files, args.check || args.verify),
    };
    let mut exit = report_failures(&outcomes, &args, colors);
    for line in crate::engine::totals::missed(
        &rules,
        outcomes.iter().filter_map(|o| o.result.as_ref().ok()),
    ) {
        let (_, line) = line;
        err(format!("error: {line}\n"));
        exit = exit.max(3);
    }
    // Applying is not taking effect: under `--verify`, code no entry point calls is drift.
    if args.verify && !plan.stdin {
        let patched = outcomes
            .iter()
            .filter_map(|o| o.result.as_ref().ok().map(|p| (o.file.path.as_path(), p)));
        for (_, line) in crate::engine::totals::unreached(&rules, patched) {
            err(format!("error: {line}\n"));
            exit = exit.max(3);
        }
    }
    if exit != 0 {
        if args.check && args.format == Format::Human {
            // One broken file hides no other's change: every file that would change is named.
            report_summaries(&outcomes, colors, false);
            closing::check_lines(&outcomes);
        }
        print_findings(&outcomes, &args, false)?;
        if args.write {
            err("nothing was written: fix the errors above first\n");
        }
        return Ok(exit);
    }
    let written = args.write && !plan.stdin;
    // A write that fails reports no file as patched: the summaries follow the write.
    if args.format == Format::Human && !written {
        report_summaries(&outcomes, colors, written);
    }
    let code = emit(&outcomes, &plan, &args, colors, &unselected)?;
    let code = if unselected.is_empty() { code } else { 3 };
    if args.format == Format::Human && written {
        report_summaries(&outcomes, colors, written);
    }
    print_findings(&outcomes, &args, written)?;
    Ok(code)
}

/// Under `--format sarif|github`: every failure, every warning, and each site a rule changed
/// (or would change: an error under `--check`, where a change is what fails).
fn print_findings(outcomes: &[Outcome], args: &ApplyArgs, written: bool) -> Result<(), Error> {
    if !matches!(args.format, Format::Sarif | Format::Github) {
        return Ok(());
    }
    let mut findings = Vec::new();
    for o in outcomes {
        let p = match &o.result {
            Ok(p) => p,
            Err(e) => {
                let mut finding = Finding::of_diagnostic(e, &o.file.display);
                if let Error::Patch(p) = e {
                    finding.rule = p.rule_id().map(str::to_string);
                }
                findings.push(finding);
                continue;
            }
        };
        for w in &p.warnings {
            let mut finding = Finding::of_diagnostic(w, &o.file.display);
            finding.severity = Level::Warning;
            finding.rule = w.rule_id().map(str::to_string);
            findings.push(finding);
        }
        let level = if args.check {
            Level::Error
        } else {
            Level::Note
        };
        let what = if written { "applied" } else { "would apply" };
        for r in p.rules.iter().filter(|r| r.status == RuleStatus::Applied) {
            for m in r.matches.iter().filter(|m| !m.edits.is_empty()) {
                findings.push(Finding {
                    severity: level,
                    // An annotation's title names the rule (its code is where it applied).
                    code: r.rule.clone(),
                    message: format!("rule `{}` {what} here", r.rule),
                    file: o.file.display.clone(),
                    start: m.start,
                    end: m.end,
                    help: None,
                    rule: Some(r.rule.clone()),
                });
            }
        }
    }
    // Code scanning resolves paths against the repository root: `../../tree/x.py` as typed
    // would match nothing there.
    let root = super::repo_paths::repository_root();
    for finding in &mut findings {
        finding.file = super::repo_paths::repo_relative(&finding.file, root.as_deref());
    }
    super::out(render_findings(args.format, &findings).unwrap_or_default())
}

/// Which files to read, and whether the result goes to stdout.
fn plan(args: &ApplyArgs) -> Result<Plan, Error> {
    if args.paths.is_empty() {
        return Err(Error::Usage(
            "no targets: name files or folders (or `-` for stdin), or set `targets` in regraft.toml".into(),
        ));
    }
    let stdin = args.paths.len() == 1 && args.paths[0].as_os_str() == "-";
    let files = if stdin {
        let display = args
            .stdin_filename
            .clone()
            .unwrap_or_else(|| "<stdin>".into());
        vec![TargetFile {
            path: PathBuf::from("-"),
            display,
        }]
    } else {
        if args.paths.iter().any(|p| p.as_os_str() == "-") {
            return Err(Error::Usage(
                "`-` (stdin) cannot be combined with other paths".into(),
            ));
        }
        match args.exclude.clone() {
            Some(exclude) => targets::collect_excluding(
                &args.paths,
                std::sync::Arc::new(move |p: &std::path::Path| exclude.matches(p)),
            )?,
            None => targets::collect(&args.paths)?,
        }
    };
    let (files, aliases) = targets::distinct(files);
    for (alias, first) in &aliases {
        super::info(format!(
            "note: {} is the same file as {first} (a link): patched once, as {first}\n",
            alias.display
        ));
    }
    let to_stdout =
        !(args.diff || args.write || args.check || args.verify) && args.format == Format::Human;
    if to_stdout && (files.len() != 1 || args.paths.iter().any(|p| p.is_dir())) {
        return Err(Error::Usage(
            "several target files: choose --diff, --write, --check or --format json".into(),
        ));
    }
    Ok(Plan {
        files,
        stdin,
        to_stdout,
    })
}

/// Reads and patches every file in parallel; results keep the order of the walk.
fn patch_all(
    engine: &Engine<'_>,
    versions: &VersionEnv,
    plan: &Plan,
    args: &ApplyArgs,
) -> Vec<Outcome> {
    let outcomes = patch_files(engine, versions, plan, args, plan.files.clone());
    // A group applies in every file of the tree or in none: one that failed in some file (a
    // member's miss under `on_miss: warn`) is left out of the files where it applied too.
    let mut failed: Vec<(String, String, String)> = Vec::new();
    for o in &outcomes {
        for r in o.result.iter().flat_map(|p| &p.rules) {
            let group = engine.rule_group(r.index);
            if r.status == RuleStatus::Failed
                && let Some(group) = group
                && !failed.iter().any(|(g, _, _)| g == group)
            {
                failed.push((group.to_string(), r.rule.clone(), o.file.display.clone()));
            }
        }
    }
    if failed.is_empty() {
        return outcomes;
    }
    let excluded = engine.group_members(failed.iter().map(|(g, _, _)| g.as_str()));
    let (again, kept): (Vec<Outcome>, Vec<Outcome>) = outcomes.into_iter().partition(|o| {
        o.result
            .iter()
            .flat_map(|p| &p.rules)
            .any(|r| r.status == RuleStatus::Applied && excluded.contains(&r.index))
    });
    for o in &again {
        for (group, member, file) in &failed {
            err(format!(
                "warning: group `{group}` left out of {} too: member `{member}` failed in {file}\n",
                o.file.display
            ));
        }
    }
    let files = again.into_iter().map(|o| o.file).collect();
    let without = engine.excluding(&excluded);
    let mut outcomes = kept;
    outcomes.extend(patch_files(&without, versions, plan, args, files));
    let order: std::collections::HashMap<&std::path::Path, usize> = plan
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.path.as_path(), i))
        .collect();
    outcomes.sort_by_key(|o| order.get(o.file.path.as_path()).copied());
    outcomes
}

/// Reads and patches `files`, in parallel.
fn patch_files(
    engine: &Engine<'_>,
    versions: &VersionEnv,
    plan: &Plan,
    args: &ApplyArgs,
    files: Vec<TargetFile>,
) -> Vec<Outcome> {
    // A bar for a run long enough to wait on; a few files finish before it would draw.
    let task =
        (files.len() >= 200).then(|| crate::progress::begin("patching", Some(files.len() as u64)));
    files
        .into_par_iter()
        .map(|file| {
            if let Some(task) = &task {
                task.step();
            }
            let original = if plan.stdin {
                read_stdin(&file)
            } else {
                targets::read_capped(&file, args.max_file_size).map_err(Error::from)
            };
            match original {
                Ok(original) => patch_one(engine, versions, plan, args, file, original),
                Err(e) => Outcome {
                    file,
                    original: String::new(),
                    result: Err(e),
                },
            }
        })
        .collect()
}

fn read_stdin(file: &TargetFile) -> Result<String, Error> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| Error::from(FileError::io(&file.path, e)))?;
    Ok(targets::decode(&file.display, bytes)?)
}

fn patch_one(
    engine: &Engine<'_>,
    versions: &VersionEnv,
    plan: &Plan,
    args: &ApplyArgs,
    file: TargetFile,
    original: String,
) -> Outcome {
    let target = Target {
        path: &file.display,
        source: &original,
    };
    let mut result = engine.patch(target).map_err(Error::from);
    if args.stamp
        && let Ok(p) = &mut result
        && p.changed()
    {
        let applied: Vec<&str> = p
            .rules
            .iter()
            .filter(|r| r.status == RuleStatus::Applied)
            .map(|r| r.rule.as_str())
            .collect();
        p.output = stamp(&p.output, &applied, versions);
    }
    // Over a whole tree, keeping every file's text twice would dominate memory: only a
    // changed file that is diffed or written keeps its texts.
    let keep = plan.to_stdout
        || plan.stdin
        || ((args.diff || args.write) && result.as_ref().is_ok_and(Patched::changed));
    if let Ok(p) = &mut result {
        if !keep {
            p.output = String::new();
        }
        // A pack of hundreds of rules finds nothing with most of them in every file; only
        // JSON and `-v` show those reports, so other runs drop them as each file is done.
        if args.format != Format::Json && super::verbosity() < 1 {
            // A rule counted over the run (`expect: {per: run}`) keeps them: each says the
            // rule was active there.
            let rules = engine.rules();
            p.rules.retain(|r| {
                r.status != RuleStatus::NoMatch
                    || rules.rule(r.index).rule.expect.is_some_and(|e| e.run)
            });
            p.rules.shrink_to_fit();
        }
    }
    Outcome {
        file,
        original: if keep { original } else { String::new() },
        result,
    }
}

/// Prints each failure (human) or the JSON report; returns the exit code they call for.
fn report_failures(outcomes: &[Outcome], args: &ApplyArgs, colors: Colors) -> u8 {
    let mut exit = 0u8;
    for outcome in outcomes {
        if let Err(e) = &outcome.result {
            exit = exit.max(exit_code(e));
            if args.format == Format::Human {
                err(render(e, colors.stderr));
                if let Error::Patch(p) = e
                    && let Some(command) = p.explain_command()
                {
                    err(format!(
                        "  the near misses, and why each fails: {command}\n\n"
                    ));
                }
            }
        }
    }
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
        let _ = writeln!(std::io::stdout().lock(), "{json}");
    }
    exit
}

/// Warnings and one line per rule that did something, on stderr.
fn report_summaries(outcomes: &[Outcome], colors: Colors, written: bool) {
    for o in outcomes {
        if let Ok(p) = &o.result {
            for warning in &p.warnings {
                use crate::engine::PatchError;
                let why = match warning {
                    PatchError::Action { .. } => "on_refuse: warn",
                    _ => "on_miss: warn",
                };
                err(format!(
                    "warning ({why}): {}",
                    render(warning, colors.stderr)
                ));
            }
            for line in summary(&o.file.display, p, written) {
                super::info(line + "\n");
            }
            for r in p.rules.iter().filter(|r| r.status == RuleStatus::NoMatch) {
                super::detail(format!("{}: {} no match\n", o.file.display, r.rule));
            }
        }
    }
}

/// Writes every changed file, or none: all staged beside their targets first, then renamed.
/// SIGINT and SIGTERM are caught for the write phase: before the renames they cancel it (the
/// temporary files go, nothing is written); once renames begin, they all finish first.
fn write_all(changed: &[(&Outcome, &Patched)], detach_links: bool) -> Result<(), Error> {
    // The bytes as read, and the new text in each file's declared encoding (PEP 263): every
    // file encodes, or nothing is written.
    let encoded = changed
        .iter()
        .map(|(o, p)| {
            let shown = &o.file.display;
            Ok((
                &o.file.path,
                targets::encode(shown, &o.original)?,
                targets::encode(shown, &p.output)?,
            ))
        })
        .collect::<Result<Vec<_>, targets::TargetError>>()?;
    use signal_hook::consts::{SIGINT, SIGTERM};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let caught = Arc::new(AtomicUsize::new(0));
    let ids: Vec<_> = [SIGINT, SIGTERM]
        .into_iter()
        .filter_map(|s| signal_hook::flag::register_usize(s, Arc::clone(&caught), s as usize).ok())
        .collect();
    let signal = || match caught.load(Ordering::SeqCst) {
        0 => None,
        s if s == SIGTERM as usize => Some("SIGTERM"),
        _ => Some("SIGINT"),
    };
    let result = (|| {
        let mut set = WriteSet::new();
        if detach_links {
            set = set.detaching_links();
        }
        for (path, original, output) in &encoded {
            if let Some(signal) = signal() {
                return Err(WriteError::Interrupted { signal });
            }
            set.stage(path, Some(original), output)?;
        }
        set.commit(&signal)
    })();
    for id in ids {
        signal_hook::low_level::unregister(id);
    }
    result.map(|_| ()).map_err(Error::from)
}

/// The path a diff header names: relative to the working directory where the file lies below
/// it, so `git apply` and `patch -p1` find it from there whatever path was given.
fn diff_path(path: &std::path::Path) -> String {
    targets::glob_path(&crate::source::named_from_here(path))
}

/// Prints, diffs, writes or checks the changed files; `unselected`: the rules that drifted by
/// selecting no target.
fn emit(
    outcomes: &[Outcome],
    plan: &Plan,
    args: &ApplyArgs,
    colors: Colors,
    unselected: &[String],
) -> Result<u8, Error> {
    let changed: Vec<(&Outcome, &Patched)> = outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().ok().map(|p| (o, p)))
        .filter(|(_, p)| p.changed())
        .collect();
    let mut stdout = std::io::stdout().lock();
    if plan.to_stdout {
        let o = &outcomes[0];
        let text = o.result.as_ref().map_or(&o.original, |p| &p.output);
        let bytes = targets::encode(&o.file.display, text).map_err(Error::from)?;
        let _ = stdout.write_all(&bytes);
    } else if args.diff && args.format == Format::Human {
        for (o, p) in &changed {
            let diff = unified_diff(&diff_path(&o.file.path), &o.original, &p.output);
            let diff = crate::report::color::paint_diff(&diff, colors.stdout);
            let _ = stdout.write_all(diff.as_bytes());
        }
    } else if args.write {
        if plan.stdin {
            if let Some((_, p)) = changed.first() {
                let _ = stdout.write_all(p.output.as_bytes());
            }
        } else {
            write_all(&changed, args.detach_links)?;
        }
    } else if args.check || args.verify {
        if args.format == Format::Human && args.verify {
            closing::verify_line(outcomes, &changed, unselected);
        } else if args.format == Format::Human {
            closing::check_lines(outcomes);
        }
        if args.check && !changed.is_empty() {
            return Ok(1);
        }
    }
    Ok(0)
}
