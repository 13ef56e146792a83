//! Reading the test cases a rule carries (`tests:`).

use std::str::FromStr;

use serde_yaml::{Mapping, Value};

use super::convert::{Cx, child, is_package_name, key_path};
use super::error::{RuleError, RuleErrorKind};
use super::model::{TEST_ERROR_KINDS, TestCase, TestExpectation, normalize_package};
use super::spans::Seg;

/// The keys of a test case.
pub const TEST_KEYS: &[&str] = &[
    "name",
    "before",
    "with",
    "phase",
    "path",
    "unchanged",
    "error",
];

impl Cx<'_> {
    /// The test cases of a rule's `tests` list.
    pub(super) fn tests(&self, path: &[Seg], value: &Value) -> Result<Vec<TestCase>, RuleError> {
        let Value::Sequence(items) = value else {
            return Err(self.wrong_type(path, "tests", "a list of test cases", value));
        };
        let mut cases: Vec<TestCase> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let p = child(path, Seg::Index(i));
            let Value::Mapping(map) = item else {
                return Err(self.wrong_type(&p, "tests", "a test case mapping", item));
            };
            let case = self.test_case(&p, map, &cases)?;
            cases.push(case);
        }
        Ok(cases)
    }

    /// One test case, whose name must differ from those of `earlier`.
    fn test_case(
        &self,
        p: &[Seg],
        map: &Mapping,
        earlier: &[TestCase],
    ) -> Result<TestCase, RuleError> {
        self.check_keys(p, map, TEST_KEYS, "a test case")?;
        let get = |key: &str| map.get(key).map(|v| (key_path(p, key), v));
        let missing = |key: &str| {
            self.error(
                RuleErrorKind::MissingKey {
                    key: key.to_string(),
                    within: "a test case".into(),
                },
                self.spans.value(p),
            )
        };
        let name = match get("name") {
            Some((np, v)) => self.string(&np, "name", v)?,
            None => return Err(missing("name")),
        };
        if !name
            .value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            || name.value.is_empty()
        {
            return Err(self.invalid(
                &key_path(p, "name"),
                "name",
                "a test name is a file name: letters, digits, `-`, `_`, `.`",
            ));
        }
        if earlier.iter().any(|c| c.name.value == name.value) {
            return Err(self.invalid(
                &key_path(p, "name"),
                "name",
                format!("another test case is named `{}`", name.value),
            ));
        }
        let before = match get("before") {
            Some((bp, v)) => self.string(&bp, "before", v)?.value,
            None => return Err(missing("before")),
        };
        let versions = match get("with") {
            Some((wp, v)) => self.test_versions(&wp, v)?,
            None => Vec::new(),
        };
        let phase = get("phase").map(|(pp, v)| self.phase(&pp, v)).transpose()?;
        let path = get("path")
            .map(|(pp, v)| self.string(&pp, "path", v))
            .transpose()?
            .map(|s| s.value);
        let expectation = self.expectation(p, map)?;
        Ok(TestCase {
            name,
            before,
            versions,
            phase,
            path,
            expectation,
        })
    }

    /// A test case's `with`: package → quoted version.
    fn test_versions(&self, wp: &[Seg], v: &Value) -> Result<Vec<(String, String)>, RuleError> {
        let Value::Mapping(m) = v else {
            return Err(self.wrong_type(wp, "with", "a mapping of package to version", v));
        };
        let mut versions = Vec::new();
        for (k, ver) in m {
            let Some(package) = k.as_str() else {
                return Err(self.wrong_type(wp, "with", "a package name", k));
            };
            let vp = key_path(wp, package);
            if !is_package_name(package) {
                // Both syntaxes must be able to write it back (the DSL writes it bare).
                return Err(self.error(
                    RuleErrorKind::InvalidValue {
                        key: "with".to_string(),
                        reason: format!("`{package}` is not a package name"),
                    },
                    self.spans.key(&vp),
                ));
            }
            let Value::String(text) = ver else {
                return Err(self
                    .wrong_type(&vp, package, "a quoted version", ver)
                    .with_help(
                        "quote versions: \"4.57.6\" (4.50 and 4.5 are different versions)",
                    ));
            };
            if let Err(e) = pep440_rs::Version::from_str(text) {
                return Err(self.invalid(&vp, package, e.to_string()));
            }
            versions.push((normalize_package(package), text.clone()));
        }
        Ok(versions)
    }

    /// What a test case expects: `unchanged`, an `error` kind, or (by default) a snapshot.
    fn expectation(&self, p: &[Seg], map: &Mapping) -> Result<TestExpectation, RuleError> {
        let get = |key: &str| map.get(key).map(|v| (key_path(p, key), v));
        let unchanged = match get("unchanged") {
            Some((_, Value::Bool(b))) => *b,
            Some((up, v)) => return Err(self.wrong_type(&up, "unchanged", "true or false", v)),
            None => false,
        };
        let error = get("error")
            .map(|(ep, v)| {
                let kind = self.string(&ep, "error", v)?;
                if TEST_ERROR_KINDS.contains(&kind.value.as_str()) {
                    Ok(kind.value)
                } else {
                    Err(self.invalid(
                        &ep,
                        "error",
                        format!("expected one of {}", TEST_ERROR_KINDS.join(", ")),
                    ))
                }
            })
            .transpose()?;
        match (unchanged, error) {
            (true, Some(_)) => Err(self.invalid(
                p,
                "tests",
                "a case expects `unchanged` or an `error`, not both",
            )),
            (true, None) => Ok(TestExpectation::Unchanged),
            (false, Some(kind)) => Ok(TestExpectation::Error(kind)),
            (false, None) => Ok(TestExpectation::Snapshot),
        }
    }
}
