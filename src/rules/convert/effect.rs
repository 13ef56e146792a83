//! `effect`: what the patch must change in what the code computes — Python run on a case's
//! input and on its output by `regraft test`.

use serde_yaml::Value;

use super::{Cx, key_path};
use crate::rules::error::RuleError;
use crate::rules::model::{Effect, Spanned};
use crate::rules::spans::Seg;

/// The keys of `effect`.
pub const EFFECT_KEYS: &[&str] = &["run", "value", "original", "patched"];

impl Cx<'_> {
    /// `effect: {run: STATEMENTS, value: EXPR, original: EXPR, patched: EXPR}`: `value`
    /// required; each piece read as CPython reads it now, so a typo is found when the rule
    /// loads, not when a case runs.
    pub(super) fn effect(&self, path: &[Seg], value: &Value) -> Result<Effect, RuleError> {
        let Value::Mapping(map) = value else {
            return Err(self.wrong_type(path, "effect", "a mapping {value: ..., ...}", value));
        };
        self.check_keys(path, map, EFFECT_KEYS, "`effect`")?;
        let piece = |key: &str, statements: bool| -> Result<Option<Spanned<String>>, RuleError> {
            let Some(v) = map.get(key) else {
                return Ok(None);
            };
            let at = key_path(path, key);
            // `original: 2.0` reads as a number in YAML: its text is the Python literal.
            let text = match v {
                Value::Number(n) => Spanned::new(n.to_string(), self.spans.value(&at)),
                Value::Bool(b) => Spanned::new(
                    if *b { "True" } else { "False" }.into(),
                    self.spans.value(&at),
                ),
                _ => self.string(&at, key, v)?,
            };
            // An expression is read as the one item of a parenthesized group: a statement
            // there does not parse.
            let module = if statements {
                format!("{}\n", text.value)
            } else {
                format!("(\n{}\n)\n", text.value)
            };
            if let Some(e) = crate::python::cpython::errors(&module).first() {
                let what = if statements {
                    "Python statements"
                } else {
                    "a Python expression"
                };
                return Err(self.invalid(&at, key, format!("must be {what}: {}", e.message)));
            }
            Ok(Some(text))
        };
        let run = piece("run", true)?;
        let Some(compared) = piece("value", false)? else {
            return Err(self.invalid(
                path,
                "effect",
                "give `value`: the expression whose value the patch must change",
            ));
        };
        Ok(Effect {
            run,
            value: compared,
            original: piece("original", false)?,
            patched: piece("patched", false)?,
        })
    }
}
