//! Code lenses: above each rule of the open document, how many matches it has in the targets
//! the project's configuration names (`regraft.toml` / `[tool.regraft]`), and the command
//! `regraft.showDiff` that returns the `apply --diff` of that rule alone.

use std::path::{Path, PathBuf};

use lsp_types::{CodeLens, Command, Range, Uri};

use super::jobs::{Budget, Surveyed};
use super::text::position;
use crate::compile::RuleSet;
use crate::config::Config;
use crate::engine::{Engine, Target};
use crate::rules::model::Rule;
use crate::versions::VersionEnv;

/// The command a lens runs: `regraft.showDiff` with the document's URI and the rule's id.
pub(super) const SHOW_DIFF: &str = "regraft.showDiff";

/// The rules of the document that read, the configuration found from its folder, and that
/// configuration's targets and versions.
struct Project {
    rules: Vec<Rule>,
    targets: Vec<crate::targets::TargetFile>,
    versions: VersionEnv,
}

fn project(uri: &Uri, text: &str, syntax: crate::rules::Syntax) -> Option<Project> {
    let path = PathBuf::from(uri.path().as_str());
    let rules = crate::rules::read_text_lenient(uri.path().as_str(), text, syntax).rules;
    let config = Config::discover(path.parent().unwrap_or(Path::new("/"))).ok()?;
    let targets = crate::targets::collect(&config.targets).ok()?;
    let mut versions = VersionEnv::from_pairs(&config.with).ok()?;
    if let Some(site) = &config.site_packages {
        versions.read_site_packages(site).ok()?;
    }
    Some(Project {
        rules,
        targets,
        versions,
    })
}

/// One lens per rule that reads: its matches (and the files it would change) in the
/// configured targets, or that no target is configured; how far the survey got when the
/// budget ran out first.
pub(super) fn lenses(
    uri: &Uri,
    text: &str,
    syntax: crate::rules::Syntax,
    budget: &Budget,
) -> Vec<CodeLens> {
    let Some(project) = project(uri, text, syntax) else {
        return Vec::new();
    };
    let (counts, surveyed) = project.counts(budget);
    let partial = surveyed
        .shortfall(budget)
        .map_or(String::new(), |s| format!(" ({s})"));
    project
        .rules
        .iter()
        .zip(counts)
        .map(|(rule, (matches, changed, failure))| {
            let at = position(text, rule.id.span.start);
            let title = match failure {
                _ if project.targets.is_empty() => {
                    "no targets in the configuration (regraft.toml `targets`)".to_string()
                }
                Some(failure) => {
                    format!("{matches} match(es) in the configured targets{partial}; {failure}")
                }
                None => format!(
                    "{matches} match(es) in the configured targets{partial}; would change {changed} file(s)"
                ),
            };
            CodeLens {
                range: Range::new(at, at),
                command: Some(Command {
                    title,
                    command: SHOW_DIFF.into(),
                    arguments: Some(vec![uri.as_str().into(), rule.id.value.clone().into()]),
                }),
                data: None,
            }
        })
        .collect()
}

impl Project {
    /// Per rule, in order: matches over the targets, files it would change, and the first
    /// failure it meets (drift, a refusal) as apply would report it.
    fn counts(&self, budget: &Budget) -> (Vec<(usize, usize, Option<String>)>, Surveyed) {
        let mut out = vec![(0, 0, None); self.rules.len()];
        let mut surveyed = Surveyed {
            done: 0,
            of: self.targets.len(),
        };
        let Ok(set) = RuleSet::compile(self.rules.clone()) else {
            return (out, surveyed);
        };
        let engine = Engine::new(&set, &self.versions, None);
        for file in &self.targets {
            if budget.spent() {
                break;
            }
            surveyed.done += 1;
            let Ok(source) = crate::targets::read(file) else {
                continue;
            };
            // Surveyed, not patched: a drift must not hide the matches it counts.
            let Ok(patched) = engine.survey(Target {
                path: &file.display,
                source: &source,
            }) else {
                continue;
            };
            for report in &patched.rules {
                let Some(i) = self.rules.iter().position(|r| r.id.value == report.rule) else {
                    continue;
                };
                out[i].0 += report.matches.len();
                out[i].1 += usize::from(report.matches.iter().any(|m| !m.edits.is_empty()));
            }
            for (ids, error) in &patched.errors {
                for id in ids {
                    let name = set.rule(*id).id();
                    if let Some(i) = self.rules.iter().position(|r| r.id.value == name) {
                        out[i].2.get_or_insert_with(|| error.to_string());
                    }
                }
            }
        }
        (out, surveyed)
    }
}

/// The unified diff `apply --diff` would print for rule `id` of the document alone, over the
/// configured targets; `None` when the rule or the configuration cannot be read.
pub(super) fn diff(
    uri: &Uri,
    text: &str,
    syntax: crate::rules::Syntax,
    id: &str,
    budget: &Budget,
) -> Option<String> {
    let project = project(uri, text, syntax)?;
    let rule = project.rules.iter().find(|r| r.id.value == id)?.clone();
    let mut alone = rule;
    alone.after.clear();
    let set = RuleSet::compile(vec![alone]).ok()?;
    let engine = Engine::new(&set, &project.versions, None);
    let mut out = String::new();
    let mut surveyed = Surveyed {
        done: 0,
        of: project.targets.len(),
    };
    for file in &project.targets {
        if budget.spent() {
            break;
        }
        surveyed.done += 1;
        let Ok(source) = crate::targets::read(file) else {
            continue;
        };
        match engine.patch(Target {
            path: &file.display,
            source: &source,
        }) {
            Ok(patched) if patched.output != source => {
                let diff = similar::TextDiff::from_lines(source.as_str(), patched.output.as_str());
                out.push_str(
                    &diff
                        .unified_diff()
                        .header(
                            &format!("a/{}", file.display),
                            &format!("b/{}", file.display),
                        )
                        .to_string(),
                );
            }
            Ok(_) => {}
            Err(e) => out.push_str(&format!("{}: {e}\n", file.display)),
        }
    }
    if let Some(short) = surveyed.shortfall(budget) {
        out.push_str(&format!("# regraft: {short}; the diff above is partial\n"));
    }
    Some(out)
}

/// What metavariable `name` of the rule around byte `offset` binds at its sites in the
/// configured targets: up to three distinct texts, how many sites there are, and how far the
/// survey got.
pub(super) fn bound_in_targets(
    uri: &Uri,
    text: &str,
    syntax: crate::rules::Syntax,
    (offset, name): (usize, &str),
    budget: &Budget,
) -> Option<(Vec<String>, usize, Surveyed)> {
    let project = project(uri, text, syntax)?;
    // The rule the cursor is in: the last one starting at or before it.
    let mut rule = project
        .rules
        .iter()
        .filter(|r| r.origin.span.start <= offset)
        .max_by_key(|r| r.origin.span.start)
        .or(project.rules.first())?
        .clone();
    rule.after.clear();
    let set = RuleSet::compile(vec![rule]).ok()?;
    let engine = Engine::new(&set, &project.versions, None);
    let (mut seen, mut sites) = (Vec::new(), 0);
    let mut surveyed = Surveyed {
        done: 0,
        of: project.targets.len(),
    };
    for file in &project.targets {
        if budget.spent() {
            break;
        }
        surveyed.done += 1;
        let Ok(source) = crate::targets::read(file) else {
            continue;
        };
        // Surveyed, not patched: a drift (more sites than `expect`) must not hide them.
        let Ok(patched) = engine.survey(Target {
            path: &file.display,
            source: &source,
        }) else {
            continue;
        };
        for m in patched.rules.iter().flat_map(|r| &r.matches) {
            if let Some((_, value)) = m.bindings.iter().find(|(n, _)| n == name) {
                sites += 1;
                if seen.len() < 3 && !seen.contains(value) {
                    seen.push(value.clone());
                }
            }
        }
    }
    Some((seen, sites, surveyed))
}

/// Writes `diff` to a file of its own (in a folder of this user's under the temporary
/// directory) and asks the client to show it (`window/showDocument`); what fails here only
/// leaves the command's result to the client.
pub(super) fn show(
    sender: &crossbeam_channel::Sender<lsp_server::Message>,
    rule: &str,
    diff: &str,
) {
    // A folder only this process made (mode 700), kept while the server runs: a name another
    // user could have made first would let them read or replace what the client opens.
    static FOLDER: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    let made = FOLDER.get_or_init(|| {
        tempfile::Builder::new()
            .prefix("regraft-diff-")
            .tempdir()
            .ok()
            .map(tempfile::TempDir::keep)
            .filter(|dir| private(dir))
    });
    let Some(folder) = made else {
        return;
    };
    let safe: String = rule
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = folder.join(format!("{safe}.diff"));
    if std::fs::write(&path, diff).is_err() {
        return;
    }
    let Ok(uri) = format!("file://{}", path.display()).parse::<Uri>() else {
        return;
    };
    let params = lsp_types::ShowDocumentParams {
        uri,
        external: Some(false),
        take_focus: Some(true),
        selection: None,
    };
    let request = lsp_server::Request::new(
        format!("regraft-show-{safe}").into(),
        "window/showDocument".into(),
        params,
    );
    let _ = sender.send(lsp_server::Message::Request(request));
}

/// Makes `dir` readable by its owner alone; whether it is.
fn private(dir: &std::path::Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).is_ok()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        true
    }
}
