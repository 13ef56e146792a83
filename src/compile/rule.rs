//! Compiling one rule: its patterns, globs and templates, each checked against the others.

use globset::{GlobBuilder, GlobSetBuilder};

use super::{CompiledConstraint, CompiledRule, Files, ScopePatterns};
use crate::actions;
use crate::pattern::matcher::{Bindings, Matcher};
use crate::pattern::meta::{encode, template_metavars};
use crate::pattern::query::to_query;
use crate::pattern::{LoopPattern, Pattern, PatternError};
use crate::rules::error::{Gather, RuleError, RuleErrorKind};
use crate::rules::model::{Rule, Snippet};

pub(super) fn pattern_error(
    rule: &Rule,
    snippet: &Snippet,
    what: &str,
    e: PatternError,
) -> RuleError {
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

/// A pattern that tests for code (a guard, a scope or `when` predicate, `where.has`): one
/// statement or expression. Several statements in a row are a `match`'s sequence only: here
/// they would never be found (a `has` always false, an `unless` never guarding), so they are
/// refused where written.
pub(super) fn predicate_pattern(
    rule: &Rule,
    snippet: &Snippet,
    what: &str,
) -> Result<Pattern, RuleError> {
    let pattern =
        Pattern::compile(&snippet.text).map_err(|e| pattern_error(rule, snippet, what, e))?;
    let sequence = |n: &crate::pattern::PatNode| matches!(n, crate::pattern::PatNode::Seq(_));
    let several = match &pattern.root {
        crate::pattern::PatNode::Any(alternatives) => alternatives.iter().any(sequence),
        root => sequence(root),
    };
    if several {
        return Err(RuleError::new(
            RuleErrorKind::InvalidValue {
                key: what.trim_matches('`').to_string(),
                reason: "it holds several statements; a predicate tests for one statement or expression (only `match` takes a sequence)".into(),
            },
            &rule.origin.file,
            snippet.span.clone(),
        ));
    }
    Ok(pattern)
}

/// The compiled parts of a rule.
struct Parts {
    pattern: Pattern,
    loop_patterns: Vec<LoopPattern>,
    unless: Option<Pattern>,
    not_inside: Option<Pattern>,
    class_scope: ScopePatterns,
    function_scope: ScopePatterns,
    when_has: Option<Pattern>,
    when_lacks: Option<Pattern>,
    constraints: Vec<CompiledConstraint>,
    files: Files,
}

/// Compiles each part of a rule on its own: the parts, or every error, in the order the
/// parts are read (loading reports the first).
fn compile_parts(rule: &Rule) -> Result<Parts, Vec<RuleError>> {
    let mut g = Gather::default();
    let sources: Vec<&str> = rule.patterns.iter().map(|p| p.text.as_str()).collect();
    let pattern = g.ok(Pattern::compile_any(&sources)
        .map_err(|(i, e)| pattern_error(rule, &rule.patterns[i], "`match`", e)));
    let mut pattern = pattern.map(|mut p| {
        if rule.ordered {
            p.keep_keyword_order();
        }
        p
    });
    let loop_patterns = g.ok(rule
        .inside
        .loop_header
        .iter()
        .map(|s| {
            LoopPattern::compile(&s.text).map_err(|e| pattern_error(rule, s, "`inside.loop`", e))
        })
        .collect::<Result<Vec<_>, _>>());
    let branches = super::branches::branch_patterns(rule);
    if let Some(p) = &pattern
        && let Err(e) = super::branches::check_targets(rule, p, &branches)
    {
        g.ok::<()>(Err(e));
        pattern = None;
    }
    let guard = |snippet: &Option<Snippet>, what: &str| {
        snippet
            .as_ref()
            .map(|s| predicate_pattern(rule, s, what))
            .transpose()
    };
    let unless = g.ok(guard(&rule.unless, "`unless`"));
    let not_inside = g.ok(guard(&rule.not_inside, "`not_inside`"));
    let class_scope = g.ok(scope_patterns(rule, &rule.inside.class, "class"));
    let function_scope = g.ok(scope_patterns(rule, &rule.inside.function, "function"));
    let when_has = g.ok(guard(&rule.when.has, "`when.has`"));
    let when_lacks = g.ok(guard(&rule.when.lacks, "`when.lacks`"));
    // What the templates and `where` may use is known only once every binder compiled.
    let mut constraints = None;
    if let (Some(pattern), Some(loops), Some(class), Some(function)) =
        (&pattern, &loop_patterns, &class_scope, &function_scope)
    {
        let bound = bound_names(pattern, loops, class, function);
        g.ok(check_bound(rule, &bound, &branches));
        constraints = g.ok(compile_constraints(rule, &bound));
        if let Some(c) = &constraints {
            g.ok(check_not_bare(rule, pattern, c));
        }
    }
    let files = g.ok(compile_globs(rule));
    let parts = (|| {
        Some(Parts {
            pattern: pattern?,
            loop_patterns: loop_patterns?,
            unless: unless?,
            not_inside: not_inside?,
            class_scope: class_scope?,
            function_scope: function_scope?,
            when_has: when_has?,
            when_lacks: when_lacks?,
            constraints: constraints?,
            files: files?,
        })
    })();
    g.finish(|| parts)
}

/// Compiles a rule: every error it has, or the rule.
pub(super) fn compile_rule_all(rule: Rule) -> Result<CompiledRule, Vec<RuleError>> {
    let Parts {
        pattern,
        loop_patterns,
        unless,
        not_inside,
        class_scope,
        function_scope,
        when_has,
        when_lacks,
        constraints,
        files,
    } = compile_parts(&rule)?;
    let query_source = to_query(&pattern.root);
    let query = std::sync::OnceLock::new();
    let guard_is_own_output = [&unless, &not_inside].into_iter().flatten().any(|guard| {
        super::branches::all_templates(&rule)
            .iter()
            .any(|t| writes(guard, &t.text))
    });
    // A deletion shows only as an absence, which means something only within a named scope.
    let branch_patterns = super::branches::branch_patterns(&rule);
    let (applied, unwitnessed) = super::branches::applied(&rule, &pattern, &branch_patterns);
    // Checked when the rule was read: each reads.
    let imports = rule
        .imports
        .iter()
        .filter_map(|i| crate::python::imports::read_import(&i.value).ok())
        .collect();
    let mut compiled = CompiledRule {
        imports,
        branch_patterns,
        rule,
        pattern,
        applied,
        unwitnessed,
        loop_patterns,
        files,
        query_source,
        query,
        unless,
        not_inside,
        guard_is_own_output,
        constraints,
        class_scope,
        function_scope,
        when_has,
        when_lacks,
        after: Vec::new(),
        step: 0,
        locator: None,
    };
    compiled.locator = compiled.locate();
    Ok(compiled)
}

/// What the match can use: its own metavariables, the loop header's, and those the scope
/// predicates bind ([`ScopePatterns::binds`]).
fn bound_names<'p>(
    pattern: &'p Pattern,
    loops: &'p [LoopPattern],
    class: &'p ScopePatterns,
    function: &'p ScopePatterns,
) -> Vec<&'p str> {
    pattern
        .metavars
        .iter()
        .chain(loops.iter().flat_map(|l| l.metavars.iter()))
        .chain(class.binds())
        .chain(function.binds())
        .map(String::as_str)
        .collect()
}

/// Every metavariable the rule uses outside its patterns — in templates, in action arguments
/// that name metavariables, in `when.signature.of` — must be bound by a pattern.
fn check_bound(rule: &Rule, bound: &[&str], branches: &[Pattern]) -> Result<(), RuleError> {
    // An alternative's own action may also use what that alternative alone binds.
    let each: Vec<(&crate::rules::model::Action, Vec<&str>)> = if branches.is_empty() {
        vec![(&rule.action, bound.to_vec())]
    } else {
        (branches.iter().enumerate())
            .map(|(i, p)| {
                let mut own = bound.to_vec();
                own.extend(p.metavars.iter().map(String::as_str));
                (rule.action_of(i), own)
            })
            .collect()
    };
    for (action, own) in each {
        let unit = actions::unit(action);
        for template in unit
            .templates(&action.args)
            .into_iter()
            .chain(unit.metavar_args(&action.args))
        {
            check_template(rule, template, &own)?;
        }
    }
    if let Some(probe) = &rule.when.signature
        && let Some(name) = probe
            .of
            .value
            .split('.')
            .filter_map(|part| part.strip_prefix('$'))
            .find(|name| !bound.contains(name))
    {
        return Err(RuleError::new(
            RuleErrorKind::UnboundMetavariable {
                name: name.to_string(),
            },
            &rule.origin.file,
            probe.of.span.clone(),
        ));
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
            // Bound by some alternatives (or only where an optional statement stands): the
            // template would have nothing to write at the other sites.
            let somewhere = rule.patterns.iter().any(|p| {
                template_metavars(&p.text).is_ok_and(|m| m.iter().any(|(n, _)| *n == name))
            });
            let error = RuleError::new(
                RuleErrorKind::UnboundMetavariable { name: name.clone() },
                &rule.origin.file,
                template.file_range(range),
            );
            if somewhere {
                return Err(error.with_help(format!(
                    "`${name}` is bound by only some alternatives of `match`, or only where a `# optional` statement stands: a template writes what every site binds — give the alternatives that bind it an `action` of their own"
                )));
            }
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

/// The rule's `files` globs as matchers: those that select, and those written `!GLOB` that
/// exclude.
fn compile_globs(rule: &Rule) -> Result<Files, RuleError> {
    let invalid = |reason: String, span| {
        RuleError::new(
            RuleErrorKind::InvalidValue {
                key: "files".into(),
                reason,
            },
            &rule.origin.file,
            span,
        )
    };
    let (mut include, mut exclude) = (GlobSetBuilder::new(), GlobSetBuilder::new());
    let (mut includes, mut excludes) = (0, 0);
    for glob in &rule.files {
        let (builder, text) = match glob.value.strip_prefix('!') {
            Some(excluded) => {
                excludes += 1;
                (&mut exclude, excluded)
            }
            None => {
                includes += 1;
                (&mut include, glob.value.as_str())
            }
        };
        let compiled = GlobBuilder::new(text)
            .literal_separator(true)
            .build()
            .map_err(|e| invalid(e.kind().to_string(), glob.span.clone()))?;
        builder.add(compiled);
    }
    let span = || rule.files.first().map_or(0..0, |g| g.span.clone());
    let build = |builder: GlobSetBuilder, count: usize| {
        (count > 0)
            .then(|| builder.build().map_err(|e| invalid(e.to_string(), span())))
            .transpose()
    };
    Ok(Files {
        include: build(include, includes)?,
        exclude: build(exclude, excludes)?,
    })
}

/// Whether `guard` matches somewhere in what `template` writes (its metavariables standing for
/// any code).
pub(crate) fn writes(guard: &Pattern, template: &str) -> bool {
    let Ok(encoded) = encode(template) else {
        return false;
    };
    let tree = crate::python::parse(&encoded.text);
    Matcher::new(&encoded.text).occurs_in(guard, tree.root_node(), &Bindings::default())
}

/// The `has` and `lacks` patterns of `inside.KEY`, compiled.
fn scope_patterns(
    rule: &Rule,
    filter: &Option<crate::rules::model::ScopeFilter>,
    key: &str,
) -> Result<ScopePatterns, RuleError> {
    let Some(filter) = filter else {
        return Ok(ScopePatterns::default());
    };
    let compile = |snippet: &Option<Snippet>, what: String| {
        snippet
            .as_ref()
            .map(|s| predicate_pattern(rule, s, &what))
            .transpose()
    };
    Ok(ScopePatterns {
        has: compile(&filter.has, format!("`inside.{key}.has`"))?,
        lacks: filter
            .lacks
            .iter()
            .map(|s| predicate_pattern(rule, s, &format!("`inside.{key}.lacks`")))
            .collect::<Result<_, _>>()?,
    })
}

/// `where`, compiled: each metavariable bound by the pattern or loop header, each kind one of
/// tree-sitter-python's, each `has` a pattern.
/// Refuses a `match` that is a bare metavariable without a `where` kind: it matches every node
/// of every file, and the work of planning at every node grows with the file's depth (a
/// 20,000-deep nesting never finished).
fn check_not_bare(
    rule: &Rule,
    pattern: &Pattern,
    constraints: &[CompiledConstraint],
) -> Result<(), RuleError> {
    use crate::pattern::PatNode;
    let name = match &pattern.root {
        PatNode::Var(name) | PatNode::Multi(name) => name.as_deref(),
        _ => return Ok(()),
    };
    let kind_given =
        name.is_some_and(|n| constraints.iter().any(|c| c.name == n && c.kinds.is_some()));
    if kind_given {
        return Ok(());
    }
    Err(RuleError::new(
        RuleErrorKind::InvalidValue {
            key: "match".into(),
            reason: "a bare metavariable matches every node of every file".into(),
        },
        &rule.origin.file,
        rule.patterns[0].span.clone(),
    )
    .with_help(
        "give the pattern a shape (`$F($$$A)`), or constrain it: `where: {$X: {kind: call}}`",
    ))
}

fn compile_constraints(rule: &Rule, bound: &[&str]) -> Result<Vec<CompiledConstraint>, RuleError> {
    let mut out = Vec::new();
    for (name, c) in &rule.constraints {
        if !bound.contains(&name.value.as_str()) {
            let e = RuleError::new(
                RuleErrorKind::UnboundMetavariable {
                    name: name.value.clone(),
                },
                &rule.origin.file,
                name.span.clone(),
            );
            let names: Vec<String> = bound.iter().map(|b| format!("${b}")).collect();
            return Err(e.with_help(format!(
                "`where` constrains a metavariable the pattern binds: {}",
                names.join(", ")
            )));
        }
        let kinds = match c.kind.as_slice() {
            [] => None,
            kinds => Some(kind_ids(rule, kinds, "kind")?),
        };
        let not_kinds = kind_ids(rule, &c.not_kind, "not_kind")?;
        let has = c
            .has
            .as_ref()
            .map(|s| predicate_pattern(rule, s, "`where.has`"))
            .transpose()?;
        out.push(CompiledConstraint {
            name: name.value.clone(),
            regex: c.regex.as_ref().map(|r| r.value.0.clone()),
            not_regex: c.not_regex.as_ref().map(|r| r.value.0.clone()),
            kinds,
            not_kinds,
            has,
        });
    }
    Ok(out)
}

/// The node kind ids of the kinds a `where` names under `key`; an unknown kind is an error.
fn kind_ids(
    rule: &Rule,
    kinds: &[crate::rules::spans::Spanned<String>],
    key: &str,
) -> Result<Vec<u16>, RuleError> {
    let mut out = Vec::new();
    for kind in kinds {
        let ids = crate::python::grammar::kind_ids(&kind.value, true);
        if ids.is_empty() {
            return Err(RuleError::new(
                RuleErrorKind::InvalidValue {
                    key: key.into(),
                    reason: format!("`{}` is not a tree-sitter-python node kind", kind.value),
                },
                &rule.origin.file,
                kind.span.clone(),
            ));
        }
        out.extend_from_slice(ids);
    }
    Ok(out)
}
