//! `regraft matrix`: which rules hold on which upstream trees.
//!
//! Each target is one upstream tree and its version. Its files are read and surveyed in
//! parallel, each parsed once for all rules, and every rule gets one status per target.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use pep440_rs::Version;
use rayon::prelude::*;
use serde::Serialize;

mod bisect;
mod pins;
mod reuse;
mod suggest;
pub use bisect::{Bisection, bisect};
pub use pins::pin_lines;
pub use suggest::suggestions;

use crate::compile::{CompiledRule, RuleId, RuleSet};
use crate::engine::{Engine, PatchError, Target};
use crate::error::Error;
use crate::targets;
use crate::versions::{Gate, VersionEnv};

/// One upstream tree: a package version and the folder holding its sources.
#[derive(Debug, Clone)]
pub struct MatrixTarget {
    /// The package, e.g. `transformers`.
    pub package: String,
    /// Its version.
    pub version: Version,
    /// The folder.
    pub dir: PathBuf,
}

impl MatrixTarget {
    /// Parses `PKG=VER:DIR`.
    pub fn parse(arg: &str) -> Result<Self, Error> {
        let usage = || Error::MatrixTarget {
            arg: arg.to_string(),
        };
        let (pair, dir) = arg.split_once(':').ok_or_else(usage)?;
        let (package, version) = pair.split_once('=').ok_or_else(usage)?;
        let version = version.trim_start_matches('=');
        let version = Version::from_str(version).map_err(|e| {
            Error::Version(crate::versions::VersionError::BadVersion {
                package: package.to_string(),
                version: version.to_string(),
                reason: e.to_string(),
            })
        })?;
        if package.is_empty() || dir.is_empty() {
            return Err(usage());
        }
        Ok(Self {
            package: package.to_string(),
            version,
            dir: PathBuf::from(dir),
        })
    }

    /// `PKG==VER`, as rows name targets.
    pub fn label(&self) -> String {
        format!("{}=={}", self.package, self.version)
    }
}

/// A rule's status on one target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// The version gate is off.
    Inactive,
    /// Active, and every selected file had the expected matches.
    Ok,
    /// Active and matching, but nothing to change: upstream already has the patched shape.
    Redundant,
    /// `fixed_upstream` holds: the patch is no longer needed here (expected, not drift).
    Retired,
    /// `expect` failed, or no file was selected at all.
    Missing,
    /// It matched, but no call from its `reached_from` entry points reaches what it edits:
    /// the patch applies to code this release does not run.
    Unreached,
    /// Its edits overlap another rule's.
    Conflict,
    /// Anything else: an action that cannot apply, an unparseable file or result.
    Error,
}

impl Status {
    /// The status as the tables and JSON write it.
    pub fn name(self) -> &'static str {
        match self {
            Status::Inactive => "inactive",
            Status::Ok => "ok",
            Status::Redundant => "redundant",
            Status::Retired => "retired",
            Status::Missing => "missing",
            Status::Unreached => "unreached",
            Status::Conflict => "conflict",
            Status::Error => "error",
        }
    }

    /// Whether an active rule failed here.
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            Status::Missing | Status::Unreached | Status::Conflict | Status::Error
        )
    }

    /// Whether it is drift (the rule no longer fits upstream), which `on_miss` may soften.
    pub fn is_drift(self) -> bool {
        matches!(self, Status::Missing | Status::Unreached)
    }
}

/// One rule × target cell.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The rule's id.
    pub rule: String,
    /// `PKG==VER`.
    pub target: String,
    /// The status.
    pub status: Status,
    /// Matches over all files.
    pub matches: u64,
    /// The files (relative to the target folder) where it matched.
    pub files: Vec<String>,
    /// Why it is not `ok`, in one line.
    pub message: String,
    /// Whether a `missing` here fails the run (the rule's `on_miss` is `error`).
    #[serde(skip)]
    pub fails: bool,
    /// Where it matched: each file (relative to the target folder) and line.
    #[serde(skip)]
    pub sites: Vec<(String, usize)>,
}

#[derive(Debug)]
struct FileOutcome {
    /// By rule index.
    reports: Vec<crate::engine::RuleReport>,
    errors: Vec<(Vec<RuleId>, String, Status)>,
    path: String,
}

fn classify(e: &PatchError) -> Status {
    match e {
        PatchError::Drift { .. } | PatchError::Pin { .. } => Status::Missing,
        PatchError::Conflict { .. } => Status::Conflict,
        _ => Status::Error,
    }
}

fn summary(e: &PatchError) -> String {
    match e {
        PatchError::Drift {
            path,
            expected,
            found,
            scope,
            ..
        } => format!("found {found}, wanted {expected} in {path}; {scope}"),
        other => other.to_string(),
    }
}

/// The cells of a matrix, and how much work was shared between its targets.
#[derive(Debug)]
pub struct Matrix {
    /// One row per rule and target, targets in the order given.
    pub rows: Vec<Row>,
    /// Files in the targets.
    pub files: usize,
    /// Files whose survey was taken from an identical file of an earlier target.
    pub reused: usize,
}

/// Surveys every rule on every target.
pub fn run(rules: &RuleSet, targets: &[MatrixTarget], with: &VersionEnv) -> Result<Matrix, Error> {
    let mut rows = Vec::new();
    let modules = crate::modules::FsModules::default();
    let reuse = reuse::Reuse::default();
    let mut file_count = 0;
    for target in targets {
        let mut versions = with.clone();
        versions.insert(&target.package, target.version.clone());
        let engine = Engine::new(rules, &versions, None);
        let files = targets::collect(std::slice::from_ref(&target.dir))?;
        file_count += files.len();
        let shared = Shared {
            engine: &engine,
            rules,
            versions: &versions,
            modules: &modules,
            reuse: &reuse,
        };
        let label = format!("surveying {}=={}", target.package, target.version);
        let task = crate::progress::begin(&label, Some(files.len() as u64));
        let outcomes: Vec<Arc<FileOutcome>> = files
            .par_iter()
            .map(|file| {
                task.step();
                survey_file(&shared, &target.dir, file)
            })
            .collect();
        drop(task);
        let mut reach = Reach::default();
        for (index, rule) in rules.rules.iter().enumerate() {
            let cell = row(target, RuleId(index), rule, &versions, &outcomes);
            rows.push(reach.settle(cell, rule, target));
        }
    }
    Ok(Matrix {
        rows,
        files: file_count,
        reused: reuse.reused(),
    })
}

/// The programs of one target that `reached_from` asks about, read once for all rules.
#[derive(Default)]
struct Reach {
    programs: std::collections::HashMap<PathBuf, crate::reach::Program>,
}

impl Reach {
    /// A cell that matched, made `unreached` where no entry point's calls reach an edit.
    fn settle(&mut self, mut row: Row, rule: &CompiledRule, target: &MatrixTarget) -> Row {
        let entries: Vec<String> = rule
            .rule
            .reached_from
            .iter()
            .map(|e| e.value.clone())
            .collect();
        if entries.is_empty()
            || row.sites.is_empty()
            || !matches!(row.status, Status::Ok | Status::Redundant)
        {
            return row;
        }
        let package = entries[0].split('.').next().unwrap_or_default();
        let root = crate::reach::Program::root_for(&target.dir, package);
        let program = self
            .programs
            .entry(root.clone())
            .or_insert_with(|| crate::reach::Program::new(root));
        let sites: Vec<(PathBuf, usize)> = row
            .sites
            .iter()
            .map(|(file, line)| (target.dir.join(file), *line))
            .collect();
        let verdict = program.reach(&entries, &sites);
        if matches!(verdict, crate::reach::Verdict::Unreached { .. }) {
            row.status = Status::Unreached;
            row.message = verdict.message(&entries);
        }
        row
    }
}

/// What every file of one target is surveyed with.
struct Shared<'a> {
    engine: &'a Engine<'a>,
    rules: &'a RuleSet,
    versions: &'a VersionEnv,
    modules: &'a dyn crate::modules::ModuleSource,
    reuse: &'a reuse::Reuse,
}

/// The cell of a rule the version gate keeps from running on a target, if it does.
fn gate_cell(rule: &CompiledRule, versions: &VersionEnv) -> Option<(Status, String)> {
    match versions.gate(&rule.rule) {
        Gate::Open => None,
        gate @ Gate::Closed { .. } => Some((Status::Inactive, crate::engine::gate_reason(&gate))),
        gate @ Gate::Retired { .. } => Some((Status::Retired, crate::engine::gate_reason(&gate))),
        Gate::Unknown { requirement } => Some((
            Status::Error,
            format!(
                "the version of {} is not known: pass --with {}=VERSION",
                requirement.package.value, requirement.package.value
            ),
        )),
    }
}

const REDUNDANT: &str = "every match already has the patched shape";

/// The cell of one rule on one target, from the target's file outcomes.
fn row(
    target: &MatrixTarget,
    index: RuleId,
    rule: &CompiledRule,
    versions: &VersionEnv,
    outcomes: &[Arc<FileOutcome>],
) -> Row {
    let id = rule.id().to_string();
    let mut row = Row {
        rule: id.clone(),
        target: target.label(),
        status: Status::Ok,
        matches: 0,
        files: Vec::new(),
        message: String::new(),
        fails: rule.rule.on_miss == crate::rules::model::Policy::Error,
        sites: Vec::new(),
    };
    if let Some((status, message)) = gate_cell(rule, versions) {
        row.status = status;
        row.message = message;
        return row;
    }
    let mut selected = 0;
    let mut edited = false;
    let mut refused = 0;
    // Files where a `when` probe left the rule inactive, with the first reason.
    let (mut probed_off, mut probe_reason) = (0, None);
    for outcome in outcomes {
        let at = outcome.reports.binary_search_by_key(&index, |r| r.index);
        if let Some(report) = at.ok().map(|at| &outcome.reports[at]) {
            selected += 1;
            if report.status == crate::engine::RuleStatus::Inactive {
                probed_off += 1;
                probe_reason = probe_reason.or_else(|| report.reason.clone());
            }
            edited |= report.status == crate::engine::RuleStatus::Applied;
            refused += report
                .matches
                .iter()
                .filter(|m| m.refused.is_some())
                .count();
            row.sites.extend(
                report
                    .matches
                    .iter()
                    .map(|m| (outcome.path.clone(), m.start.line)),
            );
            let n = report.matches.len() as u64;
            row.matches += n;
            if n > 0 {
                row.files.push(outcome.path.clone());
            }
        }
        for (concerned, message, status) in &outcome.errors {
            if concerned.contains(&index) && severity(*status) > severity(row.status) {
                row.status = *status;
                row.message.clone_from(message);
            }
        }
    }
    settle(
        row,
        rule,
        target,
        Tally {
            selected,
            probed_off,
            probe_reason,
            refused,
            edited,
        },
    )
}

/// What the files of a target said of one rule, summed.
struct Tally {
    /// Files that selected it.
    selected: usize,
    /// Of those, files where a `when` probe left it inactive, and the first reason.
    probed_off: usize,
    probe_reason: Option<String>,
    /// Matches refused under `on_refuse`.
    refused: usize,
    /// Whether it edited any file.
    edited: bool,
}

/// The cell's status from the summed tally, where the files' own errors left it `ok`.
fn settle(mut row: Row, rule: &CompiledRule, target: &MatrixTarget, tally: Tally) -> Row {
    let Tally {
        selected,
        probed_off,
        probe_reason,
        refused,
        edited,
    } = tally;
    if row.status == Status::Ok && selected > 0 && probed_off == selected {
        row.status = Status::Inactive;
        row.message = probe_reason.unwrap_or_default();
        return row;
    }
    if row.status == Status::Ok && refused > 0 {
        row.message = format!("{refused} match(es) refused under on_refuse");
    } else if row.status == Status::Ok && row.matches > 0 && !edited && !rule.rule.action.is_check()
    {
        (row.status, row.message) = (Status::Redundant, REDUNDANT.into());
    }
    // `expect: {per: run}`: the count over the whole tree.
    if let Some(expect) = rule.rule.expect.filter(|e| e.run)
        && row.status == Status::Ok
        && selected > 0
        && !expect.admits(row.matches)
    {
        row.status = Status::Missing;
        row.message = format!("found {}, wanted {expect}", row.matches);
        return row;
    }
    let wants_some = rule.rule.expect.is_some_and(|e| e.min > 0);
    if selected == 0 && wants_some && row.status == Status::Ok {
        row.status = Status::Missing;
        row.message = unselected(rule, target);
    }
    row
}

/// Why a rule that expects matches found no file on a target: its `files` select none.
fn unselected(rule: &CompiledRule, target: &MatrixTarget) -> String {
    let globs: Vec<&str> = rule.rule.files.iter().map(|f| f.value.as_str()).collect();
    format!(
        "no file of {} is selected by files: {}",
        target.dir.display(),
        if globs.is_empty() {
            "(every file)".to_string()
        } else {
            globs.join(", ")
        }
    )
}

fn severity(status: Status) -> u8 {
    match status {
        Status::Inactive | Status::Ok | Status::Redundant | Status::Retired => 0,
        Status::Missing | Status::Unreached => 1,
        Status::Conflict => 2,
        Status::Error => 3,
    }
}

fn survey_file(shared: &Shared<'_>, dir: &Path, file: &targets::TargetFile) -> Arc<FileOutcome> {
    let rules = shared.rules;
    // Shown relative to the target folder; selected, as `apply` selects, by the path as given
    // (the folder joined with the file's path below it), so `files` globs mean the same here.
    let relative = targets::glob_path(file.path.strip_prefix(dir).unwrap_or(&file.path));
    let selecting: Vec<RuleId> = (0..rules.rules.len())
        .map(RuleId)
        .filter(|&id| rules.rule(id).selects(&file.display))
        .collect();
    let mut outcome = FileOutcome {
        reports: Vec::new(),
        errors: Vec::new(),
        path: relative.clone(),
    };
    if selecting.is_empty() {
        return Arc::new(outcome);
    }
    let source = match targets::read(file) {
        Ok(s) => s,
        Err(e) => {
            outcome
                .errors
                .push((selecting, e.to_string(), Status::Error));
            return Arc::new(outcome);
        }
    };
    let key = reuse::Key::new(rules, shared.versions, &relative, &source, &selecting);
    // The target folder as this file's path spells it.
    let prefix = file.display.strip_suffix(&relative).unwrap_or_default();
    if let Some(earlier) = shared.reuse.get(&key, prefix, shared.modules) {
        return earlier;
    }
    let modules = reuse::Noting::new(shared.modules, prefix);
    let mut reusable = true;
    match shared.engine.with_modules(&modules).survey(Target {
        path: &file.display,
        source: &source,
    }) {
        Ok(survey) => {
            outcome.reports = survey.rules;
            outcome.reports.sort_by_key(|r| r.index);
            // Messages name the file as the table does, relative to the target folder.
            let message = |e: &PatchError| summary(e).replace(&file.display, &relative);
            outcome.errors = survey
                .errors
                .iter()
                .map(|(rules, e)| (rules.clone(), message(e), classify(e)))
                // A site refused under `on_refuse: warn|skip` is the rule working as written:
                // it shows in the reports, not as a failing cell.
                .chain(
                    survey
                        .misses
                        .iter()
                        .filter(|(_, e)| !matches!(e, PatchError::Action { .. }))
                        .map(|(rule, e)| (vec![*rule], message(e), classify(e))),
                )
                .collect();
        }
        Err(e) => {
            // Its message names the file by this target's path.
            reusable = false;
            outcome
                .errors
                .push((selecting, e.to_string(), Status::Error));
        }
    }
    let outcome = Arc::new(outcome);
    if reusable {
        shared.reuse.keep(key, &outcome, modules, prefix);
    }
    outcome
}
