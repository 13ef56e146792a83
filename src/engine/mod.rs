//! The `Engine` type, its builder, and the per-file pipeline (`Engine::survey_excluding`):
//! schedule → prefilter → parse choice → run (find → step → verify) → fixed point → outcome,
//! each stage in its own module. No exit codes and no printing: the front ends decide those.

mod applied;
mod attributes;
mod candidates;
mod diagnose;
pub mod error;
pub mod explain;
mod find;
mod found;
mod group;
mod imports;
mod outcome;
mod parsed;
mod probe;
mod repair;
mod run;
mod schedule;
pub mod scope;
mod site;
mod step;
pub mod totals;
mod verify;

pub use diagnose::describe_scope;
pub use error::PatchError;
pub use outcome::{EditReport, MatchReport, Patched, RuleReport, RuleStatus, Survey};
pub use probe::gate_reason;

use crate::compile::{CompiledRule, RuleId, RuleSet};
use crate::prefilter::Hits;
use crate::rules::error::{RuleError, RuleErrorKind};
use crate::rules::model::Policy;
use crate::source::{SourceFile, span};
use crate::versions::{Gate, VersionEnv};
use candidates::ParseChoice;
use parsed::{Parsed, parse_target};
use schedule::Schedule;

/// Whether a rule can match in `unit`, a top-level class or function, or a method (`Cls.method`):
/// a rule scoped to a class (function) named exactly must name that one (a class by regex or
/// predicate may be it; a function scope alone may be one of a class's methods).
fn in_unit(rule: &CompiledRule, unit: &str) -> bool {
    use crate::rules::model::{NameFilter, ScopeFilter};
    // `Cls.method` is a method's own source: its class and its name; `Name` a top-level unit.
    let (class, function) = match unit.rsplit_once('.') {
        Some((path, function)) => (path.rsplit('.').next().unwrap_or(path), Some(function)),
        None => (unit, None),
    };
    let exact = |filter: &Option<ScopeFilter>| match filter.as_ref().and_then(|f| f.name.as_ref()) {
        Some(NameFilter::Exact(name)) => Some(name.value.clone()),
        _ => None,
    };
    exact(&rule.rule.inside.class).is_none_or(|c| c == class)
        && function.is_none_or(|f| exact(&rule.rule.inside.function).is_none_or(|g| g == f))
}

/// A file to patch: the path rules' `files` globs see, and its text.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The path, `/`-separated, as shown in reports and matched by globs.
    pub path: &'a str,
    /// The file's text.
    pub source: &'a str,
}

/// Applies a rule set under given versions, one file at a time; shareable across threads.
#[derive(Debug, Clone, Copy)]
pub struct Engine<'r> {
    rules: &'r RuleSet,
    versions: &'r VersionEnv,
    phase: Option<crate::rules::model::Phase>,
    prefilter: bool,
    /// Every rule selects every file, whatever its `files` globs say.
    all_files: bool,
    /// Source searched for `kwargs_to_positional` signatures the target lacks.
    signature_context: Option<&'r str>,
    /// Finds the modules a target imports, for signatures it does not define.
    modules: Option<&'r dyn crate::modules::ModuleSource>,
    /// The one top-level class or function the target holds (a live object patched at run
    /// time): rules scoped to another class or function do not run, and rules scoped to none
    /// do not count their `expect` (their sites may lie elsewhere in the module).
    unit: Option<&'r str>,
    /// Rules left out everywhere: members of a group that failed in another file.
    excluded: &'r [RuleId],
    /// The path `files` globs see instead of the target's own (a module imported at run time
    /// is seen by its path below its import root, as `apply` in site-packages sees it).
    selected_as: Option<&'r str>,
    /// The caller compiles the output with CPython itself (the import hook): the whole-output
    /// check is left to that compiler, which is the judge it stands in for.
    compiled_by_caller: bool,
}

impl<'r> Engine<'r> {
    /// The rules it runs.
    pub fn rules(&self) -> &'r RuleSet {
        self.rules
    }

    /// An engine for `rules` with package `versions`; `phase` limits it to one phase.
    pub fn new(
        rules: &'r RuleSet,
        versions: &'r VersionEnv,
        phase: Option<crate::rules::model::Phase>,
    ) -> Self {
        Self {
            rules,
            versions,
            phase,
            prefilter: true,
            all_files: false,
            signature_context: None,
            modules: None,
            unit: None,
            excluded: &[],
            selected_as: None,
            compiled_by_caller: false,
        }
    }

    /// Leaves the check that CPython compiles the whole output to the caller, which compiles
    /// it next (the import hook) and asks again without this where the compiler refuses it:
    /// each step's own checks still run, and the parse of the output is not paid twice.
    pub fn compiled_by_caller(mut self) -> Self {
        self.compiled_by_caller = true;
        self
    }

    /// Lets every rule select every file: for source that has no file name (a class's source
    /// patched at run time), where `files` globs have nothing to match.
    pub fn selecting_all_files(mut self) -> Self {
        self.all_files = true;
        self
    }

    /// Matches the rules' `files` globs against `path` rather than the target's own path: the
    /// target is read from elsewhere (an installed module, by its absolute path).
    pub fn selecting_as(mut self, path: &'r str) -> Self {
        self.selected_as = Some(path);
        self
    }

    /// Looks up `kwargs_to_positional` signatures in `context` when the target does not define
    /// them: a class patched at run time calls layers defined elsewhere in its module.
    pub fn with_signature_context(mut self, context: &'r str) -> Self {
        self.signature_context = Some(context);
        self
    }

    /// Follows a target's imports (and its classes' bases) through `modules` to find the
    /// `kwargs_to_positional` signatures it does not define.
    pub fn with_modules(mut self, modules: &'r dyn crate::modules::ModuleSource) -> Self {
        self.modules = Some(modules);
        self
    }

    /// Leaves `rules` out of every file: a group that failed in one file of a tree is left out
    /// of all of them (a rename in one file and not in its importer would break the import).
    pub fn excluding(mut self, rules: &'r [RuleId]) -> Self {
        self.excluded = rules;
        self
    }

    /// The group rule `id` belongs to, if any.
    pub fn rule_group(&self, id: RuleId) -> Option<&'r str> {
        self.rules
            .rule(id)
            .rule
            .group
            .as_ref()
            .map(|g| g.value.as_str())
    }

    /// Every rule of the named groups.
    pub fn group_members<'g>(&self, groups: impl Iterator<Item = &'g str> + Clone) -> Vec<RuleId> {
        (0..self.rules.rules.len())
            .map(RuleId)
            .filter(|&id| {
                self.rule_group(id)
                    .is_some_and(|g| groups.clone().any(|x| x == g))
            })
            .collect()
    }

    /// Runs on the source of one top-level class or function, `name` (see `unit`).
    pub fn for_unit(mut self, name: &'r str) -> Self {
        self.unit = Some(name);
        self
    }

    /// Turns the literal prefilter and statement regions off (every selected file is parsed
    /// whole); for tests that check they never change an outcome.
    pub fn without_prefilter(mut self) -> Self {
        self.prefilter = false;
        self
    }

    /// Refuses rules that would run but whose required package has no known version: such a
    /// rule can be neither applied nor skipped with confidence.
    pub fn check_versions_known(&self) -> Result<(), RuleError> {
        self.versions_known(None)
    }

    /// As [`Self::check_versions_known`], for the rules that look at the file at `path` only:
    /// a rule whose `files` leave the file out is not asked what version it wants.
    pub fn check_versions_known_at(&self, path: &str) -> Result<(), RuleError> {
        self.versions_known(Some(self.selecting(path)))
    }

    fn versions_known(&self, selected: Option<Vec<bool>>) -> Result<(), RuleError> {
        let looks = |rule: &CompiledRule| {
            let at = self.rules.rules.iter().position(|r| std::ptr::eq(r, rule));
            match (&selected, at) {
                (Some(s), Some(i)) => s[i],
                _ => true,
            }
        };
        for (rule, gate) in self.gates().filter(|(r, _)| looks(r)) {
            if let Gate::Unknown { requirement } = gate {
                let package = requirement.package.value.clone();
                return Err(RuleError::new(
                    RuleErrorKind::UnknownVersion {
                        rule: rule.id().to_string(),
                        package: package.clone(),
                    },
                    &rule.rule.origin.file,
                    requirement.package.span.clone(),
                )
                .with_help(format!(
                    "pass --with {package}=VERSION or --site-packages DIR (versions= in Python)"
                )));
            }
        }
        Ok(())
    }

    /// The rules this engine runs, with their version gates.
    pub fn gates(&self) -> impl Iterator<Item = (&'r CompiledRule, Gate<'r>)> + '_ {
        self.rules
            .rules
            .iter()
            .filter(move |r| self.phase.is_none_or(|p| r.rule.phase == p))
            .map(|r| (r, self.versions.gate(&r.rule)))
    }

    /// Whether some rule would run on a file at `path`: one selects it and its version gate is
    /// open (or names a package of unknown version, which running reports). Where none would,
    /// patching changes nothing and reports only inactive rules, so a caller need not even
    /// read the source.
    pub fn any_would_run(&self, path: &str) -> bool {
        Schedule::new(self, path, &[])
            .order
            .iter()
            .any(|(_, gate)| !matches!(gate, Gate::Closed { .. } | Gate::Retired { .. }))
    }

    /// For each rule, whether it looks at the file at `path`.
    fn selecting(&self, path: &str) -> Vec<bool> {
        let by_files = if self.all_files {
            vec![true; self.rules.rules.len()]
        } else {
            self.rules.selecting(self.selected_as.unwrap_or(path))
        };
        by_files
            .into_iter()
            .zip(&self.rules.rules)
            .map(|(files, rule)| files && self.unit.is_none_or(|u| in_unit(rule, u)))
            .collect()
    }

    /// Whether `rule`'s `expect` is checked: not, on a unit, for a rule scoped to no class or
    /// function.
    fn counts_expect(&self, rule: &CompiledRule) -> bool {
        let inside = &rule.rule.inside;
        self.unit.is_none() || inside.class.is_some() || inside.function.is_some()
    }

    /// Patches one file: every phase in order, each on the output of the one before. The first
    /// failure of any rule fails the file.
    pub fn patch(&self, target: Target<'_>) -> Result<Patched, PatchError> {
        let mut survey = self.survey(target)?;
        if !survey.errors.is_empty() {
            return Err(survey.errors.swap_remove(0).1);
        }
        let warnings = survey
            .misses
            .into_iter()
            .filter(|(rule, e)| {
                let rule = &self.rules.rule(*rule).rule;
                let policy = match e {
                    PatchError::Action { .. } => rule.on_refuse,
                    _ => rule.on_miss,
                };
                policy == Policy::Warn
            })
            .map(|(_, e)| e)
            .collect();
        let written = survey
            .written
            .into_iter()
            .map(|(rule, range)| (self.rules.rule(rule).id().to_string(), range))
            .collect();
        Ok(Patched {
            output: survey.output,
            rules: survey.rules,
            warnings,
            written,
        })
    }

    /// Runs every rule on one file and records each rule's failure instead of stopping at the
    /// first: a failing rule's edits are left out and the others still apply. Only a target
    /// that does not parse is an error here.
    pub fn survey(&self, target: Target<'_>) -> Result<Survey, PatchError> {
        // CPython reads a lone `\r` as a line end; the parser does not. Each is one byte, so
        // the file is surveyed with `\n` in their place (every offset and line the same) and
        // the result written back with `\r`.
        if let Some(lf) = lone_cr_as_lf(target)? {
            let lf_target = Target {
                path: target.path,
                source: &lf,
            };
            let first = self.survey_excluding(lf_target, self.excluded)?;
            let mut survey = self.settle_groups(lf_target, first)?;
            survey.output = survey.output.replace('\n', "\r");
            for edit in survey
                .rules
                .iter_mut()
                .flat_map(|r| &mut r.matches)
                .flat_map(|m| &mut m.edits)
            {
                edit.replacement = edit.replacement.replace('\n', "\r");
            }
            return Ok(survey);
        }
        let first = self.survey_excluding(target, self.excluded)?;
        self.settle_groups(target, first)
    }

    /// The per-file pipeline, with the rules in `excluded` left out (members of a failed
    /// group). Its stages, in order:
    /// 1. schedule (`schedule`): which rules select the file, in which phase and step;
    /// 2. prefilter (`crate::prefilter`): one literal scan of the text;
    /// 3. parse (`candidates`, `parsed`): nothing, the candidate statements, or the whole file;
    /// 4. run (`run`): per phase and step, find (`find`, `scope`) → step: plan, apply
    ///    (`step`) → verify: reparse and CPython check (`verify`);
    /// 5. fixed point (`verify`): the rules run again on the output change nothing;
    /// 6. outcome (`outcome`): the survey, turned into a report by `patch`.
    ///
    /// A survey of candidate statements that found a failure or a miss is made again on the
    /// whole file, whose parse gives the diagnostics the file's full context.
    fn survey_excluding(
        &self,
        target: Target<'_>,
        excluded: &[RuleId],
    ) -> Result<Survey, PatchError> {
        let schedule = Schedule::new(self, target.path, excluded);
        if schedule.is_empty() {
            // No rule looks at this file: it is not even read further.
            return Ok(Survey::untouched(target.source, Vec::new()));
        }
        let hits = self
            .prefilter
            .then(|| self.rules.prefilter.scan(target.source));
        let regions = match candidates::choose(self, &schedule, target, hits.as_ref()) {
            ParseChoice::Untouched(reports) => {
                return Ok(Survey::untouched(target.source, reports));
            }
            ParseChoice::Regions(regions) => Parsed::regions(target.source, regions),
            ParseChoice::Whole => None,
        };
        if let Some(parsed) = regions {
            let survey = self.run_to_fixed_point(&schedule, target, parsed, hits.as_ref());
            if survey.errors.is_empty() && survey.misses.is_empty() {
                return self.compiled_output(target, survey);
            }
        }
        let parsed = Parsed::whole(parse_target(target)?);
        let survey = self.run_to_fixed_point(&schedule, target, parsed, hits.as_ref());
        self.compiled_output(target, survey)
    }

    /// The survey, where CPython compiles its output (see [`compiled_output`]) or the caller
    /// compiles it itself (see [`Engine::compiled_by_caller`]).
    fn compiled_output(&self, target: Target<'_>, survey: Survey) -> Result<Survey, PatchError> {
        if self.compiled_by_caller {
            return Ok(survey);
        }
        compiled_output(target, survey)
    }

    /// Runs the rules on a parsed file, then checks that running them on their own output
    /// changes nothing.
    fn run_to_fixed_point(
        &self,
        schedule: &Schedule<'_>,
        target: Target<'_>,
        parsed: Parsed,
        hits: Option<&Hits>,
    ) -> Survey {
        let text = target.source.to_string();
        let (mut survey, output_tree) = self.run(schedule, target.path, text, hits, parsed, true);
        if survey.output != target.source && survey.errors.is_empty() {
            let output = survey.output.clone();
            let (again, _) = self.run(schedule, target.path, output, None, output_tree, false);
            verify::check_fixed_point(target.path, &mut survey, &again);
        }
        survey
    }
}

/// The survey of a file it would change, if CPython compiles the output. The steps check
/// only the statements they touch; an error elsewhere (nesting past CPython's limits, a
/// duplicate argument) is the input's own, and a file CPython would reject is not written.
fn compiled_output(target: Target<'_>, survey: Survey) -> Result<Survey, PatchError> {
    if survey.output == target.source || !survey.errors.is_empty() {
        return Ok(survey);
    }
    let Some(error) = parsed::compile_error(&survey.output) else {
        return Ok(survey);
    };
    if let Some(own) = parsed::compile_error(target.source) {
        return Err(parsed::rejected_target(target, own));
    }
    let rules: Vec<String> = survey
        .rules
        .iter()
        .filter(|r| r.matches.iter().any(|m| !m.edits.is_empty()))
        .map(|r| format!("`{}`", r.rule))
        .collect();
    Err(PatchError::UnparseableResult {
        path: target.path.to_string(),
        reason: format!("CPython rejects it: {}", error.message),
        rules: rules.join(", "),
        at: span(parsed::error_range(&error, &survey.output)),
        src: SourceFile::new(target.path, &survey.output).named_source(),
    })
}

/// A file whose lines end in a lone `\r` (old Mac style), with `\n` in their place; `None`
/// for a file with no lone `\r`. One that mixes lone `\r` with `\n` line ends is refused:
/// what an edit's new lines should end with would be a guess.
pub(crate) fn lone_cr_as_lf(target: Target<'_>) -> Result<Option<String>, PatchError> {
    let text = target.source;
    let bytes = text.as_bytes();
    let Some(first) = memchr::memchr_iter(b'\r', bytes).find(|&i| bytes.get(i + 1) != Some(&b'\n'))
    else {
        return Ok(None);
    };
    if let Some(lf) = memchr::memchr(b'\n', bytes) {
        return Err(PatchError::MixedLineEnds {
            path: target.path.to_string(),
            lf_line: text[..lf].matches('\r').count() + 1,
            src: crate::source::SourceFile::new(target.path, text).named_source(),
            at: (first, 1).into(),
        });
    }
    Ok(Some(text.replace('\r', "\n")))
}
