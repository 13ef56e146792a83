//! Surveys shared between targets: most files of one release are byte-identical in the next,
//! and a file surveyed with the same bytes, path and rules gives the same outcome. Such a file
//! is surveyed once for the whole matrix.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::FileOutcome;
use crate::compile::{RuleId, RuleSet};
use crate::modules::{Module, ModuleSource};
use crate::versions::{Gate, VersionEnv};

/// What a file's survey depends on: its path below the target folder, its bytes (by a 128-bit
/// hash), and each rule that selects it with the state of its version gate (a closed gate's
/// cell never reads the survey, so its reason, which names the version, does not count).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct Key {
    path: String,
    len: usize,
    hash: [u64; 2],
    rules: Vec<(RuleId, u8)>,
}

impl Key {
    /// The key of the file at `path` (relative) holding `source`, which `selected` select.
    pub(super) fn new(
        rules: &RuleSet,
        versions: &VersionEnv,
        path: &str,
        source: &str,
        selected: &[RuleId],
    ) -> Self {
        // 128 bits: two different files never share a survey.
        let hash = hash(source);
        let gates = selected
            .iter()
            .map(|&id| {
                let state = match versions.gate(&rules.rule(id).rule) {
                    Gate::Open => 0,
                    Gate::Closed { .. } => 1,
                    Gate::Retired { .. } => 2,
                    Gate::Unknown { .. } => 3,
                };
                (id, state)
            })
            .collect();
        Self {
            path: path.to_string(),
            len: source.len(),
            hash,
            rules: gates,
        }
    }
}

/// One module lookup a survey made, paths written relative to the target folder (its prefix
/// replaced by `\0`), so that another target can replay it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Lookup {
    importer: String,
    import: String,
    /// The module found (its name and a hash of its text), or why none was.
    found: Result<(String, [u64; 2]), String>,
}

/// A survey kept for reuse, with the module lookups it depended on.
#[derive(Debug)]
struct Entry {
    outcome: Arc<FileOutcome>,
    lookups: Vec<Lookup>,
}

/// The outcomes surveyed so far, by key; shared by the threads of every target.
#[derive(Debug, Default)]
pub(super) struct Reuse {
    seen: Mutex<HashMap<Key, Arc<Entry>>>,
    reused: AtomicUsize,
}

impl Reuse {
    /// The outcome surveyed before under `key`, if every module lookup it made finds the same
    /// module in this target (whose folder is `prefix`, as file paths start).
    pub(super) fn get(
        &self,
        key: &Key,
        prefix: &str,
        modules: &dyn ModuleSource,
    ) -> Option<Arc<FileOutcome>> {
        let entry = self.seen.lock().ok()?.get(key).cloned()?;
        let same = entry.lookups.iter().all(|l| {
            let importer = l.importer.replacen('\0', prefix, 1);
            found(modules.module(&importer, &l.import), prefix) == l.found
        });
        if !same {
            return None;
        }
        self.reused.fetch_add(1, Ordering::Relaxed);
        Some(Arc::clone(&entry.outcome))
    }

    /// Keeps `outcome`, surveyed with `modules`, for files with `key` — unless it names the
    /// target folder (`prefix`) in a message: another target's would name its own.
    pub(super) fn keep(
        &self,
        key: Key,
        outcome: &Arc<FileOutcome>,
        modules: Noting<'_>,
        prefix: &str,
    ) {
        if names(outcome, prefix) {
            return;
        }
        let Ok(lookups) = modules.lookups.into_inner() else {
            return;
        };
        let entry = Entry {
            outcome: Arc::clone(outcome),
            lookups,
        };
        if let Ok(mut seen) = self.seen.lock() {
            seen.insert(key, Arc::new(entry));
        }
    }

    /// How many surveys were reused.
    pub(super) fn reused(&self) -> usize {
        self.reused.load(Ordering::Relaxed)
    }
}

/// Whether any message of `outcome` holds `prefix`.
fn names(outcome: &FileOutcome, prefix: &str) -> bool {
    let reports = outcome.reports.iter().flat_map(|r| {
        let refusals = r.matches.iter().filter_map(|m| m.refused.as_deref());
        r.reason.as_deref().into_iter().chain(refusals)
    });
    let errors = outcome
        .errors
        .iter()
        .map(|(_, message, _)| message.as_str());
    reports.chain(errors).any(|m| m.contains(prefix))
}

/// A lookup's result as kept: paths relative to the target folder `prefix`.
fn found(result: Result<Module, String>, prefix: &str) -> Result<(String, [u64; 2]), String> {
    match result {
        Ok(m) => Ok((m.name.replacen(prefix, "\0", 1), hash(&m.text))),
        Err(why) => Err(why.replace(prefix, "\0")),
    }
}

/// A 128-bit hash of `text`: SipHash with two seeds.
fn hash(text: &str) -> [u64; 2] {
    [0u64, 1].map(|seed| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        seed.hash(&mut h);
        text.hash(&mut h);
        h.finish()
    })
}

/// A module source that notes each lookup made through it: a survey that read another module
/// of its release is reused only where that module is the same.
#[derive(Debug)]
pub(super) struct Noting<'a> {
    inner: &'a dyn ModuleSource,
    prefix: &'a str,
    lookups: Mutex<Vec<Lookup>>,
}

impl<'a> Noting<'a> {
    /// Notes the lookups made through `inner` in the target whose folder is `prefix`.
    pub(super) fn new(inner: &'a dyn ModuleSource, prefix: &'a str) -> Self {
        Self {
            inner,
            prefix,
            lookups: Mutex::default(),
        }
    }
}

impl ModuleSource for Noting<'_> {
    fn module(&self, importer: &str, import: &str) -> Result<Module, String> {
        let result = self.inner.module(importer, import);
        let lookup = Lookup {
            importer: importer.replacen(self.prefix, "\0", 1),
            import: import.to_string(),
            found: found(result.clone(), self.prefix),
        };
        if let Ok(mut lookups) = self.lookups.lock() {
            lookups.push(lookup);
        }
        result
    }
}
