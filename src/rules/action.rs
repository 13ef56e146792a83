//! Actions as the rule layer sees them: a name, and arguments read and checked by the action's
//! own unit. The units live in `crate::actions`, above this floor; each registers itself in
//! [`ACTION_SPECS`] (a link-time list, so this floor reads and writes every action without
//! naming one, and adding an action touches no list here).

use std::fmt;
use std::ops::Range;

use serde_yaml::{Mapping, Value};

use super::error::{RuleError, RuleErrorKind};
use super::reader::{Cx, child, key_path};
use super::spans::{Path, Seg, Snippet, Spanned};

/// What the rule layer needs of an action: its name, and how its arguments are read.
pub trait ActionSpec: Sync + fmt::Debug {
    /// The action's key in rule files.
    fn name(&self) -> &'static str;
    /// Reads and checks the arguments written under the action's key, into their canonical
    /// form (what `fmt` writes back). Most actions take one piece of code.
    fn read(&self, args: &ArgReader<'_>) -> Result<Arg, RuleError> {
        args.text()
    }
}

/// Every action's rule-layer half, registered by `crate::actions`.
#[linkme::distributed_slice]
pub static ACTION_SPECS: [&'static dyn ActionSpec];

/// The names of every action, sorted.
pub fn action_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = ACTION_SPECS.iter().map(|s| s.name()).collect();
    names.sort_unstable();
    names
}

/// The action named `name`.
pub fn action_spec(name: &str) -> Option<&'static dyn ActionSpec> {
    ACTION_SPECS.iter().copied().find(|s| s.name() == name)
}

/// What a rule does to each match: one action and its canonical arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    /// The action's name as written in rule files.
    pub name: &'static str,
    /// Its arguments, as its unit read them.
    pub args: Arg,
}

/// The action of check-only rules (pins): it edits nothing.
pub const CHECK: &str = "check";

impl Action {
    /// The action's name as written in rule files.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The action of a rule written without one: `check: {}`, asserting `expect` alone.
    pub fn check() -> Self {
        Self {
            name: CHECK,
            args: Arg::Fields(Vec::new()),
        }
    }

    /// Whether the rule only checks (a pin).
    pub fn is_check(&self) -> bool {
        self.name == CHECK
    }
}

/// An action's arguments: a small value tree whose texts keep their place in the rule file.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// `true` or `false`.
    Flag(bool),
    /// A text: a name, or code (a template) with its offsets in the rule file.
    Text(Snippet),
    /// A list.
    List(Vec<Arg>),
    /// Named fields, in the order they are written back.
    Fields(Vec<(Spanned<String>, Arg)>),
}

impl Arg {
    /// The field `key`, for `Fields`.
    pub fn field(&self, key: &str) -> Option<&Arg> {
        match self {
            Arg::Fields(fields) => fields.iter().find(|(k, _)| k.value == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The fields, for `Fields`; none otherwise.
    pub fn fields(&self) -> &[(Spanned<String>, Arg)] {
        match self {
            Arg::Fields(fields) => fields,
            _ => &[],
        }
    }

    /// The text, for `Text`.
    pub fn snippet(&self) -> Option<&Snippet> {
        match self {
            Arg::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The text of `Text`, or empty.
    pub fn text(&self) -> &str {
        self.snippet().map_or("", |s| s.text.as_str())
    }

    /// The value of `Flag`; `false` otherwise.
    pub fn flag(&self) -> bool {
        matches!(self, Arg::Flag(true))
    }

    /// The texts of a `List` of texts (or of one `Text`), with their spans.
    pub fn names(&self) -> Vec<Spanned<String>> {
        match self {
            Arg::Text(s) => vec![Spanned::new(s.text.clone(), s.span.clone())],
            Arg::List(items) => items.iter().flat_map(Arg::names).collect(),
            _ => Vec::new(),
        }
    }

    /// Every code text in the tree, in order.
    pub fn snippets(&self) -> Vec<&Snippet> {
        match self {
            Arg::Flag(_) => Vec::new(),
            Arg::Text(s) => vec![s],
            Arg::List(items) => items.iter().flat_map(Arg::snippets).collect(),
            Arg::Fields(fields) => fields.iter().flat_map(|(_, v)| v.snippets()).collect(),
        }
    }

    /// The tree as a YAML value (what `fmt` writes under the action's name).
    pub fn to_value(&self) -> Value {
        match self {
            Arg::Flag(b) => Value::Bool(*b),
            Arg::Text(s) => s.text.clone().into(),
            Arg::List(items) => Value::Sequence(items.iter().map(Arg::to_value).collect()),
            Arg::Fields(fields) => Value::Mapping(
                fields
                    .iter()
                    .map(|(k, v)| (k.value.clone().into(), v.to_value()))
                    .collect::<Mapping>(),
            ),
        }
    }
}

/// Reads one value of an action's arguments, reporting mistakes at its place in the rule file
/// in the same words for every action.
pub struct ArgReader<'a> {
    cx: &'a Cx<'a>,
    path: Path,
    key: String,
    value: &'a Value,
}

impl<'a> ArgReader<'a> {
    /// A reader of `value`, written at `path` under `key`.
    pub(super) fn new(cx: &'a Cx<'a>, path: Path, key: &str, value: &'a Value) -> Self {
        Self {
            cx,
            path,
            key: key.to_string(),
            value,
        }
    }

    /// The key the value stands under (the action's name at the top).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Whether the value is a mapping.
    pub fn is_mapping(&self) -> bool {
        matches!(self.value, Value::Mapping(_))
    }

    /// Whether the value is a string.
    pub fn is_string(&self) -> bool {
        matches!(self.value, Value::String(_))
    }

    /// Whether the value is a list.
    pub fn is_list(&self) -> bool {
        matches!(self.value, Value::Sequence(_))
    }

    /// The value is not of the `expected` kind.
    pub fn wrong_type(&self, expected: &str) -> RuleError {
        self.cx
            .wrong_type(&self.path, &self.key, expected, self.value)
    }

    /// The value is of the right kind but wrong.
    pub fn invalid(&self, reason: impl Into<String>) -> RuleError {
        self.cx.invalid(&self.path, &self.key, reason)
    }

    /// The value is wrong, said of the key `key` that holds it.
    pub fn invalid_under(&self, key: &str, reason: impl Into<String>) -> RuleError {
        self.cx.invalid(&self.path, key, reason)
    }

    /// The span of the value in the rule file.
    pub fn span(&self) -> Range<usize> {
        self.cx.spans.value(&self.path)
    }

    /// Checks that the value is a mapping with only `allowed` keys (`within` names it in
    /// messages); `expected` describes it when it is not a mapping.
    pub fn fields(&self, allowed: &[&str], within: &str, expected: &str) -> Result<(), RuleError> {
        let Value::Mapping(map) = self.value else {
            return Err(self.wrong_type(expected));
        };
        self.cx.check_keys(&self.path, map, allowed, within)
    }

    /// The field `key` of a mapping, if written.
    pub fn field(&self, key: &str) -> Option<ArgReader<'a>> {
        let Value::Mapping(map) = self.value else {
            return None;
        };
        map.get(key)
            .map(|v| ArgReader::new(self.cx, key_path(&self.path, key), key, v))
    }

    /// The field `key` of a mapping, which must be written (`within` names the mapping).
    pub fn require(&self, key: &str, within: &str) -> Result<ArgReader<'a>, RuleError> {
        self.field(key).ok_or_else(|| {
            self.cx.error(
                RuleErrorKind::MissingKey {
                    key: key.into(),
                    within: within.into(),
                },
                self.span(),
            )
        })
    }

    /// Every entry of a mapping whose keys are names, with the key's span; `expected`
    /// describes it when it is not a mapping.
    pub fn entries(
        &self,
        expected: &str,
    ) -> Result<Vec<(Spanned<String>, ArgReader<'a>)>, RuleError> {
        let Value::Mapping(map) = self.value else {
            return Err(self.wrong_type(expected));
        };
        let mut out = Vec::new();
        for (k, v) in map {
            let Some(name) = k.as_str() else {
                return Err(self
                    .cx
                    .wrong_type(&self.path, &self.key, "a keyword name", k));
            };
            let path = key_path(&self.path, name);
            let span = self.cx.spans.key(&path);
            let reader = ArgReader::new(self.cx, path, name, v);
            out.push((Spanned::new(name.to_string(), span), reader));
        }
        Ok(out)
    }

    /// The value as a Python identifier (a name an action writes or looks for), refused at its
    /// place otherwise.
    pub fn identifier(&self) -> Result<Arg, RuleError> {
        let name = self.string()?;
        if !crate::python::is_identifier(&name.value) {
            return Err(self.invalid(format!("`{}` is not an identifier", name.value)));
        }
        self.text()
    }

    /// The value as a regular expression (the `regex` crate's syntax), refused at its place
    /// where it does not compile.
    pub fn regex(&self) -> Result<Arg, RuleError> {
        if let Err(e) = regex::Regex::new(&self.string()?.value) {
            return Err(self.invalid(format!("not a regex: {e}")));
        }
        self.text()
    }

    /// The value as a string.
    pub fn string(&self) -> Result<Spanned<String>, RuleError> {
        self.cx.string(&self.path, &self.key, self.value)
    }

    /// The value as code (or any text), keeping its offsets in the rule file.
    pub fn text(&self) -> Result<Arg, RuleError> {
        self.cx
            .snippet(&self.path, &self.key, self.value)
            .map(Arg::Text)
    }

    /// The value as a string or a list of strings; each item's reader comes along, to report
    /// a bad item at its place.
    pub fn items(&self) -> Result<Vec<(Spanned<String>, ArgReader<'a>)>, RuleError> {
        let strings = self.cx.strings(&self.path, &self.key, self.value)?;
        let Value::Sequence(values) = self.value else {
            let whole = || ArgReader::new(self.cx, self.path.clone(), &self.key, self.value);
            return Ok(strings.into_iter().map(|s| (s, whole())).collect());
        };
        Ok(strings
            .into_iter()
            .zip(values)
            .enumerate()
            .map(|(i, (s, v))| {
                let path = child(&self.path, Seg::Index(i));
                (s, ArgReader::new(self.cx, path, &self.key, v))
            })
            .collect())
    }

    /// The value as `true`/`false`; `expected` describes it otherwise.
    pub fn flag(&self, expected: &str) -> Result<bool, RuleError> {
        match self.value {
            Value::Bool(b) => Ok(*b),
            _ => Err(self.wrong_type(expected)),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::load_yaml;

    fn action(yaml: &str) -> super::Action {
        let rule = format!("id: r\nmatch: \"f($X)\"\naction: {yaml}\n");
        load_yaml("r.yaml", &rule).unwrap().remove(0).action
    }

    #[test]
    fn arguments_are_kept_in_their_canonical_form() {
        let one = action("{remove_kwargs: x}");
        let list = action("{remove_kwargs: [x]}");
        assert_eq!(one, list, "a single name is a list of one");
        let plain = action("{prepend_body: {code: \"y = 1\", after_super: false}}");
        assert_eq!(plain, action("{prepend_body: \"y = 1\"}"));
        let renamed = action("{rename: {from: a, to: b, attributes: false}}");
        assert_eq!(renamed.args.field("attributes"), None);
        assert_eq!(renamed.args.field("to").unwrap().text(), "b");
    }

    #[test]
    fn an_unknown_action_suggests_the_closest_and_bad_arguments_point_at_themselves() {
        let rule = "id: r\nmatch: \"f($X)\"\naction: {remove_kwarg: [x]}\n";
        let e = load_yaml("r.yaml", rule).unwrap_err();
        assert!(
            e.help.as_deref().is_some_and(
                |h| h.starts_with("did you mean `remove_kwargs`? — Deletes those keyword")
            ),
            "{:?}",
            e.help
        );
        let rule = "id: r\nmatch: \"f($X)\"\naction: {remove_kwargs: [x, 1y]}\n";
        let e = load_yaml("r.yaml", rule).unwrap_err();
        assert_eq!(&rule[e.span.clone()], "1y");
    }
}
