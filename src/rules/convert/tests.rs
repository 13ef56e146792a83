//! Unit tests of reading rules from their value tree.

use super::*;
use crate::rules::load_yaml;

fn error(yaml: &str) -> RuleError {
    load_yaml("r.yaml", yaml).unwrap_err()
}

#[test]
fn the_first_mistake_in_reading_order_is_the_one_reported() {
    // An unknown key is found before anything is read; then keys go in a fixed order.
    let e = error("id: r\nmatchh: x\nmatch: \"f()\"\naction: {delete: true}\n");
    assert!(matches!(e.kind, RuleErrorKind::UnknownKey { .. }), "{e}");
    let e = error("id: r\nphase: later\nmatch: \"f()\"\n");
    assert!(e.to_string().contains("phase"), "{e}");
    let e = error("id: r\naction: {delete: true}\n");
    assert!(matches!(e.kind, RuleErrorKind::MissingKey { ref key, .. } if key == "match"));
}

#[test]
fn ids_are_one_dsl_word_and_names_are_identifiers() {
    assert!(
        error("id: \"a b\"\nmatch: \"f()\"\naction: {delete: true}\n")
            .to_string()
            .contains("one word")
    );
    assert!(is_identifier("_x1") && !is_identifier("1x") && !is_identifier(""));
    assert!(is_package_name("torch-npu") && !is_package_name("torch^"));
}

#[test]
fn on_miss_suggests_the_closest_word() {
    let e = error("id: r\nmatch: \"f()\"\naction: {delete: true}\non_miss: wran\n");
    assert_eq!(e.help.as_deref(), Some("did you mean `warn`?"));
}
