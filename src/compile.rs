//! Compiles loaded rules: patterns into pattern trees and one shared tree-sitter query,
//! globs into matchers, templates checked against what the pattern binds.

use std::collections::HashMap;
use std::path::PathBuf;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use tree_sitter::Query;

use crate::actions::{self, Needs};
use crate::pattern::meta::template_metavars;
use crate::pattern::query::to_query;
use crate::pattern::{LoopPattern, PatNode, Pattern, PatternError};
use crate::prefilter::Prefilter;
use crate::python;
use crate::rules::LoadError;
use crate::rules::error::{RuleError, RuleErrorKind};
use crate::rules::model::{Rule, Snippet};

/// A rule's place in its rule set: how the engine and the front ends name a rule, rather than
/// by position or id string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RuleId(pub usize);

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
    /// `unless`: found within a match, the match is left alone.
    pub unless: Option<Pattern>,
    /// `not_inside`: found around a match, the match is left alone.
    pub not_inside: Option<Pattern>,
    /// `when.has` and `when.lacks`, compiled.
    pub when_has: Option<Pattern>,
    /// See `when_has`.
    pub when_lacks: Option<Pattern>,
    /// Indexes of the rules named by `after`.
    pub after: Vec<usize>,
    /// The planning step within the phase: 0, or one more than the rules it runs after.
    pub step: usize,
    /// For a statement-local rule (every match lies in one statement, and matching, planning
    /// and checking it look at nothing outside it), how the statements that could hold a match
    /// are found without parsing; `None` for other rules. Files where only such rules run are
    /// parsed statement by statement (see `regions`).
    pub locator: Option<Locator>,
}

/// How a statement-local rule's candidate statements are found from a file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locator {
    /// The logical lines holding all of the rule's pattern literals (every match does),
    /// found from the occurrences of whichever is rarest in the file.
    Anchor,
    /// The assignment statements holding the pattern's punctuation: every match is an
    /// assignment, whose `=` stands outside all brackets of its line.
    Assignment {
        /// The punctuation of the pattern's tokens outside strings (`regions::punctuation`).
        punctuation: u32,
    },
}

impl CompiledRule {
    /// The rule's id.
    pub fn id(&self) -> &str {
        &self.rule.id.value
    }

    /// The texts any file this rule matches in must contain: the pattern's and the loop
    /// header's identifiers and string parts, and the exact class and function names.
    pub fn literals(&self) -> Vec<String> {
        use crate::rules::model::NameFilter;
        let mut out = self.pattern.literals.clone();
        if let Some(l) = &self.loop_pattern {
            out.extend(l.literals.iter().cloned());
        }
        if let Some(c) = &self.rule.when.contains {
            out.push(c.value.clone());
        }
        for filter in [&self.rule.inside.class, &self.rule.inside.function]
            .into_iter()
            .flatten()
        {
            if let NameFilter::Exact(name) = filter {
                out.push(name.value.clone());
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// How the rule's candidate statements are found (see `locator`). A rule is statement-local
    /// when its pattern's root can hold no block, so a match lies within one logical line or
    /// compound-statement header; it has no enclosing-scope conditions (`inside`,
    /// `not_inside`), no whole-file probes (`when.has`/`lacks`), and an action that edits only
    /// within the match.
    fn locate(&self) -> Option<Locator> {
        let PatNode::Node(root) = &self.pattern.root else {
            return None;
        };
        let root_kinds = crate::grammar::kind_ids(&root.kind, root.named);
        let blocks = crate::grammar::kind_ids("block", true);
        let holds_no_block = !root_kinds.is_empty()
            && root_kinds.iter().all(|&kind| {
                blocks.iter().all(|&block| {
                    kind != block && !crate::grammar::containment().may_contain(kind, block)
                })
            });
        let inside = &self.rule.inside;
        let edits_within_match = actions::unit(&self.rule.action).facts().edits_within_match;
        let local = holds_no_block
            && inside.class.is_none()
            && inside.function.is_none()
            && inside.loop_header.is_none()
            && self.not_inside.is_none()
            && self.when_has.is_none()
            && self.when_lacks.is_none()
            && edits_within_match;
        if !local {
            None
        } else if !self.pattern.literals.is_empty() {
            Some(Locator::Anchor)
        } else if assigns_at_top(root) {
            Some(Locator::Assignment {
                punctuation: pattern_punctuation(&self.pattern.root),
            })
        } else {
            None
        }
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
    /// Which rules could match a file, from its bytes.
    pub prefilter: Prefilter,
    /// The rules whose matches are rooted in nodes of each kind, by kind id: a walk of the
    /// tree that looks up every node here finds the same candidates as the query, far more
    /// cheaply where the query would have to run over a whole file.
    pub by_root_kind: Vec<Vec<usize>>,
    /// By kind id, the rules whose pattern root may stand below a node of that kind (from the
    /// grammar's node-type table): the walk does not enter a node none of its rules can be
    /// below, such as an expression when every pattern is a statement.
    pub rooted_below: Vec<Vec<usize>>,
}

impl RuleSet {
    /// The rule `id` names.
    pub fn rule(&self, id: RuleId) -> &CompiledRule {
        &self.rules[id.0]
    }

    /// Loads every rule file `paths` name (files or folders) and compiles them as one set; no
    /// rule at all is a usage error, so an empty folder never silently patches nothing.
    pub fn load(paths: &[PathBuf]) -> Result<RuleSet, LoadError> {
        let mut rules = Vec::new();
        for path in paths {
            rules.extend(crate::rules::load_path(path)?);
        }
        if rules.is_empty() {
            let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            return Err(LoadError::NoRules {
                paths: names.join(", "),
            });
        }
        Ok(RuleSet::compile(rules)?)
    }

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
        order(&mut compiled, &seen)?;
        let source: String = compiled
            .iter()
            .map(|r| r.query_source.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let query = Query::new(&python::language(), &source).map_err(|e| {
            // Compiling each rule's query alone finds the rule the failure came from.
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
        let literals: Vec<Vec<String>> = compiled.iter().map(CompiledRule::literals).collect();
        let inside_matches: Vec<Vec<String>> = compiled
            .iter()
            .map(|r| r.pattern.literals.clone())
            .collect();
        let by_root_kind = by_root_kind(&compiled);
        let rooted_below = rooted_below(&by_root_kind);
        Ok(RuleSet {
            by_root_kind,
            rooted_below,
            prefilter: Prefilter::new(&literals, &inside_matches),
            rules: compiled,
            query,
        })
    }
}

/// Whether a pattern rooted at `root` is an assignment (alone or as a statement) with its `=`:
/// tree-sitter-python has assignments only in expression statements (or chained in other
/// assignments), so that `=` stands outside all brackets of the statement's logical line.
fn assigns_at_top(root: &crate::pattern::NodePattern) -> bool {
    let assignment = match (root.kind.as_str(), root.children.as_slice()) {
        ("assignment", _) => root,
        ("expression_statement", [(_, PatNode::Node(only))]) if only.kind == "assignment" => only,
        _ => return false,
    };
    assignment
        .children
        .iter()
        .any(|(_, c)| matches!(c, PatNode::Node(t) if t.kind == "=" && !t.named))
}

/// The punctuation of a pattern's tokens, leaving out strings (whose parts are text, and whose
/// interpolations the region scan does not look into).
fn pattern_punctuation(root: &PatNode) -> u32 {
    let PatNode::Node(node) = root else {
        return 0;
    };
    if node.kind == "string" {
        return 0;
    }
    let own = if node.named {
        0
    } else {
        crate::regions::punctuation(&node.kind)
    };
    node.children
        .iter()
        .fold(own, |mask, (_, child)| mask | pattern_punctuation(child))
}

/// For each node kind id of tree-sitter-python, the rules whose pattern root has that kind; a
/// pattern rooted in a metavariable can start at any named node.
fn by_root_kind(rules: &[CompiledRule]) -> Vec<Vec<usize>> {
    let language = python::language();
    let mut by_kind: Vec<Vec<usize>> = vec![Vec::new(); language.node_kind_count()];
    for (i, rule) in rules.iter().enumerate() {
        match &rule.pattern.root {
            PatNode::Node(n) => {
                for &id in crate::grammar::kind_ids(&n.kind, n.named) {
                    by_kind[usize::from(id)].push(i);
                }
            }
            PatNode::Var(_) | PatNode::Multi(_) => {
                for (id, rules) in by_kind.iter_mut().enumerate() {
                    if language.node_kind_is_named(id as u16) {
                        rules.push(i);
                    }
                }
            }
        }
    }
    by_kind
}

/// For each kind id, the rules rooted in some kind that may stand below it.
fn rooted_below(by_root_kind: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let table = crate::grammar::containment();
    (0..by_root_kind.len())
        .map(|outer| {
            let mut rules: Vec<usize> = by_root_kind
                .iter()
                .enumerate()
                .filter(|(inner, _)| table.may_contain(outer as u16, *inner as u16))
                .flat_map(|(_, rules)| rules.iter().copied())
                .collect();
            rules.sort_unstable();
            rules.dedup();
            rules
        })
        .collect()
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
    let needs = actions::unit(&rule.action).facts().needs;
    if needs == Needs::Function && pattern.root.kind() != Some("function_definition") {
        return Err(RuleError::new(
            RuleErrorKind::ActionNeedsFunction {
                action: rule.action.name().to_string(),
            },
            &rule.origin.file,
            rule.pattern.span.clone(),
        )
        .with_help("match a function, e.g. `def __init__($$$P): $$$B`"));
    }
    let guard = |snippet: &Option<Snippet>, what: &str| {
        snippet
            .as_ref()
            .map(|s| Pattern::compile(&s.text).map_err(|e| pattern_error(&rule, s, what, e)))
            .transpose()
    };
    let unless = guard(&rule.unless, "`unless`")?;
    let not_inside = guard(&rule.not_inside, "`not_inside`")?;
    let when_has = guard(&rule.when.has, "`when.has`")?;
    let when_lacks = guard(&rule.when.lacks, "`when.lacks`")?;
    if needs == Needs::Call && !pattern.has_call() {
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
    for template in actions::unit(&rule.action).templates(&rule.action.args) {
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
    // Checked when the rule set's one query is built (compiling a query costs milliseconds).
    let query_source = to_query(&pattern.root);
    let mut compiled = CompiledRule {
        rule,
        pattern,
        loop_pattern,
        files,
        query_source,
        unless,
        not_inside,
        when_has,
        when_lacks,
        after: Vec::new(),
        step: 0,
        locator: None,
    };
    compiled.locator = compiled.locate();
    Ok(compiled)
}

/// Resolves `after` into rule indexes and planning steps; unknown ids, later phases and
/// cycles are errors.
fn order(rules: &mut [CompiledRule], ids: &HashMap<String, usize>) -> Result<(), RuleError> {
    for i in 0..rules.len() {
        let mut after = Vec::new();
        for name in &rules[i].rule.after {
            let error = |kind| RuleError::new(kind, &rules[i].rule.origin.file, name.span.clone());
            let Some(&j) = ids.get(&name.value) else {
                let known: Vec<&str> = ids.keys().map(String::as_str).collect();
                let e = error(RuleErrorKind::UnknownAfter {
                    id: name.value.clone(),
                });
                return Err(
                    match crate::rules::error::did_you_mean(&name.value, &known) {
                        Some(s) => e.with_help(format!("did you mean `{s}`?")),
                        None => e,
                    },
                );
            };
            if rules[j].rule.phase > rules[i].rule.phase {
                return Err(error(RuleErrorKind::AfterLaterPhase {
                    id: name.value.clone(),
                    phase: rules[j].rule.phase.to_string(),
                }));
            }
            after.push(j);
        }
        rules[i].after = after;
    }
    // Steps by depth-first search; a rule met again while still open closes a cycle.
    let mut state = vec![0u8; rules.len()];
    let mut steps = vec![0usize; rules.len()];
    fn visit(
        i: usize,
        rules: &[CompiledRule],
        state: &mut [u8],
        steps: &mut [usize],
        path: &mut Vec<usize>,
    ) -> Result<usize, Vec<usize>> {
        match state[i] {
            2 => return Ok(steps[i]),
            1 => {
                let start = path.iter().position(|&p| p == i).unwrap_or(0);
                let mut cycle = path[start..].to_vec();
                cycle.push(i);
                return Err(cycle);
            }
            _ => {}
        }
        state[i] = 1;
        path.push(i);
        let mut step = 0;
        for &j in &rules[i].after {
            let s = visit(j, rules, state, steps, path)?;
            if rules[j].rule.phase == rules[i].rule.phase {
                step = step.max(s + 1);
            }
        }
        path.pop();
        state[i] = 2;
        steps[i] = step;
        Ok(step)
    }
    for i in 0..rules.len() {
        if let Err(cycle) = visit(i, rules, &mut state, &mut steps, &mut Vec::new()) {
            let names: Vec<&str> = cycle.iter().map(|&c| rules[c].id()).collect();
            let first = &rules[cycle[0]];
            let span = first
                .rule
                .after
                .first()
                .map_or(first.rule.id.span.clone(), |a| a.span.clone());
            return Err(RuleError::new(
                RuleErrorKind::AfterCycle {
                    cycle: names.join(" → "),
                },
                &first.rule.origin.file,
                span,
            ));
        }
    }
    for (rule, step) in rules.iter_mut().zip(steps) {
        rule.step = step;
    }
    Ok(())
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
