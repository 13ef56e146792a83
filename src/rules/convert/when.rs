//! Reading `when`: the probes that decide whether a rule runs on a file or at a site.

use serde_yaml::Value;

use super::{Cx, key_path};
use crate::rules::convert::{SIGNATURE_NAME, is_identifier, is_signature_name};
use crate::rules::error::RuleError;
use crate::rules::model::{Per, SignatureProbe, Spanned, When};
use crate::rules::spans::Seg;

impl Cx<'_> {
    pub(super) fn when(&self, p: &[Seg], value: &Value) -> Result<When, RuleError> {
        let Value::Mapping(m) = value else {
            return Err(self.wrong_type(p, "when", "a mapping of probes", value));
        };
        let keys = [
            "has",
            "lacks",
            "contains",
            "lacks_text",
            "scope",
            "signature",
        ];
        self.check_keys(p, m, &keys, "`when`")?;
        let code = |k: &str| {
            m.get(k)
                .map(|v| self.snippet(&key_path(p, k), k, v))
                .transpose()
        };
        let text = |k: &str| {
            m.get(k)
                .map(|v| self.string(&key_path(p, k), k, v))
                .transpose()
        };
        let when = When {
            has: code("has")?,
            lacks: code("lacks")?,
            contains: text("contains")?,
            lacks_text: text("lacks_text")?,
            scope: m
                .get("scope")
                .map(|v| self.per(&key_path(p, "scope"), "scope", v))
                .transpose()?,
            signature: m
                .get("signature")
                .map(|v| self.signature_probe(&key_path(p, "signature"), v))
                .transpose()?,
        };
        if when.scope.is_some() && when.has.is_none() && when.lacks.is_none() {
            return Err(self.invalid(
                &key_path(p, "scope"),
                "scope",
                "`scope` says where `has` or `lacks` look: give one of them",
            ));
        }
        Ok(when)
    }

    /// `class` or `function`.
    pub(super) fn per(&self, p: &[Seg], key: &str, value: &Value) -> Result<Per, RuleError> {
        match self.string(p, key, value)?.value.as_str() {
            "class" => Ok(Per::Class),
            "function" => Ok(Per::Function),
            other => Err(self.invalid(p, key, format!("`{other}` is not class or function"))),
        }
    }

    /// `{of: Class.method, has: [...], lacks: [...], order: [...]}`.
    pub(super) fn signature_probe(
        &self,
        p: &[Seg],
        value: &Value,
    ) -> Result<SignatureProbe, RuleError> {
        let Value::Mapping(m) = value else {
            return Err(self.wrong_type(p, "signature", "a mapping with `of`", value));
        };
        self.check_keys(p, m, &["of", "has", "lacks", "order"], "`signature`")?;
        let Some(of_value) = m.get("of") else {
            return Err(self.invalid(p, "signature", "give the callee: `of: Class.method`"));
        };
        let of_path = key_path(p, "of");
        let of = self.string(&of_path, "of", of_value)?;
        if !is_signature_name(&of.value) {
            return Err(self.invalid(&of_path, "of", SIGNATURE_NAME));
        }
        let names = |k: &str| -> Result<Vec<Spanned<String>>, RuleError> {
            let Some(v) = m.get(k) else {
                return Ok(Vec::new());
            };
            let kp = key_path(p, k);
            let names = self.strings(&kp, k, v)?;
            match names.iter().find(|n| !is_identifier(&n.value)) {
                Some(bad) => Err(self.error(
                    crate::rules::error::RuleErrorKind::InvalidValue {
                        key: k.to_string(),
                        reason: format!("`{}` is not a parameter name", bad.value),
                    },
                    bad.span.clone(),
                )),
                None => Ok(names),
            }
        };
        let probe = SignatureProbe {
            of,
            has: names("has")?,
            lacks: names("lacks")?,
            order: names("order")?,
        };
        if probe.has.is_empty() && probe.lacks.is_empty() && probe.order.is_empty() {
            return Err(self.invalid(p, "signature", "give `has`, `lacks` or `order`"));
        }
        Ok(probe)
    }
}
