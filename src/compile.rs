//! Compiles loaded rules: patterns into pattern trees and one shared tree-sitter query,
//! globs into matchers, templates checked against what the pattern binds.

use std::collections::HashMap;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use tree_sitter::Query;

use crate::pattern::meta::template_metavars;
use crate::pattern::query::to_query;
use crate::pattern::{LoopPattern, Pattern, PatternError};
use crate::python;
use crate::rules::error::{RuleError, RuleErrorKind};
use crate::rules::model::{Action, Rule, Snippet};

/// A rule ready to run.
#[derive(Debug)]
pub struct CompiledRule {
    /// The rule as loaded.
    pub rule: Rule,
    /// Its `match` pattern.
    pub pattern: Pattern,
    /// Its `inside.loop` header, if any.
    pub loop_pattern: Option<LoopPattern>,
    /// Its `files` globs; `None` selects every file.
    pub files: Option<GlobSet>,
    /// The tree-sitter query that finds candidates for `pattern`.
    pub query_source: String,
}

impl CompiledRule {
    /// The rule's id.
    pub fn id(&self) -> &str {
        &self.rule.id.value
    }

    /// Whether the rule's `files` select `path` (`/`-separated).
    pub fn selects(&self, path: &str) -> bool {
        self.files.as_ref().is_none_or(|g| g.is_match(path))
    }
}

/// Compiled rules and the one query that finds candidates for all of them; built once and
/// shared by every file and thread.
#[derive(Debug)]
pub struct RuleSet {
    /// The rules, in load order; a query pattern's index is its rule's index here.
    pub rules: Vec<CompiledRule>,
    /// Every rule's candidate query, one pattern per rule.
    pub query: Query,
}

impl RuleSet {
    /// Compiles `rules`; the first error is returned.
    pub fn compile(rules: Vec<Rule>) -> Result<RuleSet, RuleError> {
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut compiled = Vec::with_capacity(rules.len());
        for rule in rules {
            if seen.insert(rule.id.value.clone(), compiled.len()).is_some() {
                return Err(RuleError::new(
                    RuleErrorKind::DuplicateId {
                        id: rule.id.value.clone(),
                    },
                    &rule.origin.file,
                    rule.id.span.clone(),
                ));
            }
            compiled.push(compile_rule(rule)?);
        }
        let source: String = compiled
            .iter()
            .map(|r| r.query_source.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let query = Query::new(&python::language(), &source).map_err(|e| {
            // Each rule's query compiled alone below, so this names the rule it came from.
            let rule = compiled
                .iter()
                .find(|r| Query::new(&python::language(), &r.query_source).is_err())
                .unwrap_or(&compiled[0]);
            pattern_error(
                &rule.rule,
                &rule.rule.pattern,
                "`match`",
                PatternError {
                    range: 0..rule.rule.pattern.text.len(),
                    reason: format!("cannot be compiled into a query: {}", e.message),
                    metavar: false,
                },
            )
        })?;
        Ok(RuleSet {
            rules: compiled,
            query,
        })
    }
}

fn pattern_error(rule: &Rule, snippet: &Snippet, what: &str, e: PatternError) -> RuleError {
    let kind = if e.metavar {
        RuleErrorKind::Metavariable { reason: e.reason }
    } else {
        RuleErrorKind::PatternSyntax {
            what: what.to_string(),
            reason: e.reason,
        }
    };
    RuleError::new(kind, &rule.origin.file, snippet.file_range(e.range))
}

fn compile_rule(rule: Rule) -> Result<CompiledRule, RuleError> {
    let pattern = Pattern::compile(&rule.pattern.text)
        .map_err(|e| pattern_error(&rule, &rule.pattern, "`match`", e))?;
    let loop_pattern = rule
        .inside
        .loop_header
        .as_ref()
        .map(|s| {
            LoopPattern::compile(&s.text).map_err(|e| pattern_error(&rule, s, "`inside.loop`", e))
        })
        .transpose()?;
    if rule.action.needs_call() && !pattern.has_call() {
        return Err(RuleError::new(
            RuleErrorKind::ActionNeedsCall {
                action: rule.action.name().to_string(),
            },
            &rule.origin.file,
            rule.pattern.span.clone(),
        )
        .with_help("match a call, e.g. `$OUT = $F($$$ARGS)` or `$F($$$ARGS)`"));
    }
    let bound: Vec<&str> = pattern
        .metavars
        .iter()
        .chain(loop_pattern.iter().flat_map(|l| l.metavars.iter()))
        .map(String::as_str)
        .collect();
    for template in templates(&rule.action) {
        check_template(&rule, template, &bound)?;
    }
    let files = if rule.files.is_empty() {
        None
    } else {
        let mut builder = GlobSetBuilder::new();
        for glob in &rule.files {
            let glob = GlobBuilder::new(&glob.value)
                .literal_separator(true)
                .build()
                .map_err(|e| {
                    RuleError::new(
                        RuleErrorKind::InvalidValue {
                            key: "files".into(),
                            reason: e.kind().to_string(),
                        },
                        &rule.origin.file,
                        glob.span.clone(),
                    )
                })?;
            builder.add(glob);
        }
        Some(builder.build().map_err(|e| {
            RuleError::new(
                RuleErrorKind::InvalidValue {
                    key: "files".into(),
                    reason: e.to_string(),
                },
                &rule.origin.file,
                rule.files[0].span.clone(),
            )
        })?)
    };
    let query_source = to_query(&pattern.root);
    Query::new(&python::language(), &query_source).map_err(|e| {
        pattern_error(
            &rule,
            &rule.pattern,
            "`match`",
            PatternError {
                range: 0..rule.pattern.text.len(),
                reason: format!("cannot be compiled into a query: {}", e.message),
                metavar: false,
            },
        )
    })?;
    Ok(CompiledRule {
        rule,
        pattern,
        loop_pattern,
        files,
        query_source,
    })
}

/// The templates an action writes, whose metavariables must be bound.
fn templates(action: &Action) -> Vec<&Snippet> {
    match action {
        Action::Replace(t) => vec![t],
        Action::SetKwargs(pairs) => pairs.iter().map(|(_, v)| v).collect(),
        Action::KwargsToPositional { .. } | Action::RemoveKwargs(_) => Vec::new(),
    }
}

fn check_template(rule: &Rule, template: &Snippet, bound: &[&str]) -> Result<(), RuleError> {
    let used = template_metavars(&template.text).map_err(|e| {
        RuleError::new(
            RuleErrorKind::Metavariable { reason: e.reason },
            &rule.origin.file,
            template.file_range(e.range),
        )
    })?;
    for (name, range) in used {
        if !bound.contains(&name.as_str()) {
            let error = RuleError::new(
                RuleErrorKind::UnboundMetavariable { name },
                &rule.origin.file,
                template.file_range(range),
            );
            return Err(if bound.is_empty() {
                error
            } else {
                error.with_help(format!(
                    "bound here: {}",
                    bound
                        .iter()
                        .map(|b| format!("${b}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            });
        }
    }
    Ok(())
}
