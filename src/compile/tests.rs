//! Unit tests of compiling: planning steps from `after`, and which rules may run on regions.

use super::*;
use crate::rules::load_yaml;

fn compile(yaml: &str) -> Result<RuleSet, RuleError> {
    RuleSet::compile(load_yaml("r.yaml", yaml).unwrap())
}

#[test]
fn after_gives_steps_and_a_cycle_is_an_error() {
    let set = compile(
        r#"
- {id: a, match: "f($X)", action: {replace: "g($X)"}, after: [b]}
- {id: b, match: "h($X)", action: {replace: "f($X)"}, after: [c]}
- {id: c, match: "k($X)", action: {replace: "h($X)"}}
"#,
    )
    .unwrap();
    let steps: Vec<usize> = set.rules.iter().map(|r| r.step).collect();
    assert_eq!(steps, [2, 1, 0]);
    assert_eq!(set.rules[0].after, [1]);
    let cycle = compile(
        r#"
- {id: a, match: "f($X)", action: {replace: "g($X)"}, after: [b]}
- {id: b, match: "h($X)", action: {replace: "f($X)"}, after: [a]}
"#,
    )
    .unwrap_err();
    assert!(cycle.to_string().contains("a → b → a"), "{cycle}");
}

#[test]
fn only_rules_that_edit_within_one_statement_run_on_regions() {
    let locator = |yaml: &str| compile(yaml).unwrap().rules[0].locator;
    assert_eq!(
        locator(r#"{id: r, match: "f(x=$X)", action: {remove_kwargs: [x]}}"#),
        Some(Locator::Anchor { assignment: None })
    );
    // A pattern that assigns: only lines that assign hold its matches.
    assert!(matches!(
        locator(r#"{id: r, match: "$X = self.mlp($$$A)", action: {remove_kwargs: [x]}}"#),
        Some(Locator::Anchor {
            assignment: Some(_)
        })
    ));
    assert!(matches!(
        locator(r#"{id: r, match: "$X = $Y($$$A)", action: {remove_kwargs: [x]}}"#),
        Some(Locator::Assignment {
            shape: AssignmentShape {
                closes_with: Some(b')'),
                ..
            }
        })
    ));
    assert!(matches!(
        locator(r#"{id: r, match: "$X = $F($A)[$I]", action: {remove_kwargs: [x]}}"#),
        Some(Locator::Assignment {
            shape: AssignmentShape {
                closes_with: Some(b']'),
                ..
            }
        })
    ));
    // A pattern ending in a metavariable says nothing of how its line ends.
    assert!(matches!(
        locator(r#"{id: r, match: "$X = $Y($$$A) + $Z", action: {remove_kwargs: [x]}}"#),
        Some(Locator::Assignment {
            shape: AssignmentShape {
                closes_with: None,
                ..
            }
        })
    ));
    // Insertions write beside the statement.
    assert_eq!(
        locator(r#"{id: r, match: "f($X)", action: {insert_after: "g()"}}"#),
        None
    );
    // A scope needs the enclosing class: its whole top-level statement, found by the
    // pattern's literals or, where it has none, by those the class must hold.
    assert_eq!(
        locator(r#"{id: r, inside: {class: C}, match: "f($X)", action: {replace: "g($X)"}}"#),
        Some(Locator::TopLevel)
    );
    let by_scope = r#"{id: r, inside: {class: {has: "self.blocks = ModuleList($A)"}},
        match: "$X = $Y($$$A)", action: {kwargs_to_positional: {signature: Block.forward}}}"#;
    assert_eq!(locator(by_scope), Some(Locator::TopLevel));
    assert!(
        compile(by_scope).unwrap().rules[0]
            .statement_literals()
            .contains(&"ModuleList".into())
    );
    // Nothing to find the statement by; a whole-file probe; an `at` position.
    assert_eq!(
        locator(
            r#"{id: r, inside: {class: C}, match: "$X = $Y($A)", action: {replace: "$X = 1"}}"#
        ),
        None
    );
    assert_eq!(
        locator(
            r#"{id: r, inside: {class: C}, when: {has: "import os"}, match: "f($X)", action: {replace: "g($X)"}}"#
        ),
        None
    );
}

#[test]
fn an_action_is_checked_against_what_the_pattern_matches() {
    let call = compile(r#"{id: r, match: "$X", action: {remove_kwargs: [x]}}"#).unwrap_err();
    assert!(call.to_string().contains("remove_kwargs"), "{call}");
    let function = compile(r#"{id: r, match: "f($X)", action: {append_body: "x = 1"}}"#);
    assert!(function.is_err());
    let unbound = compile(r#"{id: r, match: "f($X)", action: {replace: "g($Y)"}}"#).unwrap_err();
    assert!(unbound.to_string().contains("$Y"), "{unbound}");
}
