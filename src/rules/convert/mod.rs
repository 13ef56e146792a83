//! Turns a loaded document (a value plus its span index) into rules, checking the schema.
//!
//! Both syntaxes end here: YAML through serde_yaml, the DSL through its own parser, so a
//! misspelt key or a bad specifier is reported the same way whichever syntax it was written in.

use std::str::FromStr;

use serde_yaml::Value;

use super::Syntax;
use super::action::{ArgReader, action_names, action_spec};
use super::error::{RuleError, RuleErrorKind, did_you_mean};
use super::model::{Action, Expect, Phase, Policy, Position, Rule, Spanned};
pub(crate) use super::reader::{Cx, child, gloss, key_path};
use super::spans::{Path, Seg, SpanIndex};
use crate::source::SourceFile;

/// The keys a rule may have.
pub const RULE_KEYS: &[&str] = &[
    "id",
    "description",
    "requires",
    "fixed_upstream",
    "group",
    "family",
    "phase",
    "files",
    "inside",
    "match",
    "unless",
    "not_inside",
    "at",
    "after",
    "where",
    "action",
    "expect",
    "on_miss",
    "on_refuse",
    "when",
    "preserve_lines",
    "ordered",
    "tests",
    "imports",
    "provides",
    "reached_from",
    "effect",
];
/// The keys of `inside`.
pub const INSIDE_KEYS: &[&str] = &["class", "function", "loop"];

/// What reading rule text gave: the rules that read, every error of the others, and of
/// those the ones that could still be put together (for lint only: never run them).
#[derive(Debug, Default)]
pub struct ReadRules {
    /// Rules that read without error.
    pub rules: Vec<Rule>,
    /// Every error, in reading order.
    pub errors: Vec<RuleError>,
    /// Rules with errors, put together with defaults where their parts failed.
    pub partial: Vec<Rule>,
}

/// Reads every rule of one document.
pub fn rules_from_document(
    file: &SourceFile,
    value: &Value,
    spans: &SpanIndex,
    syntax: Syntax,
    read: &mut ReadRules,
) {
    let actions = action_names();
    let cx = Cx::new(file, spans, syntax, RULE_KEYS, &actions);
    let mut take = |rule: Result<Rule, (Vec<RuleError>, Option<Rule>)>| match rule {
        Ok(rule) => read.rules.push(rule),
        Err((errors, partial)) => {
            read.errors.extend(errors);
            read.partial.extend(partial);
        }
    };
    let wrong = |path: &[Seg], expected: &str, found: &Value| {
        Err((vec![cx.wrong_type(path, "rule", expected, found)], None))
    };
    match value {
        Value::Mapping(map) => take(cx.rule(Vec::new(), map)),
        Value::Sequence(items) => {
            for (i, item) in items.iter().enumerate() {
                let path = vec![Seg::Index(i)];
                take(match item {
                    Value::Mapping(map) => cx.rule(path, map),
                    other => wrong(&path, "a mapping", other),
                });
            }
        }
        other => take(wrong(&[], "a mapping (or a list of them)", other)),
    }
}

/// An optional key read by `read`, or its default where it is absent.
fn optional<T: Default>(
    field: Option<(Path, &Value)>,
    read: impl FnOnce(&[Seg], &Value) -> Result<T, RuleError>,
) -> Result<T, RuleError> {
    Ok(field
        .map(|(p, v)| read(&p, v))
        .transpose()?
        .unwrap_or_default())
}

impl Cx<'_> {
    /// A rule id: one word the DSL's `rule ID` can write too, so one rule reads the same in
    /// both syntaxes.
    fn id(&self, path: &[Seg], value: &Value) -> Result<Spanned<String>, RuleError> {
        let id = self.string(path, "id", value)?;
        let id_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
        if id.value.is_empty() || !id.value.chars().all(id_char) {
            return Err(self.invalid(
                path,
                "id",
                "an id is one word of letters, digits, `_`, `-` and `.`",
            ));
        }
        Ok(id)
    }

    /// The `when` probes.
    /// A failure policy (`on_miss`, `on_refuse`).
    fn policy(&self, p: &[Seg], key: &str, value: &Value) -> Result<Policy, RuleError> {
        let s = self.string(p, key, value)?;
        match s.value.as_str() {
            "error" => Ok(Policy::Error),
            "warn" => Ok(Policy::Warn),
            "skip" => Ok(Policy::Skip),
            other => {
                let e = self.invalid(p, key, format!("`{other}` is not error, warn or skip"));
                Err(match did_you_mean(other, &["error", "warn", "skip"]) {
                    Some(s) => e.with_help(format!("did you mean `{s}`?")),
                    None => e,
                })
            }
        }
    }

    /// `at`: one place or a list of them, each `top_level` or `last`.
    pub(super) fn positions(&self, p: &[Seg], value: &Value) -> Result<Vec<Position>, RuleError> {
        let names: Vec<&str> = Position::ALL.iter().map(|(n, _)| *n).collect();
        let mut at = Vec::new();
        for name in self.strings(p, "at", value)? {
            match Position::ALL.iter().find(|(n, _)| *n == name.value) {
                Some((_, position)) if !at.contains(position) => at.push(*position),
                Some(_) => {}
                None => {
                    let why = format!("`{}` is not {}", name.value, names.join(" or "));
                    let e = RuleError::new(
                        RuleErrorKind::InvalidValue {
                            key: "at".into(),
                            reason: why,
                        },
                        self.file,
                        name.span.clone(),
                    );
                    return Err(match did_you_mean(&name.value, &names) {
                        Some(s) => e.with_help(format!("did you mean `{s}`?")),
                        None => e,
                    });
                }
            }
        }
        Ok(at)
    }

    pub(super) fn phase(&self, path: &[Seg], value: &Value) -> Result<Phase, RuleError> {
        let name = self.string(path, "phase", value)?;
        Phase::from_str(&name.value).map_err(|()| {
            let names: Vec<&str> = Phase::ALL.iter().map(|p| p.name()).collect();
            let error = self.invalid(
                path,
                "phase",
                format!("`{}` is not a phase ({})", name.value, names.join(", ")),
            );
            match did_you_mean(&name.value, &names) {
                Some(s) => error.with_help(format!("did you mean `{s}`?")),
                None => error,
            }
        })
    }

    fn globs(&self, path: &[Seg], value: &Value) -> Result<Vec<Spanned<String>>, RuleError> {
        let globs = self.strings(path, "files", value)?;
        for (i, glob) in globs.iter().enumerate() {
            if let Err(e) = globset::Glob::new(&glob.value) {
                let p = if matches!(value, Value::Sequence(_)) {
                    child(path, Seg::Index(i))
                } else {
                    path.to_vec()
                };
                return Err(self.invalid(&p, "files", e.kind().to_string()));
            }
        }
        Ok(globs)
    }

    fn action(&self, path: &[Seg], value: &Value) -> Result<Action, RuleError> {
        let (name, args) = match value {
            Value::Mapping(map) if map.len() == 1 => {
                let (k, v) = map.iter().next().expect("one entry");
                match k.as_str() {
                    Some(name) => (name.to_string(), v),
                    None => return Err(self.wrong_type(path, "action", "an action name", k)),
                }
            }
            Value::Mapping(_) => {
                return Err(self.invalid(
                    path,
                    "action",
                    "give exactly one action, e.g. `replace: \"...\"`",
                ));
            }
            other => {
                return Err(self.wrong_type(path, "action", "a mapping of one action", other));
            }
        };
        let p = key_path(path, &name);
        let Some(spec) = action_spec(&name) else {
            let error = self.error(
                RuleErrorKind::UnknownAction { name: name.clone() },
                self.spans.key(&p),
            );
            let names = action_names();
            return Err(match did_you_mean(&name, &names) {
                Some(s) => error.with_help(format!("did you mean `{s}`?{}", gloss(s, ""))),
                None => error.with_help(format!("actions: {}", names.join(", "))),
            });
        };
        let args = spec.read(&ArgReader::new(self, p, &name, args))?;
        Ok(Action {
            name: spec.name(),
            args,
        })
    }

    /// The action (a rule without one only checks: a pin) and `expect`, which a check's
    /// `exists: true` sets to at least one match and `absent: true` to none, unless written.
    fn action_and_expect(
        &self,
        action: Option<(Path, &Value)>,
        expect: Option<(Path, &Value)>,
    ) -> Result<(Action, Option<Expect>), RuleError> {
        let action = match action {
            Some((p, v)) => self.action(&p, v)?,
            None => Action::check(),
        };
        let mut expect = expect.map(|(p, v)| self.expect(&p, v)).transpose()?;
        if expect.is_none() && action.args.field("exists").is_some() {
            expect = Some(Expect::at_least(1));
        }
        if expect.is_none() && action.args.field("absent").is_some() {
            expect = Some(Expect::exactly(0));
        }
        Ok((action, expect))
    }

    fn expect(&self, path: &[Seg], value: &Value) -> Result<Expect, RuleError> {
        match value {
            Value::Number(_) => {
                let n = self.count(path, "expect", value)?;
                Ok(Expect {
                    min: n,
                    max: Some(n),
                    per: None,
                    run: false,
                })
            }
            Value::Mapping(map) => {
                self.check_keys(path, map, &["min", "max", "count", "per"], "`expect`")?;
                let bound = |key: &str| {
                    map.get(key)
                        .map(|v| self.count(&key_path(path, key), key, v))
                        .transpose()
                };
                let count = bound("count")?;
                if count.is_some() && (map.contains_key("min") || map.contains_key("max")) {
                    return Err(self.invalid(
                        path,
                        "expect",
                        "give `count`, or `min`/`max`, not both",
                    ));
                }
                let min = count.or(bound("min")?).unwrap_or(0);
                let max = count.or(bound("max")?);
                let run = map.get("per").and_then(Value::as_str) == Some("run");
                let per = map
                    .get("per")
                    .filter(|_| !run)
                    .map(|v| self.per(&key_path(path, "per"), "per", v))
                    .transpose()?;
                if let Some(max) = max
                    && max < min
                {
                    return Err(self.invalid(
                        path,
                        "expect",
                        format!("max {max} is below min {min}"),
                    ));
                }
                Ok(Expect { min, max, per, run })
            }
            other => Err(self.wrong_type(path, "expect", "a count or {min, max}", other)),
        }
    }
}

/// Whether `s` is a PEP 508 distribution name (what both rule syntaxes can write).
pub fn is_package_name(s: &str) -> bool {
    let alnum = |c: char| c.is_ascii_alphanumeric();
    s.starts_with(alnum)
        && s.ends_with(alnum)
        && s.chars().all(|c| alnum(c) || matches!(c, '.' | '_' | '-'))
}

/// Whether `s` names a callee for a signature lookup: `Class.method` or `function`, where a
/// part may be a metavariable the match bound (`$CLS.forward`).
pub fn is_signature_name(s: &str) -> bool {
    s.split('.').count() <= 2
        && s.split('.')
            .all(|p| is_identifier(p.strip_prefix('$').unwrap_or(p)))
}

/// What to write where `is_signature_name` does not hold.
pub const SIGNATURE_NAME: &str =
    "write `Class.method` or `function`, where a part may be a metavariable (`$CLS.forward`)";

pub use crate::python::is_identifier;

/// Whether `name` (without its `$`) is a metavariable's name: capitals, digits and `_`.
pub fn is_metavar_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// The useful line of a regex error ("unclosed group"), not its "regex parse error:" header.
fn regex_reason(e: &regex::Error) -> String {
    let text = e.to_string();
    text.lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("error: "))
        .map_or_else(|| first_line(&text), str::to_string)
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or(s).trim().to_string()
}

mod effect;
mod requires;
mod rule;
mod scope;
#[cfg(test)]
mod tests;
mod when;
