//! Reading one rule: each key on its own, so every mistake is found, and the rule put
//! together from what read.

use serde_yaml::{Mapping, Value};

use super::{Cx, RULE_KEYS, key_path, optional};
use crate::rules::error::{Gather, RuleError, RuleErrorKind};
use crate::rules::model::{
    Action, Constraint, Effect, Expect, Inside, Origin, Phase, Policy, Position, Requirement, Rule,
    Snippet, Spanned, TestCase, When,
};
use crate::rules::spans::{Path, Seg};

/// The keys of one rule, each read on its own (`None`: it had a mistake).
struct Parts {
    id: Option<Spanned<String>>,
    description: Option<Option<String>>,
    requires: Option<Vec<Requirement>>,
    fixed_upstream: Option<Vec<Requirement>>,
    family: Option<Option<Spanned<String>>>,
    group: Option<Option<Spanned<String>>>,
    phase: Option<Phase>,
    files: Option<Vec<Spanned<String>>>,
    inside: Option<Inside>,
    patterns: Option<Vec<Snippet>>,
    branch_actions: Option<Vec<Option<Action>>>,
    unless: Option<Option<Snippet>>,
    not_inside: Option<Option<Snippet>>,
    at: Option<Vec<Position>>,
    after: Option<Vec<Spanned<String>>>,
    constraints: Option<Vec<(Spanned<String>, Constraint)>>,
    action_expect: Option<(Action, Option<Expect>)>,
    when: Option<When>,
    preserve_lines: Option<bool>,
    ordered: Option<bool>,
    on_miss: Option<Policy>,
    on_refuse: Option<Policy>,
    tests: Option<Vec<TestCase>>,
    imports: Option<Vec<Spanned<String>>>,
    provides: Option<Vec<Spanned<String>>>,
    reached_from: Option<Vec<Spanned<String>>>,
    effect: Option<Option<Effect>>,
}

impl Parts {
    /// The rule, where its id and match read; other keys with mistakes are left at defaults
    /// that cannot cause a compile error of their own (an action that did not read becomes a
    /// `check`, which writes nothing; `inside` and `where` none), so lint reports the errors of
    /// the pattern beside those of the keys.
    fn assemble(self, origin: Origin) -> Option<Rule> {
        let (action, expect) = self.action_expect.unwrap_or((Action::check(), None));
        let branch_actions = self.branch_actions.unwrap_or_default();
        // Every alternative carries its own action (checked when read): the rule's is the
        // first one's, which names the rule's kind in reports.
        let action = match branch_actions.first() {
            Some(Some(first)) if branch_actions.iter().all(Option::is_some) => first.clone(),
            _ => action,
        };
        Some(Rule {
            id: self.id?,
            description: self.description.unwrap_or_default(),
            requires: self.requires.unwrap_or_default(),
            fixed_upstream: self.fixed_upstream.unwrap_or_default(),
            group: self.group.unwrap_or_default(),
            family: self.family.unwrap_or_default(),
            phase: self.phase.unwrap_or_default(),
            files: self.files.unwrap_or_default(),
            inside: self.inside.unwrap_or_default(),
            patterns: self.patterns?,
            unless: self.unless.unwrap_or_default(),
            not_inside: self.not_inside.unwrap_or_default(),
            at: self.at.unwrap_or_default(),
            after: self.after.unwrap_or_default(),
            constraints: self.constraints.unwrap_or_default(),
            action,
            branch_actions,
            expect,
            when: self.when.unwrap_or_default(),
            preserve_lines: self.preserve_lines.unwrap_or_default(),
            ordered: self.ordered.unwrap_or_default(),
            on_miss: self.on_miss.unwrap_or_default(),
            on_refuse: self.on_refuse.unwrap_or_default(),
            tests: self.tests.unwrap_or_default(),
            imports: self.imports.unwrap_or_default(),
            provides: self.provides.unwrap_or_default(),
            reached_from: self.reached_from.unwrap_or_default(),
            effect: self.effect.unwrap_or_default(),
            origin,
        })
    }
}

impl Cx<'_> {
    /// Reads one rule: the rule, or its errors with as much of it as could be read.
    pub(super) fn rule(
        &self,
        path: Path,
        map: &Mapping,
    ) -> Result<Rule, (Vec<RuleError>, Option<Rule>)> {
        let mut g = Gather::default();
        g.extend(self.unknown_keys(&path, map, RULE_KEYS, "a rule"));
        let parts = self.parts(&path, map, &mut g);
        // A rule with mistakes is still put together where what binds metavariables read
        // (the match, `inside`, `where`), the rest left at its defaults: lint compiles it
        // for the errors compiling finds, which no defaulted key can cause.
        let rule = parts.assemble(Origin {
            file: self.file.clone(),
            span: self.spans.value(&path),
        });
        match rule {
            Some(rule) if g.is_clean() => Ok(rule),
            partial => Err((g.into_errors(), partial)),
        }
    }

    /// Each key of a rule read on its own, in this order: the loader reports the first
    /// mistake, lint every one.
    fn parts(&self, path: &[Seg], map: &Mapping, g: &mut Gather) -> Parts {
        let field = |key: &str| map.get(key).map(|v| (key_path(path, key), v));
        let id = g.ok(field("id")
            .ok_or_else(|| self.missing(path, "id"))
            .and_then(|(p, v)| self.id(&p, v)));
        let description = g.ok(field("description")
            .map(|(p, v)| self.string(&p, "description", v).map(|s| s.value))
            .transpose());
        let requires = g.ok(optional(field("requires"), |p, v| {
            self.requires(p, "requires", v)
        }));
        let fixed_upstream = g.ok(optional(field("fixed_upstream"), |p, v| {
            self.requires(p, "fixed_upstream", v)
        }));
        let family = g.ok(field("family").map(|(p, v)| self.id(&p, v)).transpose());
        let group = g.ok(field("group").map(|(p, v)| self.id(&p, v)).transpose());
        let phase = g.ok(optional(field("phase"), |p, v| self.phase(p, v)));
        let files = g.ok(optional(field("files"), |p, v| self.globs(p, v)));
        let inside = g.ok(optional(field("inside"), |p, v| self.inside(p, v)));
        let (patterns, branch_actions) = self.match_parts(path, map, g);
        let code = |key: &str| {
            field(key)
                .map(|(p, v)| self.snippet(&p, key, v))
                .transpose()
        };
        let unless = g.ok(code("unless"));
        let not_inside = g.ok(code("not_inside"));
        let at = g.ok(optional(field("at"), |p, v| self.positions(p, v)));
        let after = g.ok(optional(field("after"), |p, v| self.strings(p, "after", v)));
        let constraints = g.ok(optional(field("where"), |p, v| self.constraints(p, v)));
        let action_expect = g.ok(self.action_and_expect(field("action"), field("expect")));
        let when = g.ok(optional(field("when"), |p, v| self.when(p, v)));
        let flag = |key: &str| match field(key) {
            Some((_, Value::Bool(b))) => Ok(*b),
            Some((p, v)) => Err(self.wrong_type(&p, key, "true or false", v)),
            None => Ok(false),
        };
        let preserve_lines = g.ok(flag("preserve_lines"));
        let ordered = g.ok(flag("ordered"));
        let on_miss = g.ok(optional(field("on_miss"), |p, v| {
            self.policy(p, "on_miss", v)
        }));
        let on_refuse = g.ok(optional(field("on_refuse"), |p, v| {
            self.policy(p, "on_refuse", v)
        }));
        let tests = g.ok(optional(field("tests"), |p, v| self.tests(p, v)));
        Parts {
            id,
            description,
            requires,
            fixed_upstream,
            family,
            group,
            phase,
            files,
            inside,
            patterns,
            branch_actions,
            unless,
            not_inside,
            at,
            after,
            constraints,
            action_expect,
            when,
            preserve_lines,
            ordered,
            on_miss,
            on_refuse,
            tests,
            imports: g.ok(optional(field("imports"), |p, v| self.imports(p, v))),
            provides: g.ok(optional(field("provides"), |p, v| self.provided(p, v))),
            reached_from: g.ok(optional(field("reached_from"), |p, v| self.entries(p, v))),
            effect: g.ok(field("effect").map(|(p, v)| self.effect(&p, v)).transpose()),
        }
    }

    /// `imports`: each an import statement regraft can add (read now, so a mistake is found
    /// when the rule loads).
    fn imports(&self, path: &[Seg], value: &Value) -> Result<Vec<Spanned<String>>, RuleError> {
        let items = self.strings(path, "imports", value)?;
        for (i, item) in items.iter().enumerate() {
            if let Err(why) = crate::python::imports::read_import(&item.value) {
                let at = match value {
                    Value::Sequence(_) => {
                        let mut p = path.to_vec();
                        p.push(Seg::Index(i));
                        p
                    }
                    _ => path.to_vec(),
                };
                return Err(self.invalid(&at, "imports", why));
            }
        }
        Ok(items)
    }

    /// `provides`: names (identifiers) the runtime puts in the patched module.
    fn provided(&self, path: &[Seg], value: &Value) -> Result<Vec<Spanned<String>>, RuleError> {
        let items = self.strings(path, "provides", value)?;
        if let Some(bad) = items
            .iter()
            .find(|n| !crate::rules::convert::is_identifier(&n.value))
        {
            return Err(self.invalid(
                path,
                "provides",
                format!("`{}` is not a Python name", bad.value),
            ));
        }
        Ok(items)
    }

    /// `reached_from`: dotted names of functions, methods or classes (`pkg.mod.Class.method`).
    fn entries(&self, path: &[Seg], value: &Value) -> Result<Vec<Spanned<String>>, RuleError> {
        let items = self.strings(path, "reached_from", value)?;
        if let Some(bad) = items.iter().find(|n| {
            n.value.split('.').count() < 2
                || !n.value.split('.').all(crate::rules::convert::is_identifier)
        }) {
            return Err(self.invalid(
                path,
                "reached_from",
                format!(
                    "`{}` is not a dotted name of a function, method or class (`package.module.Class.method`)",
                    bad.value
                ),
            ));
        }
        Ok(items)
    }

    /// The error of a rule without the required `key`.
    fn missing(&self, path: &[Seg], key: &str) -> RuleError {
        let kind = RuleErrorKind::MissingKey {
            key: key.to_string(),
            within: "a rule".to_string(),
        };
        self.error(kind, self.spans.value(path))
    }

    /// `match` (required): its patterns and the actions its alternatives carry.
    #[allow(clippy::type_complexity)]
    fn match_parts(
        &self,
        path: &[Seg],
        map: &Mapping,
        g: &mut Gather,
    ) -> (Option<Vec<Snippet>>, Option<Vec<Option<Action>>>) {
        let Some(value) = map.get("match") else {
            g.ok::<()>(Err(self.missing(path, "match")));
            return (None, None);
        };
        let Some((patterns, actions)) = g.ok(self.branches(&key_path(path, "match"), value)) else {
            return (None, None);
        };
        let actions = match map.get("action") {
            None => g.ok(self.every_branch_acts(path, actions)),
            // A pin's alternatives would edit while reports call the rule a pin.
            Some(Value::Mapping(rule_action))
                if rule_action.contains_key("check") && actions.iter().any(Option::is_some) =>
            {
                let at = key_path(path, "action");
                g.ok::<()>(Err(self.invalid(
                    &at,
                    "action",
                    "a `check` rule edits nothing: its alternatives cannot carry actions (make the edits a rule of their own)",
                )));
                None
            }
            Some(_) => Some(actions),
        };
        (Some(patterns), actions)
    }

    /// `match`: a pattern, or `{any: [...]}` whose items are patterns or `{match: P, action:
    /// A}` — an alternative with its own action (its own template, seeing what it binds).
    /// The patterns, and each one's own action (all `None` when none carries one: empty).
    fn branches(
        &self,
        path: &[Seg],
        value: &Value,
    ) -> Result<(Vec<Snippet>, Vec<Option<Action>>), RuleError> {
        let items = match value {
            Value::Mapping(map) => match map.get("any") {
                Some(Value::Sequence(items)) => items,
                _ => return Ok((self.alternatives(path, "match", value)?, vec![])),
            },
            _ => return Ok((self.alternatives(path, "match", value)?, vec![])),
        };
        if !items.iter().any(|item| matches!(item, Value::Mapping(_))) {
            return Ok((self.alternatives(path, "match", value)?, vec![]));
        }
        let any_path = key_path(path, "any");
        let mut patterns = Vec::new();
        let mut actions = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let at = super::child(&any_path, Seg::Index(i));
            let Value::Mapping(map) = item else {
                patterns.push(self.snippet(&at, "match", item)?);
                actions.push(None);
                continue;
            };
            self.check_keys(&at, map, &["match", "action"], "an alternative of `match`")?;
            let Some(pattern) = map.get("match") else {
                let kind = RuleErrorKind::MissingKey {
                    key: "match".into(),
                    within: "an alternative of `match`".into(),
                };
                return Err(self.error(kind, self.spans.value(&at)));
            };
            patterns.push(self.snippet(&key_path(&at, "match"), "match", pattern)?);
            let action = (map.get("action"))
                .map(|a| self.action(&key_path(&at, "action"), a))
                .transpose()?;
            // A check asserts for the whole rule, and a rename's output is replayed for every
            // rule after it: neither is one alternative's.
            if let Some(a) = action
                .as_ref()
                .filter(|a| a.is_check() || a.name() == "rename")
            {
                return Err(self.invalid(
                    &key_path(&at, "action"),
                    "action",
                    format!("an alternative's own action edits at its match: `{}` acts for the whole rule, give it as the rule's `action`", a.name()),
                ));
            }
            actions.push(action);
        }
        Ok((patterns, actions))
    }

    /// Without a rule-level `action`, each alternative must carry one: one that does not would
    /// silently become a `check`.
    fn every_branch_acts(
        &self,
        path: &[Seg],
        actions: Vec<Option<Action>>,
    ) -> Result<Vec<Option<Action>>, RuleError> {
        if actions.is_empty() || actions.iter().all(Option::is_some) {
            return Ok(actions);
        }
        let lacking = actions.iter().position(Option::is_none).unwrap_or(0);
        let at = super::child(
            &key_path(&key_path(path, "match"), "any"),
            Seg::Index(lacking),
        );
        Err(self.invalid(
            &at,
            "match",
            "this alternative has no `action` and the rule has none: give it one, or give the rule an `action` for the alternatives without their own",
        ))
    }
}
