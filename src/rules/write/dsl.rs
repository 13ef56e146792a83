//! The canonical DSL: the canonical value tree of each rule written as statements.

use serde_yaml::Value;

use super::{CODE_KEYS, key_comments, to_value};
use crate::rules::model::Rule;

/// Canonical DSL: one block per rule, a blank line between them, leading comments kept.
pub fn to_dsl(rules: &[(Rule, String)]) -> String {
    to_dsl_in_order(rules, None)
}

/// [`to_dsl`], each rule's statements in `orders` (the author's order of its keys, one list
/// per rule) where given.
pub(super) fn to_dsl_in_order(rules: &[(Rule, String)], orders: Option<&[Vec<String>]>) -> String {
    rules
        .iter()
        .enumerate()
        .map(|(i, (rule, comments))| {
            let order = orders.and_then(|o| o.get(i)).map(Vec::as_slice);
            format!("{comments}{}", dsl_rule(rule, order))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn dsl_rule(rule: &Rule, order: Option<&[String]>) -> String {
    let Value::Mapping(map) = to_value(rule) else {
        unreachable!("a rule is a mapping")
    };
    let map = super::authored::in_order(map, order);
    let mut out = format!("rule {}\n", rule.id.value);
    let notes = key_comments(rule);
    for (key, value) in &map {
        let key = key.as_str().unwrap_or_default();
        if let Some(above) = notes.get(key) {
            for line in above.lines() {
                out.push_str(&format!("  {line}\n"));
            }
        }
        match key {
            "id" => {}
            // `action replace ...` is written as the shorter `replace ...`.
            "action" => statements(&mut out, "  ", &[], value),
            _ => statements(&mut out, "  ", &[key], value),
        }
    }
    out
}

fn statements(out: &mut String, indent: &str, keys: &[&str], value: &Value) {
    if let Value::Mapping(map) = value {
        for (k, v) in map {
            let mut path = keys.to_vec();
            path.push(k.as_str().unwrap_or_default());
            statements(out, indent, &path, v);
        }
        return;
    }
    out.push_str(indent);
    out.push_str(&keys.join(" "));
    out.push(' ');
    out.push_str(&dsl_value(indent, keys, value));
    out.push('\n');
}

fn dsl_value(indent: &str, keys: &[&str], value: &Value) -> String {
    match value {
        Value::String(s) => dsl_string(indent, keys, s),
        // A list of mappings (test cases, alternatives with their own action) is written one
        // `{ block }` per item, one item per line.
        Value::Sequence(items) if items.iter().any(Value::is_mapping) => {
            let inner = format!("{indent}    ");
            let mut out = String::from("[\n");
            for item in items {
                if !item.is_mapping() {
                    let value = dsl_value(indent, keys, item);
                    out.push_str(&format!("{indent}  {value},\n"));
                    continue;
                }
                out.push_str(&format!("{indent}  {{\n"));
                statements(&mut out, &inner, &[], item);
                out.push_str(&format!("{indent}  }},\n"));
            }
            out.push_str(indent);
            out.push(']');
            out
        }
        Value::Sequence(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|v| dsl_value(indent, keys, v))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        _ => "\"\"".to_string(),
    }
}

fn dsl_string(indent: &str, keys: &[&str], s: &str) -> String {
    let last = keys.last().copied().unwrap_or_default();
    let is_code = CODE_KEYS.contains(&last) || keys.contains(&"set_kwargs");
    // A fenced block loses the indentation its lines share, so code whose every line is
    // indented goes in quotes, where it keeps it.
    let all_indented = s
        .lines()
        .filter(|l| !l.trim().is_empty())
        .all(|l| l.starts_with([' ', '\t']))
        && s.contains('\n');
    if is_code && !s.contains('`') && !all_indented {
        if !s.contains('\n') {
            return format!("`{s}`");
        }
        let body: Vec<String> = s
            .lines()
            .map(|l| {
                if l.is_empty() {
                    String::new()
                } else {
                    format!("{indent}  {l}")
                }
            })
            .collect();
        // A final line break is written as a blank line before the closing fence.
        let final_break = if s.ends_with('\n') { "\n" } else { "" };
        return format!("```\n{}\n{final_break}{indent}```", body.join("\n"));
    }
    let plain_word = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && crate::rules::dsl::word_value(s) == Value::String(s.to_string());
    if plain_word && last != "description" {
        return s.to_string();
    }
    let bare_specifier = keys.first() == Some(&"requires")
        && ["~=", "==", "!=", "<=", ">=", "<", ">"]
            .iter()
            .any(|op| s.starts_with(op))
        && !s.contains([' ', '\t', '#', '\n']);
    if bare_specifier {
        return s.to_string();
    }
    let mut quoted = String::with_capacity(s.len() + 2);
    quoted.push('"');
    for c in s.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            '\t' => quoted.push_str("\\t"),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}
