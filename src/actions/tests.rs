//! The registry's completeness: every action is a whole unit, known to both halves of the
//! registry, documented and exercised.

use std::collections::HashSet;

use super::{ACTIONS, Needs};
use crate::rules::action::{ACTION_SPECS, action_names};

#[test]
fn every_action_is_registered_in_both_halves_once() {
    let units: Vec<&str> = ACTIONS.iter().map(|u| u.name()).collect();
    let specs: HashSet<&str> = ACTION_SPECS.iter().map(|s| s.name()).collect();
    let unique: HashSet<&str> = units.iter().copied().collect();
    assert_eq!(
        unique.len(),
        units.len(),
        "an action is registered twice: {units:?}"
    );
    assert_eq!(unique, specs, "rule-layer and action registries differ");
    assert!(units.len() >= 11, "actions went missing: {units:?}");
}

#[test]
fn every_action_has_its_facts_docs_and_a_fixture() {
    let fixture = include_str!("../../tests/fixtures/every-action.yaml");
    for name in action_names() {
        let unit = ACTIONS.iter().find(|u| u.name() == name).unwrap();
        let facts = unit.facts();
        // An action that edits only within the match can run on statement regions, so it must
        // not need a whole function (whose body lies outside one statement).
        assert!(
            !(facts.edits_within_match && facts.needs == Needs::Function),
            "{name}: a function action cannot edit only within one statement"
        );
        assert!(
            crate::rules::reference::entry(name).is_some(),
            "{name} has no entry in src/rules/reference/reference.yaml"
        );
        assert!(
            fixture.contains(&format!("{name}:")),
            "{name} has no rule in tests/fixtures/every-action.yaml, which the property and \
             fuzz tests run every action through"
        );
    }
}

/// `source` patched by one rule whose `action:` is `action`, matching `pattern`.
fn patched(pattern: &str, action: &str, source: &str) -> String {
    use crate::compile::RuleSet;
    use crate::engine::{Engine, Target};
    use crate::versions::VersionEnv;
    let rule = format!("id: r\nmatch: {pattern:?}\naction: {action}\n");
    let rules = RuleSet::compile(crate::rules::load_yaml("r.yaml", &rule).unwrap()).unwrap();
    let versions = VersionEnv::default();
    let target = Target {
        path: "m.py",
        source,
    };
    Engine::new(&rules, &versions, None)
        .patch(target)
        .unwrap()
        .output
}

#[test]
fn each_family_plans_its_edit() {
    let src = "def f(a):\n    g(a, x=1, y=2)\n";
    assert_eq!(
        patched("g($$$A)", "{remove_kwargs: [x]}", src),
        "def f(a):\n    g(a, y=2)\n"
    );
    assert_eq!(
        patched("g($$$A)", "{set_kwargs: {z: \"3\"}}", src),
        "def f(a):\n    g(a, x=1, y=2, z=3)\n"
    );
    assert_eq!(
        patched("g($$$A)", "{delete: true}", src),
        "def f(a):\n    pass\n",
        "a block's only statement becomes `pass`"
    );
    let with_torch = format!("import torch\n{src}");
    assert_eq!(
        patched(
            "def f($$$P): $$$B",
            "{add_decorator: torch.no_grad}",
            &with_torch
        ),
        "import torch\n@torch.no_grad\ndef f(a):\n    g(a, x=1, y=2)\n"
    );
    assert_eq!(
        patched("def f($$$P): $$$B", "{rename: {from: a, to: b}}", src),
        "def f(b):\n    g(b, x=1, y=2)\n"
    );
}

#[test]
fn insertions_already_in_place_are_not_repeated() {
    let src = "def f(a):\n    g(a)\n    h()\n";
    assert_eq!(patched("g($X)", "{insert_after: \"h()\"}", src), src);
    assert_eq!(
        patched("g($X)", "{insert_before: \"h()\"}", src),
        "def f(a):\n    h()\n    g(a)\n    h()\n"
    );
}
