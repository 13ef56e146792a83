//! Compiles loaded rules: patterns into pattern trees and one shared tree-sitter query,
//! globs into matchers, templates checked against what the pattern binds.

use std::collections::HashMap;
use std::path::PathBuf;

mod branches;
mod clauses;
mod index;
mod order;
mod replay;
mod rule;

pub(crate) use rule::writes;

use globset::GlobSet;
use tree_sitter::Query;

use crate::actions;
use crate::pattern::{LoopPattern, PatNode, Pattern};
use crate::prefilter::{Clauses, Prefilter};
use crate::python::regions::AssignmentShape;
use crate::rules::LoadError;
use crate::rules::error::{RuleError, RuleErrorKind};
use crate::rules::model::Rule;
use index::{assignment_shape, assigns_at_top, by_root_kind, rooted_below};
use order::order;

/// A rule's place in its rule set: how the engine and the front ends name a rule, rather than
/// by position or id string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RuleId(pub usize);

/// How a rule recognises its patch already in place.
#[derive(Debug)]
pub enum Applied {
    /// Sites of the shape the action leaves (a `replace` template, a `rename`d pattern).
    Shape(Pattern),
    /// The match's absence from a class or function the rule's `inside` selects: each such
    /// scope is a site the deletion already cleared.
    Absence,
}

/// A rule ready to run.
#[derive(Debug)]
pub struct CompiledRule {
    /// The rule as loaded.
    pub rule: Rule,
    /// Its `match` pattern.
    pub pattern: Pattern,
    /// Each `match` alternative compiled alone, when any carries its own action (empty
    /// otherwise): at a site, the first of these that matches names the action.
    pub branch_patterns: Vec<Pattern>,
    /// Its `inside.loop` headers, tried in order (none: no loop asked for).
    pub loop_patterns: Vec<LoopPattern>,
    /// Its `files` globs.
    pub files: Files,
    /// The tree-sitter query that finds candidates for `pattern`.
    pub query_source: String,
    /// That query, compiled when a file first needs it (`None`: tree-sitter refused it, and
    /// the rule's candidates come from a walk by root kind instead). Compiling a query costs
    /// milliseconds per pattern (tree-sitter analyses the grammar for each), so a pack of
    /// 20,000 rules spent 110 s compiling one query at load; most rules are never run by a
    /// query (files that activate many rules find candidates from anchors), so none is
    /// compiled before it is needed.
    pub query: std::sync::OnceLock<Option<Query>>,
    /// `unless`: found within a match, the match is left alone.
    pub unless: Option<Pattern>,
    /// `not_inside`: found around a match, the match is left alone.
    pub not_inside: Option<Pattern>,
    /// Whether `unless` or `not_inside` recognises what the rule's own templates write: then a
    /// guarded match is this rule's patch already in place (`redundant`), not a site some
    /// other rule or upstream handles (`guarded`).
    pub guard_is_own_output: bool,
    /// `where`, compiled: conditions on what metavariables bound.
    pub constraints: Vec<CompiledConstraint>,
    /// How the patch already in place shows (`--write`, then `--check`): where `match` finds
    /// too few sites, these count as sites already patched.
    pub applied: Option<Applied>,
    /// Whether the applied shape is a bare capture (`replace: "$X"` unwrapping a call) or holds
    /// no literal (`$F($$$A)`): a patched site cannot be told from upstream drift, so nothing
    /// counts as already applied and a missed `expect` is drift, saying why.
    pub unwitnessed: bool,
    /// `inside.class`'s `has` and `lacks`, compiled.
    pub class_scope: ScopePatterns,
    /// `inside.function`'s `has` and `lacks`, compiled.
    pub function_scope: ScopePatterns,
    /// The import statements its edits need, read.
    pub imports: Vec<crate::python::imports::ImportSpec>,
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

/// One metavariable's `where` conditions, ready to check.
#[derive(Debug)]
pub struct CompiledConstraint {
    /// The metavariable, without `$`.
    pub name: String,
    /// Its bound text must contain a match.
    pub regex: Option<regex::Regex>,
    /// Its bound text must contain none.
    pub not_regex: Option<regex::Regex>,
    /// Its bound node must be of one of these kind ids (one kind name can have several).
    pub kinds: Option<Vec<u16>>,
    /// Its bound node must be of none of these kind ids.
    pub not_kinds: Vec<u16>,
    /// Its bound node must hold a match.
    pub has: Option<Pattern>,
}

/// A rule's `files`, compiled: the globs that select a file (none: every file) and those,
/// written `!GLOB`, that leave one out whatever selected it.
#[derive(Debug, Default)]
pub struct Files {
    /// Selecting globs; `None` selects every file.
    pub include: Option<GlobSet>,
    /// Excluding globs (`!**/tf_*.py`).
    pub exclude: Option<GlobSet>,
}

impl Files {
    /// Whether `path` (`/`-separated) is selected and not excluded.
    pub fn selects(&self, path: &str) -> bool {
        self.include.as_ref().is_none_or(|g| g.is_match(path))
            && !self.exclude.as_ref().is_some_and(|g| g.is_match(path))
    }
}

/// A scope predicate's patterns, compiled: what the enclosing class or function must hold and
/// must not.
#[derive(Debug, Default)]
pub struct ScopePatterns {
    /// It must hold a match.
    pub has: Option<Pattern>,
    /// It must hold a match of none.
    pub lacks: Vec<Pattern>,
}

impl ScopePatterns {
    /// The metavariables the scope binds for the match: `has`'s (`lacks`, an absence, binds
    /// nothing).
    pub fn binds(&self) -> impl Iterator<Item = &String> {
        self.has.iter().flat_map(|p| p.metavars.iter())
    }
}

/// How a statement-local rule's candidate statements are found from a file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locator {
    /// The logical lines holding all of the rule's pattern literals (every match does),
    /// found from the occurrences of whichever is rarest in the file.
    Anchor {
        /// Where every match is an assignment (as for `Assignment`), what its line shows:
        /// lines that do not assign are passed over too.
        assignment: Option<AssignmentShape>,
    },
    /// The assignment statements of the pattern's shape: every match is an assignment, whose
    /// `=` stands outside all brackets of its line and which ends its statement.
    Assignment {
        /// What the statement's logical line shows.
        shape: AssignmentShape,
    },
    /// The top-level statements holding the rule's statement literals (see
    /// `CompiledRule::statement_literals`): a match, the class, function and loop it lies in, and
    /// what their `has`/`lacks` look for all lie in the one top-level statement that holds it.
    TopLevel,
}

impl CompiledRule {
    /// The rule's candidate query, compiled on first use; `None` where tree-sitter refuses it.
    pub fn query(&self) -> Option<&Query> {
        self.query
            .get_or_init(|| Query::new(&crate::python::language(), &self.query_source).ok())
            .as_ref()
    }

    /// The rule's id.
    pub fn id(&self) -> &str {
        &self.rule.id.value
    }

    /// The texts any file this rule matches in must contain: the pattern's and the loop
    /// header's identifiers and string parts, those of the patterns its scopes must hold, and
    /// the exact class and function names.
    pub fn literals(&self) -> Vec<String> {
        use crate::rules::model::NameFilter;
        let mut out = self.pattern.literals.clone();
        // Only what every loop alternative holds is sure to be in the file.
        if let Some((first, rest)) = self.loop_patterns.split_first() {
            out.extend(
                first
                    .literals
                    .iter()
                    .filter(|l| rest.iter().all(|r| r.literals.contains(l)))
                    .cloned(),
            );
        }
        // A scope that must hold a pattern's match puts its literals in the file.
        for has in [&self.class_scope.has, &self.function_scope.has]
            .into_iter()
            .flatten()
        {
            out.extend(has.literals.iter().cloned());
        }
        if let Some(c) = &self.rule.when.contains {
            out.push(c.value.clone());
        }
        for filter in [&self.rule.inside.class, &self.rule.inside.function]
            .into_iter()
            .flatten()
        {
            if let Some(NameFilter::Exact(name)) = &filter.name {
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
        let root_kinds = root.kind_ids;
        let blocks = crate::python::grammar::kind_ids("block", true);
        let holds_no_block = !root_kinds.is_empty()
            && root_kinds.iter().all(|&kind| {
                blocks.iter().all(|&block| {
                    kind != block && !crate::python::grammar::containment().may_contain(kind, block)
                })
            });
        let inside = &self.rule.inside;
        let edits_within_match = (self.rule.actions().into_iter())
            .all(|a| actions::unit(a).facts_for(&a.args).edits_within_match);
        // A check-only rule is found in its top-level statement's parse as it is in the
        // whole file's, except where a match ends in a trailing comment the whole parse hands
        // the block (a `def` 26 bytes longer): its reported range would differ, so check-only
        // rules that hold blocks keep the whole parse.
        let scoped_edits_within_match =
            (self.rule.actions().into_iter()).all(|a| actions::unit(a).facts().edits_within_match);
        let local = holds_no_block
            && inside.class.is_none()
            && inside.function.is_none()
            && inside.loop_header.is_empty()
            && self.not_inside.is_none()
            && self.rule.at.is_empty()
            && self.when_has.is_none()
            && self.when_lacks.is_none()
            && self.rule.when.signature.is_none()
            && self.rule.expect.is_none_or(|e| e.per.is_none())
            && edits_within_match;
        if !local {
            return self.top_level(scoped_edits_within_match);
        }
        let assignment = assigns_at_top(root).then(|| assignment_shape(&self.pattern.root));
        if !self.anchor_clauses().is_empty() {
            Some(Locator::Anchor { assignment })
        } else {
            assignment.map(|shape| Locator::Assignment { shape })
        }
    }

    /// `Locator::TopLevel` for a rule whose conditions reach no further than the scopes its
    /// match lies in (`inside`, `not_inside`, `unless`, its metavariables' constraints), whose
    /// action edits only the match, and that has literals to find its statements by.
    fn top_level(&self, edits_within_match: bool) -> Option<Locator> {
        let within_its_statement = edits_within_match
            && self.rule.at.is_empty()
            && self.when_has.is_none()
            && self.when_lacks.is_none()
            && self.rule.when.signature.is_none()
            && self.rule.expect.is_none_or(|e| e.per.is_none())
            && self.imports.is_empty();
        (within_its_statement && !self.statement_clauses().is_empty()).then_some(Locator::TopLevel)
    }

    /// Literals that every match's top-level statement holds: the pattern's (which every match
    /// holds), or else those of what an enclosing scope must hold (`inside: {class: {has:
    /// ...}}`), which lies in the same top-level statement.
    pub fn statement_literals(&self) -> Vec<String> {
        let own = self.pattern.anchor_literals();
        if !own.is_empty() {
            return own;
        }
        [&self.class_scope.has, &self.function_scope.has]
            .into_iter()
            .flatten()
            .map(Pattern::anchor_literals)
            .find(|l| !l.is_empty())
            .unwrap_or_default()
    }

    /// Whether the rule's `files` select `path` (`/`-separated).
    pub fn selects(&self, path: &str) -> bool {
        self.files.selects(path)
    }
}

/// Compiled rules and the one query that finds candidates for all of them; built once and
/// shared by every file and thread.
#[derive(Debug)]
pub struct RuleSet {
    /// The rules, in load order.
    pub rules: Vec<CompiledRule>,
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
    /// Each rule's `files`, as an index into the distinct `files` lists of the set: a pack's
    /// rules mostly share one, whose globs are then matched once per path.
    files_class: Vec<usize>,
    /// For each distinct `files` list, the first rule that has it.
    files_first: Vec<usize>,
}

impl RuleSet {
    /// The rule `id` names.
    pub fn rule(&self, id: RuleId) -> &CompiledRule {
        &self.rules[id.0]
    }

    /// For each rule, whether its `files` select `path` (`/`-separated): each distinct list of
    /// globs is matched once.
    pub fn selecting(&self, path: &str) -> Vec<bool> {
        let by_class: Vec<bool> = self
            .files_first
            .iter()
            .map(|&first| self.rules[first].selects(path))
            .collect();
        self.files_class.iter().map(|&c| by_class[c]).collect()
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
        RuleSet::compile_checked(rules)
            .map_err(|errors| errors.into_iter().next().expect("an error"))
    }

    /// Compiles `rules`, each part of each rule checked on its own: every error, in the
    /// order [`RuleSet::compile`] meets them (it reports the first). Links between rules
    /// (`after`) and the shared query are checked once every rule compiled.
    pub fn compile_checked(mut rules: Vec<Rule>) -> Result<RuleSet, Vec<RuleError>> {
        qualify_shared_ids(&mut rules);
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut compiled = Vec::with_capacity(rules.len());
        let mut errors = Vec::new();
        for rule in rules {
            if seen.contains_key(&rule.id.value) {
                errors.push(RuleError::new(
                    RuleErrorKind::DuplicateId {
                        id: rule.id.value.clone(),
                    },
                    &rule.origin.file,
                    rule.id.span.clone(),
                ));
            }
            seen.entry(rule.id.value.clone()).or_insert(compiled.len());
            match rule::compile_rule_all(rule) {
                Ok(rule) => compiled.push(rule),
                Err(e) => errors.extend(e),
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        RuleSet::assemble(compiled, &seen).map_err(|e| vec![e])
    }

    /// Orders compiled rules and builds the indexes over them.
    fn assemble(
        mut compiled: Vec<CompiledRule>,
        seen: &HashMap<String, usize>,
    ) -> Result<RuleSet, RuleError> {
        order(&mut compiled, seen)?;
        replay::replay_renames(&mut compiled);
        let needs: Vec<Clauses> = compiled.iter().map(CompiledRule::needs).collect();
        let inside_matches: Vec<Clauses> =
            compiled.iter().map(CompiledRule::anchor_clauses).collect();
        let in_statements: Vec<Clauses> = compiled
            .iter()
            .zip(&inside_matches)
            .map(|(r, own)| r.statement_clauses_given(own.clone()))
            .collect();
        let by_root_kind = by_root_kind(&compiled);
        let rooted_below = rooted_below(&by_root_kind);
        let mut classes: HashMap<Vec<&str>, usize> = HashMap::new();
        let mut files_first = Vec::new();
        let files_class: Vec<usize> = compiled
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let globs = r.rule.files.iter().map(|g| g.value.as_str()).collect();
                *classes.entry(globs).or_insert_with(|| {
                    files_first.push(i);
                    files_first.len() - 1
                })
            })
            .collect();
        Ok(RuleSet {
            by_root_kind,
            rooted_below,
            files_class,
            files_first,
            prefilter: Prefilter::new(&needs, &inside_matches, &in_statements),
            rules: compiled,
        })
    }
}

#[cfg(test)]
mod tests;

/// Ids are per pack (rule file): where packs share an id, each such rule is named
/// `pack/id`, so two packs load together; within one pack an id stays unique.
fn qualify_shared_ids(rules: &mut [Rule]) {
    let mut packs: HashMap<String, std::collections::HashSet<String>> = HashMap::new();
    for rule in rules.iter() {
        packs
            .entry(rule.id.value.clone())
            .or_default()
            .insert(rule.origin.pack());
    }
    for rule in rules.iter_mut() {
        if packs.get(&rule.id.value).is_some_and(|p| p.len() > 1) {
            rule.id.value = format!("{}/{}", rule.origin.pack(), rule.id.value);
        }
    }
}
