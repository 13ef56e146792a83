//! Reading plain values of a rule: strings, pattern snippets, alternatives, lists, counts.

use serde_yaml::Value;

use super::{Cx, child};
use crate::rules::error::RuleError;
use crate::rules::model::{Snippet, Spanned};
use crate::rules::spans::Seg;

impl Cx<'_> {
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

    pub(super) fn count(&self, path: &[Seg], key: &str, value: &Value) -> Result<u64, RuleError> {
        match value {
            Value::Number(n) => n
                .as_u64()
                .ok_or_else(|| self.invalid(path, key, "must be a whole number, 0 or more")),
            other => Err(self.wrong_type(path, key, "a whole number", other)),
        }
    }
}
