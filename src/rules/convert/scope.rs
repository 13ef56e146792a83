//! Reading `inside`: the class, function and loop a rule looks in.

use serde_yaml::Value;

use super::{Cx, INSIDE_KEYS, key_path, regex_reason};
use crate::rules::error::{RuleError, RuleErrorKind};
use crate::rules::model::{Constraint, Inside, NameFilter, RegexSource, ScopeFilter, Spanned};
use crate::rules::spans::Seg;

impl Cx<'_> {
    pub(super) fn inside(&self, path: &[Seg], value: &Value) -> Result<Inside, RuleError> {
        let Value::Mapping(map) = value else {
            return Err(self.wrong_type(path, "inside", "a mapping", value));
        };
        self.check_keys(path, map, INSIDE_KEYS, "`inside`")?;
        let scope = |key: &str| {
            map.get(key)
                .map(|v| self.scope_filter(&key_path(path, key), key, v))
                .transpose()
        };
        Ok(Inside {
            class: scope("class")?,
            function: scope("function")?,
            loop_header: map
                .get("loop")
                .map(|v| self.alternatives(&key_path(path, "loop"), "loop", v))
                .transpose()?
                .unwrap_or_default(),
        })
    }

    /// `inside.class` or `inside.function`: a name, or `{name | regex, has, lacks, extends}`.
    fn scope_filter(&self, p: &[Seg], key: &str, v: &Value) -> Result<ScopeFilter, RuleError> {
        let within = format!("`inside.{key}`");
        let m = match v {
            Value::String(_) => {
                return Ok(ScopeFilter::named(NameFilter::Exact(
                    self.string(p, key, v)?,
                )));
            }
            Value::Mapping(m) => m,
            other => return Err(self.wrong_type(p, key, "a name or {regex: ...}", other)),
        };
        let allowed: &[&str] = if key == "class" {
            &["name", "regex", "has", "count", "lacks", "extends"]
        } else {
            &["name", "regex", "has", "count", "lacks"]
        };
        self.check_keys(p, m, allowed, &within)?;
        let field = |k: &str| m.get(k).map(|v| (key_path(p, k), v));
        let mut filter = ScopeFilter::default();
        if let Some((np, v)) = field("name") {
            filter.name = Some(NameFilter::Exact(self.string(&np, "name", v)?));
        }
        if let Some((rp, re)) = field("regex") {
            if filter.name.is_some() {
                return Err(self.invalid(&rp, "regex", "give `name` or `regex`, not both"));
            }
            let re = self.string(&rp, "regex", re)?;
            let compiled = regex::Regex::new(&format!("^(?:{})$", re.value))
                .map_err(|e| self.invalid(&rp, "regex", regex_reason(&e)))?;
            filter.name = Some(NameFilter::Regex(Spanned::new(compiled, re.span)));
        }
        filter.has = field("has")
            .map(|(hp, v)| self.snippet(&hp, "has", v))
            .transpose()?;
        if let Some((cp, v)) = field("count") {
            let n = self.count(&cp, "count", v)?;
            if filter.has.is_none() || n == 0 {
                return Err(self.invalid(
                    &cp,
                    "count",
                    "`count` is how many matches of `has` the scope holds, from 1 (none is `lacks`)",
                ));
            }
            filter.count = Some(n);
        }
        filter.lacks = field("lacks")
            .map(|(lp, v)| self.alternatives(&lp, "lacks", v))
            .transpose()?
            .unwrap_or_default();
        filter.extends = field("extends")
            .map(|(ep, v)| self.string(&ep, "extends", v))
            .transpose()?;
        if filter.name.is_none() && !filter.has_predicates() {
            return Err(self.error(
                RuleErrorKind::MissingKey {
                    key: "regex".into(),
                    within,
                },
                self.spans.value(p),
            ));
        }
        Ok(filter)
    }

    /// `where`: metavariable name (with or without `$`) → `{regex, not_regex, kind, not_kind, has}`.
    pub(super) fn constraints(
        &self,
        path: &[Seg],
        value: &Value,
    ) -> Result<Vec<(Spanned<String>, Constraint)>, RuleError> {
        let Value::Mapping(map) = value else {
            return Err(self.wrong_type(
                path,
                "where",
                "a mapping of metavariable to conditions",
                value,
            ));
        };
        let mut out = Vec::new();
        for (key, conditions) in map {
            let Some(name) = key.as_str() else {
                return Err(self.wrong_type(path, "where", "a metavariable name", key));
            };
            let p = key_path(path, name);
            let bare = name.strip_prefix('$').unwrap_or(name);
            if !super::is_metavar_name(bare) {
                return Err(self.invalid(
                    &p,
                    "where",
                    format!("`{name}` is not a metavariable name such as `$X`"),
                ));
            }
            let Value::Mapping(m) = conditions else {
                return Err(self.wrong_type(&p, name, "a mapping of conditions", conditions));
            };
            let within = format!("`where.{bare}`");
            self.check_keys(
                &p,
                m,
                &["regex", "not_regex", "kind", "not_kind", "has"],
                &within,
            )?;
            let field = |k: &str| m.get(k).map(|v| (key_path(&p, k), v));
            let regex = |k: &str| -> Result<Option<Spanned<RegexSource>>, RuleError> {
                let Some((rp, v)) = field(k) else {
                    return Ok(None);
                };
                let text = self.string(&rp, k, v)?;
                let compiled = regex::Regex::new(&text.value)
                    .map_err(|e| self.invalid(&rp, k, regex_reason(&e)))?;
                Ok(Some(Spanned::new(RegexSource(compiled), text.span)))
            };
            let constraint = Constraint {
                regex: regex("regex")?,
                not_regex: regex("not_regex")?,
                kind: field("kind")
                    .map(|(kp, v)| self.strings(&kp, "kind", v))
                    .transpose()?
                    .unwrap_or_default(),
                not_kind: field("not_kind")
                    .map(|(kp, v)| self.strings(&kp, "not_kind", v))
                    .transpose()?
                    .unwrap_or_default(),
                has: field("has")
                    .map(|(hp, v)| self.snippet(&hp, "has", v))
                    .transpose()?,
            };
            let span = self.spans.key(&p);
            out.push((Spanned::new(bare.to_string(), span), constraint));
        }
        Ok(out)
    }
}
