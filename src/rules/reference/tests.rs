use std::collections::BTreeSet;

use super::{entries, entry};
use crate::rules::action::action_names;
use crate::rules::convert::{INSIDE_KEYS, RULE_KEYS};

#[test]
fn every_key_and_action_has_one_entry_and_every_entry_is_a_key_or_action() {
    let mut documented = BTreeSet::new();
    for e in entries() {
        assert!(
            e.key.is_some() != e.action.is_some(),
            "{}: key or action",
            e.name()
        );
        for name in e.names() {
            assert!(
                documented.insert(name.to_string()),
                "`{name}` documented twice"
            );
        }
    }
    let inside = INSIDE_KEYS.iter().map(|k| format!("inside.{k}"));
    let real: BTreeSet<String> = RULE_KEYS
        .iter()
        .map(|k| k.to_string())
        .chain(inside)
        .chain(action_names().iter().map(|a| a.to_string()))
        .collect();
    assert_eq!(documented, real, "the reference and the schema disagree");
    for e in entries().iter().filter(|e| e.is_action()) {
        assert!(
            action_names().contains(&e.name()),
            "{} is no action",
            e.name()
        );
    }
}

#[test]
fn summaries_are_short_and_end_a_sentence() {
    for e in entries() {
        let n = e.summary.chars().count();
        assert!(n <= 260, "`{}`: a summary of {n} characters", e.name());
        assert!(e.summary.ends_with('.'), "`{}`: {}", e.name(), e.summary);
        assert!(e.example.ends_with('\n') && !e.details.is_empty());
    }
    assert!(entry("insert_after").is_some_and(|e| e.name() == "insert_before"));
    assert!(entry("inside.loop").is_some() && entry("no_such_key").is_none());
}

#[test]
fn the_page_has_a_section_per_entry() {
    let page = super::markdown();
    for e in entries() {
        assert!(
            page.contains(&format!("### `{}`", e.name())),
            "{}",
            e.name()
        );
    }
}
