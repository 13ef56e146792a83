//! The rule reference the hover shows: read from the README's tables (`### Rule reference`,
//! its keys and actions), so the documentation and the editor say one thing.

use std::collections::HashMap;
use std::sync::OnceLock;

const README: &str = include_str!("../../README.md");

/// Each key's and action's reference entry, in Markdown: its syntax as the table writes it,
/// then what it does.
pub(super) fn entry(key: &str) -> Option<&'static str> {
    static TABLE: OnceLock<HashMap<String, String>> = OnceLock::new();
    TABLE
        .get_or_init(|| table(README))
        .get(key)
        .map(String::as_str)
}

/// The rows `| `key…` | text |` of the reference section of `readme`, by key.
fn table(readme: &str) -> HashMap<String, String> {
    let start = readme.find("### Rule reference").unwrap_or(0);
    let end = readme[start..]
        .find("\n## ")
        .map_or(readme.len(), |i| start + i);
    let mut out = HashMap::new();
    for line in readme[start..end].lines() {
        let Some(row) = line.strip_prefix("| `") else {
            continue;
        };
        // The first cell ends at the first unescaped ` | ` (a cell writes `\|` for a bar).
        let Some((syntax, rest)) = row.split_once(" | ") else {
            continue;
        };
        let syntax = syntax.trim_end_matches('`');
        let text = rest.trim().trim_end_matches('|').trim();
        // `insert_before: …`, `insert_after: …` document two keys in one row.
        for part in syntax.split("`, `") {
            let key: String = part
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
                .collect();
            if key.is_empty() || out.contains_key(&key) {
                continue;
            }
            out.insert(key, format!("`{syntax}`\n\n{text}"));
        }
    }
    // `inside` is documented by its keys' rows: together they are its entry.
    let inside: Vec<String> = ["inside.class", "inside.function", "inside.loop"]
        .iter()
        .filter_map(|k| out.get(*k).cloned())
        .collect();
    out.insert("inside".into(), inside.join("\n\n"));
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_key_and_action_has_an_entry() {
        for key in crate::rules::convert::RULE_KEYS
            .iter()
            .chain(crate::rules::action::action_names().iter())
        {
            if ["preserve_lines", "ordered"].contains(key) {
                continue;
            }
            assert!(
                super::entry(key).is_some(),
                "no reference entry for `{key}`"
            );
        }
    }
}
