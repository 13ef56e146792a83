//! `regraft lint`: every problem of a set of rule files at once, as diagnostics.

use std::collections::HashMap;
use std::path::PathBuf;

use miette::Severity;
use version_ranges::Ranges;

mod bindings;
mod family;
mod templates;

use crate::compile::RuleSet;
use crate::error::Error;
use crate::rules::error::{RuleError, RuleErrorKind};
use crate::rules::model::Rule;
use crate::rules::{load_file_lenient, rule_files};

/// Lints the rule files under `paths`: load and compile errors, duplicate ids, empty version
/// ranges, unused loop bindings, metavariables whose bindings cannot agree and rules without
/// `expect`. I/O errors end the run.
pub fn lint(paths: &[PathBuf]) -> Result<Vec<RuleError>, Error> {
    let mut reads = Vec::new();
    for path in paths {
        for file in rule_files(path)? {
            reads.push(load_file_lenient(&file).map_err(Error::from)?);
        }
    }
    Ok(lint_reads(reads))
}

/// Lints one rule file's text as an editor holds it (saved or not): `lint`'s findings for it.
pub fn lint_text(name: &str, text: &str, syntax: crate::rules::Syntax) -> Vec<RuleError> {
    lint_reads(vec![crate::rules::read_text_lenient(name, text, syntax)])
}

/// The findings of rule files already read.
fn lint_reads(reads: Vec<crate::rules::ReadRules>) -> Vec<RuleError> {
    let mut findings = Vec::new();
    let mut loaded: Vec<Rule> = Vec::new();
    // Where each rule stands, read or not, to say which rule a finding is in.
    let mut places: Vec<(String, std::ops::Range<usize>, String)> = Vec::new();
    for read in reads {
        for rule in read.rules.iter().chain(&read.partial) {
            let (file, span) = (
                rule.origin.file.name().to_string(),
                rule.origin.span.clone(),
            );
            places.push((file, span, rule.id.value.clone()));
        }
        loaded.extend(read.rules);
        findings.extend(read.errors);
        // What compiling finds in a rule that did not read: errors of other keys.
        for mut partial in read.partial {
            partial.after.clear();
            findings.extend(
                RuleSet::compile_checked(vec![partial])
                    .err()
                    .unwrap_or_default(),
            );
        }
    }
    // Ids are per pack: the same id in two rule files is two rules (`pack/id`).
    let mut ids: HashMap<(String, &str), ()> = HashMap::new();
    for rule in &loaded {
        if ids
            .insert((rule.origin.pack(), &rule.id.value), ())
            .is_some()
        {
            findings.push(RuleError::new(
                RuleErrorKind::DuplicateId {
                    id: rule.id.value.clone(),
                },
                &rule.origin.file,
                rule.id.span.clone(),
            ));
        }
    }
    for rule in &loaded {
        findings.extend(lint_rule(rule));
    }
    findings.extend(family::families(&loaded));
    // `after` links rules to each other: unknown names and cycles show only in the whole set.
    let clean = findings
        .iter()
        .all(|f| f.kind.severity() != Severity::Error);
    if clean && let Err(e) = RuleSet::compile(loaded) {
        findings.push(e);
    }
    for f in findings.iter_mut().filter(|f| f.rule.is_none()) {
        f.rule = places
            .iter()
            .filter(|(file, span, id)| {
                *file == f.file_name && span.contains(&f.span.start) && !id.is_empty()
            })
            .map(|(_, _, id)| id.clone())
            .next();
    }
    findings
}

fn lint_rule(rule: &Rule) -> Vec<RuleError> {
    let file = &rule.origin.file;
    // Alone, a rule's `after` names nothing; the whole set checks those links.
    let mut alone = rule.clone();
    alone.after.clear();
    let compiled = match RuleSet::compile_checked(vec![alone]) {
        Ok(set) => set,
        // What needs no compiled pattern is still reported, all at once.
        Err(mut errors) => {
            errors.extend(templates::unparseable(rule));
            return errors;
        }
    };
    let compiled = &compiled.rules[0];
    let mut out = Vec::new();
    for requirement in &rule.requires {
        let range: Ranges<pep440_rs::Version> = requirement.specifiers.value.clone().into();
        if range.is_empty() {
            out.push(RuleError::new(
                RuleErrorKind::Unsatisfiable {
                    package: requirement.package.value.clone(),
                    specifiers: requirement.specifiers.value.to_string(),
                },
                file,
                requirement.specifiers.span.clone(),
            ));
        }
    }
    out.extend(unused_loop_bindings(rule, compiled));
    out.extend(bindings::disagreeing(rule, compiled));
    out.extend(templates::unparseable(rule));
    out.extend(templates::rematching(rule, compiled));
    if rule.action.is_check() && !has_failing_case(rule) {
        out.push(
            RuleError::new(
                RuleErrorKind::PinNeverFails {
                    rule: rule.id.value.clone(),
                },
                file,
                rule.id.span.clone(),
            )
            .with_help(format!(
                "add a case the pin must fail on (upstream as it must not be): `tests: [{{name: drifted, before: \"...\", error: drift}}]`, or a file `{}.tests/drifted.py` starting `# regraft: error drift`",
                rule.id.value
            )),
        );
    }
    if rule.expect.is_none() {
        out.push(
            RuleError::new(
                RuleErrorKind::NoExpect {
                    rule: rule.id.value.clone(),
                },
                file,
                rule.id.span.clone(),
            )
            .with_help("add `expect: 1` (or `{min: 0}` to accept any count explicitly)"),
        );
    }
    out
}

/// Whether one of the rule's cases (inline or in its tests folder) expects it to fail.
fn has_failing_case(rule: &Rule) -> bool {
    // A folder that cannot be read is the test runner's to report.
    crate::rules::case_files::cases(rule).map_or(true, |cases| {
        cases.iter().any(|c| {
            matches!(
                c.expectation,
                crate::rules::model::TestExpectation::Error(_)
            )
        })
    })
}

/// Loop metavariables neither the match nor a scope predicate uses.
fn unused_loop_bindings(rule: &Rule, compiled: &crate::compile::CompiledRule) -> Vec<RuleError> {
    let file = &rule.origin.file;
    let mut out = Vec::new();
    // A loop metavariable is used where the match binds it, and where a scope predicate binds
    // it too: the two must agree, which is what selects the loop.
    let scope_bound: Vec<&String> = compiled
        .class_scope
        .binds()
        .chain(compiled.function_scope.binds())
        .collect();
    for (header, snippet) in compiled.loop_patterns.iter().zip(&rule.inside.loop_header) {
        for name in &header.metavars {
            if !compiled.pattern.metavars.contains(name) && !scope_bound.contains(&name) {
                let at = snippet
                    .text
                    .find(&format!("${name}"))
                    .map_or(snippet.span.clone(), |i| {
                        snippet.file_range(i..i + name.len() + 1)
                    });
                let error = RuleError::new(
                    RuleErrorKind::UnusedLoopBinding { name: name.clone() },
                    file,
                    at,
                );
                let used: Vec<&str> = compiled
                    .pattern
                    .metavars
                    .iter()
                    .map(String::as_str)
                    .collect();
                out.push(match crate::rules::error::did_you_mean(name, &used) {
                    Some(s) => error.with_help(format!(
                        "did you mean `${s}` in `match`, or `${name}` there?"
                    )),
                    None => error.with_help(
                        "use it in `match` (e.g. `$OUT = $NAME($$$ARGS)`) or bind it with `$_`",
                    ),
                });
            }
        }
    }
    out
}
