//! Reading version requirements: `requires` and `fixed_upstream`.

use std::str::FromStr;

use pep440_rs::VersionSpecifiers;
use serde_yaml::Value;

use super::{Cx, first_line, is_package_name, key_path};
use crate::rules::error::{RuleError, RuleErrorKind};
use crate::rules::model::{Requirement, Spanned, normalize_package};
use crate::rules::spans::Seg;

impl Cx<'_> {
    /// `requires` or `fixed_upstream` (`key`): package → PEP 440 specifiers.
    pub(super) fn requires(
        &self,
        path: &[Seg],
        key: &str,
        value: &Value,
    ) -> Result<Vec<Requirement>, RuleError> {
        let Value::Mapping(map) = value else {
            return Err(self.wrong_type(
                path,
                key,
                "a mapping of package to version specifiers",
                value,
            ));
        };
        let mut out = Vec::new();
        for (name, spec) in map {
            let Some(package) = name.as_str() else {
                return Err(self.wrong_type(path, key, "a package name", name));
            };
            let p = key_path(path, package);
            if !is_package_name(package) {
                return Err(self
                    .error(
                        RuleErrorKind::InvalidValue {
                            key: key.to_string(),
                            reason: format!("`{package}` is not a package name"),
                        },
                        self.spans.key(&p),
                    )
                    .with_help(
                        "a package name is letters, digits, `.`, `_` and `-`, starting and \
                         ending with a letter or digit (PEP 508)",
                    ));
            }
            let text = match spec {
                Value::String(s) => s.clone(),
                Value::Number(n) => {
                    return Err(self
                        .wrong_type(&p, package, "a quoted specifier", spec)
                        .with_help(format!(
                            "write the operator too, and quote it: \">={n}\" or \"=={n}\""
                        )));
                }
                other => return Err(self.wrong_type(&p, package, "a specifier string", other)),
            };
            let specifiers = VersionSpecifiers::from_str(&text).map_err(|e| {
                self.error(
                    RuleErrorKind::Specifier {
                        package: package.to_string(),
                        reason: first_line(&e.to_string()),
                    },
                    self.spans.value(&p),
                )
                .with_help("PEP 440 specifiers look like \">=4.52,<5\" or \"~=4.57.0\"")
            })?;
            out.push(Requirement {
                package: Spanned::new(normalize_package(package), self.spans.key(&p)),
                specifiers: Spanned::new(specifiers, self.spans.value(&p)),
            });
        }
        Ok(out)
    }
}
