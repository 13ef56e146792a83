//! Reading one rule document's values: the file, where each value stands and the syntax, and
//! the typed errors every key reports in the same words. Below both the rule converter and the
//! actions' argument readers, which each read values through it.

use std::ops::Range;

use serde_yaml::{Mapping, Value};

use super::Syntax;
use super::error::{RuleError, RuleErrorKind, did_you_mean};
use super::spans::{Path, Seg, Snippet, SpanIndex, Spanned};
use crate::source::SourceFile;

/// What reading one document needs: the file, where each value stands, and the syntax.
pub(crate) struct Cx<'a> {
    pub(crate) file: &'a SourceFile,
    pub(crate) spans: &'a SpanIndex,
    syntax: Syntax,
    /// The keys a rule may have and the names of the actions: an unknown key at the top of a
    /// rule may be an action name written there (given as data, so this floor names no
    /// action).
    top: (&'a [&'a str], &'a [&'static str]),
}

impl<'a> Cx<'a> {
    /// A reader of one document of `file`; `rule_keys` and `actions` serve the did-you-mean
    /// of unknown keys at the top of a rule.
    pub(crate) fn new(
        file: &'a SourceFile,
        spans: &'a SpanIndex,
        syntax: Syntax,
        rule_keys: &'a [&'a str],
        actions: &'a [&'static str],
    ) -> Self {
        Self {
            file,
            spans,
            syntax,
            top: (rule_keys, actions),
        }
    }
}

fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

/// `path` followed by `seg`.
pub(crate) fn child(path: &[Seg], seg: Seg) -> Path {
    let mut p = path.to_vec();
    p.push(seg);
    p
}

/// `path` followed by the key `key`.
pub(crate) fn key_path(path: &[Seg], key: &str) -> Path {
    child(path, Seg::Key(key.to_string()))
}

impl Cx<'_> {
    pub(crate) fn error(&self, kind: RuleErrorKind, span: Range<usize>) -> RuleError {
        RuleError::new(kind, self.file, span)
    }

    pub(crate) fn wrong_type(
        &self,
        path: &[Seg],
        key: &str,
        expected: &str,
        found: &Value,
    ) -> RuleError {
        self.error(
            RuleErrorKind::WrongType {
                key: key.to_string(),
                expected: expected.to_string(),
                found: describe(found).to_string(),
            },
            self.spans.value(path),
        )
    }

    pub(crate) fn invalid(&self, path: &[Seg], key: &str, reason: impl Into<String>) -> RuleError {
        self.error(
            RuleErrorKind::InvalidValue {
                key: key.to_string(),
                reason: reason.into(),
            },
            self.spans.value(path),
        )
    }

    /// Rejects keys outside `allowed`, suggesting the closest one.
    pub(crate) fn check_keys(
        &self,
        path: &[Seg],
        map: &Mapping,
        allowed: &[&str],
        within: &str,
    ) -> Result<(), RuleError> {
        match self
            .unknown_keys(path, map, allowed, within)
            .into_iter()
            .next()
        {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Every key outside `allowed`, each suggesting the closest allowed one.
    pub(crate) fn unknown_keys(
        &self,
        path: &[Seg],
        map: &Mapping,
        allowed: &[&str],
        within: &str,
    ) -> Vec<RuleError> {
        let mut errors = Vec::new();
        for key in map.keys() {
            let Some(name) = key.as_str() else {
                errors.push(self.wrong_type(path, within, "a mapping with text keys", key));
                continue;
            };
            if !allowed.contains(&name) {
                errors.push(self.unknown_key(path, name, allowed, within));
            }
        }
        errors
    }

    fn unknown_key(&self, path: &[Seg], name: &str, allowed: &[&str], within: &str) -> RuleError {
        let error = self.error(
            RuleErrorKind::UnknownKey {
                key: name.to_string(),
                within: within.to_string(),
            },
            self.spans.key(&key_path(path, name)),
        );
        // At the top of a rule an action name is a likely slip too: the DSL writes
        // actions bare, YAML under `action:`.
        let (rule_keys, actions) = self.top;
        let mut candidates = allowed.to_vec();
        if allowed == rule_keys {
            candidates.extend_from_slice(actions);
        }
        match did_you_mean(name, &candidates) {
            Some(s) if actions.contains(&s) && self.syntax == Syntax::Yaml => error.with_help(
                format!("actions go under `action:`, e.g. `action: {{{s}: ...}}`"),
            ),
            Some(s) if actions.contains(&s) => {
                error.with_help(format!("did you mean the action `{s}`?{}", gloss(s, "")))
            }
            Some(s) => error.with_help(format!("did you mean `{s}`?{}", gloss(s, within))),
            None => error.with_help(format!("expected one of: {}", allowed.join(", "))),
        }
    }

    pub(crate) fn string(
        &self,
        path: &[Seg],
        key: &str,
        value: &Value,
    ) -> Result<Spanned<String>, RuleError> {
        match value {
            Value::String(s) => Ok(Spanned::new(s.clone(), self.spans.value(path))),
            other => Err(self.wrong_type(path, key, "a string", other)),
        }
    }

    pub(crate) fn snippet(
        &self,
        path: &[Seg],
        key: &str,
        value: &Value,
    ) -> Result<Snippet, RuleError> {
        let text = self.string(path, key, value)?;
        let raw = self.file.text().get(text.span.clone()).unwrap_or("");
        Ok(Snippet::new(text.value, raw, text.span))
    }

    /// A pattern, or `{any: [P1, P2, ...]}`: alternatives tried in order (at least one).
    pub(crate) fn alternatives(
        &self,
        path: &[Seg],
        key: &str,
        value: &Value,
    ) -> Result<Vec<Snippet>, RuleError> {
        let Value::Mapping(map) = value else {
            return Ok(vec![self.snippet(path, key, value)?]);
        };
        self.check_keys(path, map, &["any"], &format!("`{key}`"))?;
        let any_path = child(path, Seg::Key("any".into()));
        match map.get("any") {
            Some(Value::Sequence(items)) if !items.is_empty() => items
                .iter()
                .enumerate()
                .map(|(i, item)| self.snippet(&child(&any_path, Seg::Index(i)), key, item))
                .collect(),
            Some(Value::Sequence(_)) => {
                Err(self.invalid(&any_path, "any", "list at least one pattern"))
            }
            Some(other) => Err(self.wrong_type(&any_path, "any", "a list of patterns", other)),
            None => Err(self.wrong_type(path, key, "a pattern or {any: [...]}", value)),
        }
    }

    pub(crate) fn strings(
        &self,
        path: &[Seg],
        key: &str,
        value: &Value,
    ) -> Result<Vec<Spanned<String>>, RuleError> {
        match value {
            Value::String(_) => Ok(vec![self.string(path, key, value)?]),
            Value::Sequence(items) => items
                .iter()
                .enumerate()
                .map(|(i, item)| self.string(&child(path, Seg::Index(i)), key, item))
                .collect(),
            other => Err(self.wrong_type(path, key, "a string or a list of strings", other)),
        }
    }

    pub(crate) fn count(&self, path: &[Seg], key: &str, value: &Value) -> Result<u64, RuleError> {
        match value {
            Value::Number(n) => n
                .as_u64()
                .ok_or_else(|| self.invalid(path, key, "must be a whole number, 0 or more")),
            other => Err(self.wrong_type(path, key, "a whole number", other)),
        }
    }
}

/// The reference's summary of a suggested key or action, to say what it is for beside its
/// name (`within` is the key it stands under, `inside` for `inside.class`).
pub(crate) fn gloss(name: &str, within: &str) -> String {
    let scoped = format!("{within}.{name}");
    super::reference::entry(&scoped)
        .or_else(|| super::reference::entry(name))
        .map_or_else(String::new, |e| format!(" — {}", e.summary))
}
