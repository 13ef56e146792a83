//! The author's own text of a rule's keys, for `fmt` to keep: where a key's value as written
//! reads as the canonical value, its quoting, flow style and comments stay (a rule fresh from
//! `regraft new rule` is already formatted); only what differs is written canonically.

use std::collections::HashMap;

use serde_yaml::{Mapping, Value};

use crate::rules::model::Rule;

/// Each top-level key of a YAML rule as its author wrote it (`key: value` and the lines that
/// continue it, dedented to the margin), by key; empty for a rule read from the DSL.
pub(super) fn fragments(rule: &Rule) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let name = rule.origin.file.name();
    if !(name.ends_with(".yaml") || name.ends_with(".yml")) {
        return out;
    }
    let text = rule.origin.file.text();
    let span = rule.origin.span.start.min(text.len())..rule.origin.span.end.min(text.len());
    let line_start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
    let mut indent: Option<usize> = None;
    let mut current: Option<(String, Vec<String>)> = None;
    let mut finish = |current: &mut Option<(String, Vec<String>)>| {
        if let Some((key, mut lines)) = current.take() {
            // Comment and blank lines ending a key's lines belong above the next key.
            while lines
                .last()
                .is_some_and(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
            {
                lines.pop();
            }
            out.insert(key, lines.concat());
        }
    };
    for raw in text[line_start..span.end].split_inclusive('\n') {
        // The first key of a list item stands after its `- `.
        let line = match raw.trim_start().strip_prefix("- ") {
            Some(rest) if indent.is_none() => {
                format!("{}  {rest}", &raw[..raw.len() - raw.trim_start().len()])
            }
            _ => raw.to_string(),
        };
        let at = line.len() - line.trim_start().len();
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            if let Some((_, lines)) = current.as_mut() {
                lines.push(dedent(&line, indent.unwrap_or(0)));
            }
            continue;
        }
        let key: String = t
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let starts_key =
            !key.is_empty() && t[key.len()..].starts_with(':') && at == *indent.get_or_insert(at);
        if starts_key {
            finish(&mut current);
            // The key written one canonical way (`key: value`), its value as the author wrote it.
            let value = t[key.len() + 1..].trim_start();
            let head = match value.is_empty() {
                true => format!("{key}:\n"),
                false => format!("{key}: {value}\n"),
            };
            current = Some((key, vec![head]));
        } else if let Some((_, lines)) = current.as_mut() {
            lines.push(dedent(&line, indent.unwrap_or(0)));
        }
    }
    finish(&mut current);
    out
}

/// `line` without `by` columns of indentation (fewer where it has fewer).
fn dedent(line: &str, by: usize) -> String {
    let spaces = line.len() - line.trim_start_matches(' ').len();
    line[spaces.min(by)..].to_string()
}

/// The author's text for `key` when it reads as `canonical` (a mapping of that key alone).
pub(super) fn as_written(
    written: &HashMap<String, String>,
    key: &str,
    canonical: &Mapping,
) -> Option<String> {
    let text = written.get(key)?;
    let read: Value = serde_yaml::from_str(text).ok()?;
    let mut text = text.clone();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    (read == Value::Mapping(canonical.clone())).then_some(text)
}

/// The top-level keys of each rule of one file, in the order its author wrote them (an
/// action written bare, as the DSL does, under `action`), read again from the file's text;
/// `None` where the file does not read as exactly these rules' mappings.
pub(super) fn key_orders(rules: &[Rule], syntax: crate::rules::Syntax) -> Option<Vec<Vec<String>>> {
    let text = rules.first()?.origin.file.text();
    let values: Vec<Value> = match syntax {
        crate::rules::Syntax::Yaml => crate::rules::yaml::read_documents(text)
            .ok()?
            .into_iter()
            .map(|d| d.value)
            .collect(),
        crate::rules::Syntax::Dsl => vec![crate::rules::dsl::read(text).ok()?.0],
    };
    let mut maps = Vec::new();
    for value in values {
        match value {
            Value::Mapping(map) => maps.push(map),
            Value::Sequence(items) => {
                for item in items {
                    let Value::Mapping(map) = item else {
                        return None;
                    };
                    maps.push(map);
                }
            }
            _ => return None,
        }
    }
    if maps.len() != rules.len() {
        return None;
    }
    let actions = crate::rules::action::action_names();
    let order = |map: &Mapping| {
        let mut keys: Vec<String> = Vec::new();
        for key in map.keys().filter_map(Value::as_str) {
            let key = if actions.contains(&key) {
                "action"
            } else {
                key
            };
            if !keys.iter().any(|k| k == key) {
                keys.push(key.to_string());
            }
        }
        keys
    };
    Some(maps.iter().map(order).collect())
}

/// `map` with its keys in `order` (the author's); a key the author did not write stays after
/// the key it follows in `map`.
pub(super) fn in_order(map: Mapping, order: Option<&[String]>) -> Mapping {
    let Some(order) = order else {
        return map;
    };
    let mut ranked = Vec::new();
    let mut rank = 0;
    for (i, (key, value)) in map.into_iter().enumerate() {
        if let Some(at) = order.iter().position(|o| Some(o.as_str()) == key.as_str()) {
            rank = at;
        }
        ranked.push((rank, i, key, value));
    }
    ranked.sort_by_key(|(rank, i, ..)| (*rank, *i));
    ranked.into_iter().map(|(_, _, k, v)| (k, v)).collect()
}
