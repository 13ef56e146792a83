//! Writes rules back out, in canonical YAML or canonical DSL, or (`fmt`'s default for YAML)
//! as the author wrote them, laid out ([`layout`]).
//!
//! Both canonical writers start from one canonical value tree made from the model, so a rule
//! written in either syntax and read back is the same rule, and canonical text round-trips
//! byte for byte.

mod authored;
mod dsl;
pub mod layout;

pub use dsl::to_dsl;
use serde_yaml::{Mapping, Value};

use super::model::{
    Action, Expect, NameFilter, Rule, ScopeFilter, TestCase, TestExpectation, original_regex,
};

/// Keys whose values are Python code, written in backticks in the DSL.
const CODE_KEYS: &[&str] = &[
    "match",
    "has",
    "lacks",
    "loop",
    "unless",
    "not_inside",
    "replace",
    "insert_before",
    "insert_after",
    "append_body",
    "prepend_body",
    "code",
    "add_decorator",
    "before",
];

/// The canonical value tree of a rule: keys in schema order, defaults written out.
pub fn to_value(rule: &Rule) -> Value {
    let mut map = Mapping::new();
    let mut put = |k: &str, v: Value| {
        map.insert(Value::String(k.to_string()), v);
    };
    let names = |list: &[crate::rules::model::Spanned<String>]| {
        Value::Sequence(list.iter().map(|f| f.value.clone().into()).collect())
    };
    put("id", rule.id.value.clone().into());
    if let Some(d) = &rule.description {
        put("description", d.clone().into());
    }
    for (key, list) in [
        ("requires", &rule.requires),
        ("fixed_upstream", &rule.fixed_upstream),
    ] {
        if !list.is_empty() {
            put(key, requirements(list));
        }
    }
    for (key, name) in [("group", &rule.group), ("family", &rule.family)] {
        if let Some(name) = name {
            put(key, name.value.clone().into());
        }
    }
    // The canonical form leaves defaults out: a rule written without `phase` stays so.
    if rule.phase != super::model::Phase::default() {
        put("phase", rule.phase.name().into());
    }
    if !rule.files.is_empty() {
        put("files", names(&rule.files));
    }
    let inside = inside_value(rule);
    if !inside.is_empty() {
        put("inside", Value::Mapping(inside));
    }
    put("match", match_value(rule));
    if let Some(u) = &rule.unless {
        put("unless", u.text.clone().into());
    }
    if let Some(n) = &rule.not_inside {
        put("not_inside", n.text.clone().into());
    }
    match rule.at.as_slice() {
        [] => {}
        [one] => put("at", one.name().into()),
        many => put("at", many.iter().map(|p| Value::from(p.name())).collect()),
    }
    for (key, list) in [
        ("after", &rule.after),
        ("imports", &rule.imports),
        ("provides", &rule.provides),
        ("reached_from", &rule.reached_from),
    ] {
        if !list.is_empty() {
            put(key, names(list));
        }
    }
    if !rule.constraints.is_empty() {
        put("where", where_value(rule));
    }
    // A check with no assertions of its own is the rule written without an action.
    // Where every alternative carries its own action, the rule's is the first one's.
    let own = !rule.branch_actions.is_empty() && rule.branch_actions.iter().all(Option::is_some);
    let bare_check = rule.action.is_check() && rule.action.args.fields().is_empty();
    if !(own || bare_check) {
        put("action", action_value(&rule.action));
    }
    if let Some(e) = rule.expect {
        put("expect", expect_value(e));
    }
    settings(rule, &mut put);
    Value::Mapping(map)
}

/// The keys of a rule after `expect`: `when`, the flags, the policies and the tests, each
/// where it differs from its default.
fn settings(rule: &Rule, put: &mut impl FnMut(&str, Value)) {
    let when = when_value(rule);
    if !when.is_empty() {
        put("when", Value::Mapping(when));
    }
    for (key, set) in [
        ("ordered", rule.ordered),
        ("preserve_lines", rule.preserve_lines),
    ] {
        if set {
            put(key, true.into());
        }
    }
    for (key, policy) in [("on_miss", rule.on_miss), ("on_refuse", rule.on_refuse)] {
        if policy != super::model::Policy::Error {
            put(key, policy.name().into());
        }
    }
    if let Some(effect) = &rule.effect {
        let mut map = Mapping::new();
        for (key, piece) in [
            ("run", effect.run.as_ref()),
            ("value", Some(&effect.value)),
            ("original", effect.original.as_ref()),
            ("patched", effect.patched.as_ref()),
        ] {
            if let Some(piece) = piece {
                map.insert(key.into(), piece.value.clone().into());
            }
        }
        put("effect", Value::Mapping(map));
    }
    if !rule.tests.is_empty() {
        put(
            "tests",
            Value::Sequence(rule.tests.iter().map(test_value).collect()),
        );
    }
}

/// The `where` mapping of a rule.
fn where_value(rule: &Rule) -> Value {
    let mut conditions = Mapping::new();
    for (name, c) in &rule.constraints {
        let mut m = Mapping::new();
        if let Some(re) = &c.regex {
            m.insert("regex".into(), re.value.0.as_str().into());
        }
        if let Some(re) = &c.not_regex {
            m.insert("not_regex".into(), re.value.0.as_str().into());
        }
        for (key, kinds) in [("kind", &c.kind), ("not_kind", &c.not_kind)] {
            match kinds.as_slice() {
                [] => {}
                [one] => {
                    m.insert(key.into(), one.value.clone().into());
                }
                several => {
                    let list = several.iter().map(|k| k.value.clone().into()).collect();
                    m.insert(key.into(), Value::Sequence(list));
                }
            }
        }
        if let Some(has) = &c.has {
            m.insert("has".into(), has.text.clone().into());
        }
        conditions.insert(name.value.clone().into(), Value::Mapping(m));
    }
    Value::Mapping(conditions)
}

/// The `inside` mapping of a rule (empty when it has no scope).
fn inside_value(rule: &Rule) -> Mapping {
    let mut inside = Mapping::new();
    let filter = |f: &NameFilter| match f {
        NameFilter::Exact(name) => Value::String(name.value.clone()),
        NameFilter::Regex(re) => {
            let mut m = Mapping::new();
            m.insert("regex".into(), original_regex(&re.value).into());
            Value::Mapping(m)
        }
    };
    let scope = |s: &ScopeFilter| {
        if !s.has_predicates()
            && let Some(name) = &s.name
        {
            return filter(name);
        }
        let mut m = Mapping::new();
        match &s.name {
            Some(NameFilter::Exact(name)) => {
                m.insert("name".into(), name.value.clone().into());
            }
            Some(NameFilter::Regex(re)) => {
                m.insert("regex".into(), original_regex(&re.value).into());
            }
            None => {}
        }
        if let Some(base) = &s.extends {
            m.insert("extends".into(), base.value.clone().into());
        }
        if let Some(has) = &s.has {
            m.insert("has".into(), has.text.clone().into());
        }
        if let Some(n) = s.count {
            m.insert("count".into(), n.into());
        }
        if !s.lacks.is_empty() {
            m.insert("lacks".into(), alternatives(&s.lacks));
        }
        Value::Mapping(m)
    };
    if let Some(c) = &rule.inside.class {
        inside.insert("class".into(), scope(c));
    }
    if let Some(f) = &rule.inside.function {
        inside.insert("function".into(), scope(f));
    }
    if !rule.inside.loop_header.is_empty() {
        inside.insert("loop".into(), alternatives(&rule.inside.loop_header));
    }
    inside
}

/// Patterns tried in order: one as itself, several as `{any: [...]}`.
fn alternatives(snippets: &[crate::rules::model::Snippet]) -> Value {
    match snippets {
        [one] => one.text.clone().into(),
        many => {
            let mut map = Mapping::new();
            let items: Vec<Value> = many.iter().map(|s| s.text.clone().into()).collect();
            map.insert("any".into(), Value::Sequence(items));
            Value::Mapping(map)
        }
    }
}

/// `match`: its alternatives, each carrying its own action as `{match: P, action: A}`.
fn match_value(rule: &Rule) -> Value {
    if rule.branch_actions.is_empty() {
        return alternatives(&rule.patterns);
    }
    let items = rule
        .patterns
        .iter()
        .zip(&rule.branch_actions)
        .map(|(p, a)| {
            let Some(action) = a else {
                return p.text.clone().into();
            };
            let mut m = Mapping::new();
            m.insert("match".into(), p.text.clone().into());
            m.insert("action".into(), action_value(action));
            Value::Mapping(m)
        });
    let mut map = Mapping::new();
    map.insert("any".into(), Value::Sequence(items.collect()));
    Value::Mapping(map)
}

/// The `when` mapping of a rule (empty when it has no probe).
fn when_value(rule: &Rule) -> Mapping {
    let mut when = Mapping::new();
    if let Some(s) = &rule.when.has {
        when.insert("has".into(), s.text.clone().into());
    }
    if let Some(s) = &rule.when.lacks {
        when.insert("lacks".into(), s.text.clone().into());
    }
    if let Some(s) = &rule.when.contains {
        when.insert("contains".into(), s.value.clone().into());
    }
    if let Some(s) = &rule.when.lacks_text {
        when.insert("lacks_text".into(), s.value.clone().into());
    }
    if let Some(scope) = rule.when.scope {
        when.insert("scope".into(), scope.name().into());
    }
    if let Some(probe) = &rule.when.signature {
        let mut m = Mapping::new();
        m.insert("of".into(), probe.of.value.clone().into());
        for (key, names) in [
            ("has", &probe.has),
            ("lacks", &probe.lacks),
            ("order", &probe.order),
        ] {
            if !names.is_empty() {
                let items = names.iter().map(|n| Value::from(n.value.clone())).collect();
                m.insert(key.into(), Value::Sequence(items));
            }
        }
        when.insert("signature".into(), Value::Mapping(m));
    }
    when
}

fn test_value(case: &TestCase) -> Value {
    let mut m = Mapping::new();
    m.insert("name".into(), case.name.value.clone().into());
    if !case.versions.is_empty() {
        m.insert(
            "with".into(),
            Value::Mapping(
                case.versions
                    .iter()
                    .map(|(p, v)| (p.clone().into(), v.clone().into()))
                    .collect(),
            ),
        );
    }
    if let Some(phase) = case.phase {
        m.insert("phase".into(), phase.name().into());
    }
    if let Some(path) = &case.path {
        m.insert("path".into(), path.clone().into());
    }
    m.insert("before".into(), case.before.clone().into());
    match &case.expectation {
        TestExpectation::Snapshot => {}
        TestExpectation::Unchanged => {
            m.insert("unchanged".into(), true.into());
        }
        TestExpectation::Error(kind) => {
            m.insert("error".into(), kind.clone().into());
        }
    }
    Value::Mapping(m)
}

/// `requires` and `fixed_upstream`: package → specifiers.
fn requirements(list: &[crate::rules::model::Requirement]) -> Value {
    let mut map = Mapping::new();
    for r in list {
        map.insert(
            r.package.value.clone().into(),
            r.specifiers.value.to_string().replace(", ", ",").into(),
        );
    }
    Value::Mapping(map)
}

fn action_value(action: &Action) -> Value {
    let mut m = Mapping::new();
    m.insert(action.name().into(), action.args.to_value());
    Value::Mapping(m)
}

fn expect_value(e: Expect) -> Value {
    let mut m = Mapping::new();
    match e.max {
        Some(max) if max == e.min && e.per.is_none() && !e.run => return max.into(),
        Some(max) if max == e.min => {
            m.insert("count".into(), max.into());
        }
        max => {
            m.insert("min".into(), e.min.into());
            if let Some(max) = max {
                m.insert("max".into(), max.into());
            }
        }
    }
    if e.run {
        m.insert("per".into(), "run".into());
    }
    if let Some(per) = e.per {
        m.insert("per".into(), per.name().into());
    }
    Value::Mapping(m)
}

/// Canonical YAML: one document per rule, `---` between them, each rule's leading comments kept.
pub fn to_yaml(rules: &[(Rule, String)]) -> String {
    yaml(rules, None)
}

/// Canonical YAML, except that a key whose value the author wrote as the canonical content (in
/// any quoting or flow style, with its comments) stays as written — a rule fresh from `regraft
/// new rule` is already formatted — and each rule's keys in `orders` (one list per rule) where
/// given.
fn to_yaml_as_written(rules: &[(Rule, String)], orders: Option<&[Vec<String>]>) -> String {
    yaml(rules, Some(orders))
}

fn yaml(rules: &[(Rule, String)], as_written: Option<Option<&[Vec<String>]>>) -> String {
    rules
        .iter()
        .enumerate()
        .map(|(i, (rule, comments))| {
            let Value::Mapping(map) = to_value(rule) else {
                unreachable!("a rule is a mapping")
            };
            let order = as_written
                .flatten()
                .and_then(|o| o.get(i))
                .map(Vec::as_slice);
            let map = authored::in_order(map, order);
            let notes = key_comments(rule);
            let written = match as_written {
                Some(_) => authored::fragments(rule),
                None => Default::default(),
            };
            // Key by key, so the comments that stood above a key stay above it, and a key whose
            // value the author wrote as canonical content (in any quoting or flow style) stays
            // as written.
            let body: String = map
                .into_iter()
                .map(|(key, value)| {
                    let name = key.as_str().unwrap_or_default().to_string();
                    let above = notes.get(&name);
                    let mut one = Mapping::new();
                    one.insert(key, value);
                    let text = authored::as_written(&written, &name, &one).unwrap_or_else(|| {
                        serde_yaml::to_string(&one).expect("plain values serialize")
                    });
                    format!("{}{text}", above.map_or("", String::as_str))
                })
                .collect();
            format!("{comments}{body}")
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

/// The comment lines directly above a rule (`#` lines, blank lines between them allowed), kept
/// by `fmt` when it rewrites or converts the file.
pub fn leading_comments(text: &str, rule_start: usize) -> String {
    let before = &text[..rule_start.min(text.len())];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    // Skip a `- ` list marker or `---` separator that may stand on the rule's first line.
    let mut lines: Vec<&str> = text[..line_start].lines().collect();
    let mut kept = Vec::new();
    while let Some(line) = lines.pop() {
        let t = line.trim();
        if t.starts_with('#') {
            kept.push(t);
        } else if !(t.is_empty() || t == "---") {
            break;
        }
    }
    kept.reverse();
    kept.iter().map(|l| format!("{l}\n")).collect()
}

/// The comment lines directly above each top-level key of a rule, by key (an action, which
/// the DSL writes bare, under `action`): `fmt` keeps them there. Comments above nested keys
/// are not kept, and `fmt` refuses to drop them ([`dropped_comment`]).
fn key_comments(rule: &Rule) -> std::collections::HashMap<String, String> {
    let text = rule.origin.file.text();
    let span = rule.origin.span.start.min(text.len())..rule.origin.span.end.min(text.len());
    let line_start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
    let actions = super::action::action_names();
    let mut notes = std::collections::HashMap::new();
    let mut pending = String::new();
    // The rule's keys stand at the indentation of its second line (the first carries a `- `
    // list marker, or is the DSL's `rule ID`).
    let mut indent = None;
    let mut first = true;
    for line in text[line_start..span.end].lines() {
        let t = line.trim();
        if t.starts_with('#') {
            pending.push_str(t);
            pending.push('\n');
            continue;
        }
        if t.is_empty() {
            continue;
        }
        if std::mem::take(&mut first) {
            pending.clear();
            continue;
        }
        let at = line.len() - line.trim_start().len();
        if !pending.is_empty() && at == *indent.get_or_insert(at) {
            let word = t
                .split(|c: char| c == ':' || c.is_whitespace())
                .next()
                .unwrap_or_default();
            let key = if actions.contains(&word) {
                "action"
            } else {
                word
            };
            notes.insert(key.to_string(), std::mem::take(&mut pending));
        }
        indent.get_or_insert(at);
        pending.clear();
    }
    notes
}

/// The first comment of `original` that `output` no longer contains, if any: `fmt` refuses to
/// rewrite a file in place where that would silently drop a comment.
pub fn dropped_comment(original: &str, output: &str) -> Option<std::ops::Range<usize>> {
    let mut offset = 0;
    for line in original.split_inclusive('\n') {
        if let Some(at) = line.find('#') {
            let fragment = line[at..].trim_end();
            if !output.contains(fragment) {
                return Some(offset + at..offset + at + fragment.len());
            }
        }
        offset += line.len();
    }
    None
}

/// Rules of one file in `syntax`, each with the comment lines that stood above it, in the
/// canonical text: what `fmt --to` writes (a conversion, which the author's YAML style cannot
/// survive in the DSL and should not differ by in YAML).
pub fn render(rules: &[Rule], syntax: super::Syntax) -> String {
    rendered(rules, syntax, false, false)
}

/// What `fmt --canonical FILE` writes back: [`render`], except that a YAML key whose value
/// the author wrote as the canonical content keeps the author's text (its quoting, flow style
/// and comments).
pub fn render_in_place(rules: &[Rule], syntax: super::Syntax) -> String {
    rendered(rules, syntax, true, false)
}

/// What `fmt FILE` writes back where [`layout`] does not lay the file out as written (a DSL
/// file, or YAML it declines): [`render_in_place`] with each rule's keys in the author's order.
pub fn render_in_author_order(rules: &[Rule], syntax: super::Syntax) -> String {
    rendered(rules, syntax, true, true)
}

fn rendered(rules: &[Rule], syntax: super::Syntax, as_written: bool, ordered: bool) -> String {
    let with_comments: Vec<_> = rules
        .iter()
        .map(|r| {
            let comments = leading_comments(r.origin.file.text(), r.origin.span.start);
            (r.clone(), comments)
        })
        .collect();
    let orders = ordered
        .then(|| authored::key_orders(rules, syntax))
        .flatten();
    match syntax {
        super::Syntax::Yaml if as_written => to_yaml_as_written(&with_comments, orders.as_deref()),
        super::Syntax::Yaml => to_yaml(&with_comments),
        super::Syntax::Dsl => dsl::to_dsl_in_order(&with_comments, orders.as_deref()),
    }
}
