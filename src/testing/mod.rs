//! `regraft test`: runs the test cases rules carry, against snapshot files beside them.
//!
//! A case is either inline (`tests:` in the rule) or a file `NAME.py` in the folder
//! `<rule-id>.tests/` beside the rule file, whose leading `# regraft:` comment lines give its
//! settings (`with PKG=VER`, `phase P`, `path P`, `unchanged`, `error KIND`). The expected
//! output of a case `NAME` is `<rule-id>.tests/NAME.expected.py`.

use std::fs;

mod controls;
mod effect;

use crate::compile::RuleSet;
use crate::engine::{Engine, Target};
use crate::error::Error;
use crate::rules::model::{Rule, TestExpectation};
use crate::versions::VersionEnv;

/// The result of one case.
#[derive(Debug)]
pub struct CaseResult {
    /// The rule's id.
    pub rule: String,
    /// The case's name.
    pub case: String,
    /// `None` when it passed; otherwise what went wrong.
    pub failure: Option<Failure>,
    /// Whether `--update` (or an accepted `--review`) wrote its snapshot.
    pub updated: bool,
    /// What was written, where it was: the snapshot's path, its text before (none for a new
    /// one) and after.
    pub wrote: Option<Wrote>,
}

/// A snapshot `--update` or `--review` wrote.
#[derive(Debug, Clone)]
pub struct Wrote {
    /// The snapshot file.
    pub path: std::path::PathBuf,
    /// Its text before, where there was one.
    pub before: Option<String>,
    /// What it holds now.
    pub after: String,
}

/// What to do with a snapshot that differs from a case's output (or is missing).
pub enum Update<'a> {
    /// Compare: a difference fails the case.
    No,
    /// Write every one that differs.
    All,
    /// Write those `accept` says yes to, shown the snapshot's path, its text (none for a new
    /// one) and the output; the others fail as differences do.
    Ask(&'a mut dyn FnMut(&std::path::Path, Option<&str>, &str) -> bool),
}

/// Why a case failed.
#[derive(Debug)]
pub struct Failure {
    /// In a sentence.
    pub message: String,
    /// The expected text and the text produced, where a comparison failed.
    pub texts: Option<(String, String)>,
}

pub use crate::rules::case_files::{cases, tests_dir};

/// A path the rule's first `files` glob selects, for cases that give none.
pub fn default_path(rule: &Rule) -> String {
    let Some(glob) = rule.files.iter().find(|g| !g.value.starts_with('!')) else {
        return "test.py".to_string();
    };
    let mut path = glob.value.replace("**/", "").replace("/**", "");
    for c in ['*', '?'] {
        path = path.replace(c, "x");
    }
    path
}

/// `rule`, the rules it runs `after` and the members of its `group` (transitively), from
/// `all`, in load order: a group applies whole or not at all, so its cases see all of it.
fn with_dependencies(rule: &Rule, all: &[Rule]) -> Vec<Rule> {
    let mut wanted = vec![rule.id.value.clone()];
    let mut i = 0;
    while i < wanted.len() {
        if let Some(r) = all.iter().find(|r| r.id.value == wanted[i]) {
            let group = r.group.as_ref().map(|g| &g.value);
            let members = all
                .iter()
                .filter(|o| group.is_some() && o.group.as_ref().map(|g| &g.value) == group)
                .map(|o| &o.id);
            for dep in r.after.iter().chain(members) {
                if !wanted.contains(&dep.value) {
                    wanted.push(dep.value.clone());
                }
            }
        }
        i += 1;
    }
    all.iter()
        .filter(|r| wanted.contains(&r.id.value))
        .cloned()
        .collect()
}

/// Runs every case of `rule`, together with the rules it runs `after` and its group's members
/// (from `all`), so a case sees what the rule sees in a real run; `update` writes snapshots instead of comparing them.
pub fn run_rule(
    rule: &Rule,
    all: &[Rule],
    update: &mut Update<'_>,
) -> Result<Vec<CaseResult>, Error> {
    let set = RuleSet::compile(with_dependencies(rule, all))?;
    let mut results = Vec::new();
    // Cases whose output differs from their input: those an `effect` is judged on.
    let mut effects = 0usize;
    for case in cases(rule)? {
        let mut versions = VersionEnv::default();
        for (p, v) in &case.versions {
            versions.insert_pair(&format!("{p}={v}"))?;
        }
        let path = case.path.clone().unwrap_or_else(|| default_path(rule));
        let engine = Engine::new(&set, &versions, case.phase);
        let outcome = engine.patch(Target {
            path: &path,
            source: &case.before,
        });
        let snapshot = tests_dir(rule).join(format!("{}.expected.py", case.name.value));
        // The case is a run of one file: an `expect` over the run is counted on it.
        let run_drift = outcome.as_ref().ok().and_then(|p| {
            crate::engine::totals::missed(&set, std::iter::once(p))
                .into_iter()
                .find(|(r, _)| r.rule.id.value == rule.id.value)
                .map(|(_, line)| line)
        });
        // A case the rule passes must stop passing with what it matched taken away.
        let control = match (&case.expectation, &outcome) {
            (TestExpectation::Snapshot | TestExpectation::Unchanged, Ok(p))
                if run_drift.is_none() =>
            {
                controls::survived(&set, &engine, &rule.id.value, &path, &case.before, p)
            }
            _ => None,
        };
        let patched = outcome.as_ref().ok().map(|p| p.output.clone());
        let (failure, wrote) = judge(&case, outcome, run_drift, &snapshot, update)?;
        let failure = failure.or_else(|| {
            control.map(|message| Failure {
                message,
                texts: None,
            })
        });
        // What the patch changes in what the code computes: judged on a case it changes.
        let changed = patched.filter(|after| *after != case.before);
        effects += usize::from(changed.is_some());
        let failure = match (failure, &rule.effect, changed) {
            (None, Some(effect), Some(after)) => {
                effect::failure(effect, &path, &case.before, &after).map(|message| Failure {
                    message,
                    texts: None,
                })
            }
            (failure, _, _) => failure,
        };
        results.push(CaseResult {
            rule: rule.id.value.clone(),
            case: case.name.value.clone(),
            failure,
            updated: wrote.is_some(),
            wrote,
        });
    }
    if rule.effect.is_some() && effects == 0 {
        // An effect no case judges proves nothing, and would read as if it did.
        results.push(CaseResult {
            rule: rule.id.value.clone(),
            case: "effect".into(),
            failure: Some(Failure {
                message: "no case of this rule patches anything, so its `effect` is never judged: add a case it changes".into(),
                texts: None,
            }),
            updated: false,
            wrote: None,
        });
    }
    Ok(results)
}

/// What a case's outcome means against what it expects: the failure, if any, and what
/// `update` wrote of its snapshot.
fn judge(
    case: &crate::rules::model::TestCase,
    outcome: Result<crate::engine::Patched, crate::engine::PatchError>,
    run_drift: Option<String>,
    snapshot: &std::path::Path,
    update: &mut Update<'_>,
) -> Result<(Option<Failure>, Option<Wrote>), Error> {
    let mut wrote = None;
    let failure = match (&case.expectation, outcome) {
        (TestExpectation::Error(kind), Ok(_)) if run_drift.is_some() => {
            (kind != "drift").then(|| Failure {
                message: format!(
                    "expected a `{kind}` error, got `drift`: {}",
                    run_drift.clone().unwrap_or_default()
                ),
                texts: None,
            })
        }
        (_, Ok(_)) if run_drift.is_some() => Some(Failure {
            message: format!("patching failed: {}", run_drift.clone().unwrap_or_default()),
            texts: None,
        }),
        (TestExpectation::Error(kind), Err(e)) => {
            let got = error_kind(e.kind());
            (got != kind).then(|| Failure {
                message: format!("expected a `{kind}` error, got `{got}`: {e}"),
                texts: None,
            })
        }
        (TestExpectation::Error(kind), Ok(p)) => Some(Failure {
            message: format!("expected a `{kind}` error, but patching succeeded"),
            texts: Some((case.before.clone(), p.output)),
        }),
        (_, Err(e)) => Some(Failure {
            message: format!("patching failed: {e}"),
            texts: None,
        }),
        (TestExpectation::Unchanged, Ok(p)) => (p.output != case.before).then(|| Failure {
            message: "expected the source unchanged".into(),
            texts: Some((case.before.clone(), p.output)),
        }),
        (TestExpectation::Snapshot, Ok(p)) => {
            let (failure, written) = compare_snapshot(snapshot, p.output, update)?;
            wrote = written;
            failure
        }
    };
    Ok((failure, wrote))
}

/// A case's output against its snapshot: the failure, if any, or what `update` wrote
/// instead.
fn compare_snapshot(
    snapshot: &std::path::Path,
    output: String,
    update: &mut Update<'_>,
) -> Result<(Option<Failure>, Option<Wrote>), Error> {
    let stored = fs::read_to_string(snapshot).ok();
    let differs = stored.as_deref() != Some(output.as_str());
    let write = differs
        && match update {
            Update::No => false,
            Update::All => true,
            Update::Ask(accept) => accept(snapshot, stored.as_deref(), &output),
        };
    if write {
        if let Some(dir) = snapshot.parent() {
            fs::create_dir_all(dir).map_err(|e| crate::source::FileError::io(dir, e))?;
        }
        let old = stored.as_deref().map(str::as_bytes);
        crate::write::write_one(snapshot, old, &output)?;
        let wrote = Wrote {
            path: snapshot.to_path_buf(),
            before: stored,
            after: output,
        };
        return Ok((None, Some(wrote)));
    }
    let failure = match stored {
        None => Some(Failure {
            message: format!(
                "no snapshot {}; run `regraft test --update` to write it",
                snapshot.display()
            ),
            texts: None,
        }),
        Some(s) if s != output => Some(Failure {
            message: format!("output differs from {}", snapshot.display()),
            texts: Some((s, output)),
        }),
        Some(_) => None,
    };
    Ok((failure, None))
}

/// The test-case name of an engine error kind.
fn error_kind(kind: &str) -> &'static str {
    match kind {
        // A failing pin is drift: the code is no longer as the patch assumes.
        "drift" | "pin" => "drift",
        "conflict" => "conflict",
        _ => "error",
    }
}
