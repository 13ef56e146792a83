//! `regraft test`: rule test cases, inline and in `<rule-id>.tests/`, against snapshots.

use crate::util::{regraft, text};
use std::fs;
use std::path::Path;

#[test]
fn the_patcher_port_passes_its_tests() {
    let out = regraft(
        &["test", "-r", "examples/patcher"],
        Path::new(env!("CARGO_MANIFEST_DIR")),
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.trim_end().ends_with("28 passed, 0 failed"),
        "{stdout}"
    );
}

#[test]
fn the_trl_port_passes_its_tests() {
    let out = regraft(
        &["test", "-r", "examples/trl"],
        Path::new(env!("CARGO_MANIFEST_DIR")),
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.trim_end().ends_with("12 passed, 0 failed"),
        "{stdout}"
    );
}

#[test]
fn every_shipped_rule_passes_its_tests() {
    let out = regraft(
        &["test", "-r", "rules"],
        Path::new(env!("CARGO_MANIFEST_DIR")),
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.trim_end().ends_with(" passed, 0 failed"), "{stdout}");
    // Each shipped patch has a case that patches, one the version gate skips, and a near miss;
    // each pin one where it holds, one the gate skips, and one where it catches drift.
    let rules =
        regraft::rules::load_path(&Path::new(env!("CARGO_MANIFEST_DIR")).join("rules")).unwrap();
    assert!(rules.len() >= 6);
    for rule in &rules {
        let kinds = if rule.action.is_check() {
            ["holds", "gate-skips", "drifts"]
        } else {
            ["patches", "gate-skips", "near-miss"]
        };
        for kind in kinds {
            let prefix = format!("PASS {} › {kind}", rule.id.value);
            assert!(
                stdout.contains(&prefix),
                "{} lacks a `{kind}` case:\n{stdout}",
                rule.id.value
            );
        }
    }
}

const RULE: &str = r#"id: demo
match: "self.norm($X)"
action: {replace: "self.final_norm($X)"}
expect: {min: 0}
tests:
  - name: renames
    before: "y = self.norm(x)\n"
  - name: untouched
    before: "y = self.other(x)\n"
    unchanged: true
  - name: wrongly-unchanged
    before: "z = self.norm(x)\n"
    unchanged: true
"#;

#[test]
fn failing_and_updated_cases() {
    let _snapshots = crate::util::snapshots(module_path!());
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("rules")).unwrap();
    fs::write(dir.path().join("rules/demo.yaml"), RULE).unwrap();
    let first = regraft(&["test"], dir.path());
    assert_eq!(first.status.code(), Some(1));
    insta::assert_snapshot!("failing_run", text(&first.stdout));

    let update = regraft(&["test", "--update"], dir.path());
    assert!(text(&update.stdout).contains("UPDATED demo › renames"));
    assert_eq!(
        fs::read_to_string(dir.path().join("rules/demo.tests/renames.expected.py")).unwrap(),
        "y = self.final_norm(x)\n"
    );
    // Only the case that is genuinely wrong still fails.
    let again = regraft(&["test"], dir.path());
    assert_eq!(again.status.code(), Some(1));
    assert!(
        text(&again.stdout).ends_with("2 passed, 1 failed\n"),
        "{}",
        text(&again.stdout)
    );

    fs::write(
        dir.path().join("rules/demo.tests/renames.expected.py"),
        "y = self.norm(x)\n",
    )
    .unwrap();
    let mismatch = regraft(&["test", "--filter", "demo"], dir.path());
    insta::assert_snapshot!("snapshot_mismatch", text(&mismatch.stdout));
}

#[test]
fn a_filter_that_selects_nothing_fails_and_rules_without_cases_are_listed() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("rules")).unwrap();
    fs::write(dir.path().join("rules/demo.yaml"), RULE).unwrap();
    fs::write(
        dir.path().join("rules/bare.yaml"),
        "id: bare\nmatch: \"f($X)\"\naction: {delete: true}\n",
    )
    .unwrap();
    let none = regraft(&["test", "--filter", "nothing-like-this"], dir.path());
    assert_eq!(none.status.code(), Some(2));
    assert!(text(&none.stderr).contains("no rule id contains `nothing-like-this`"));
    let bare = regraft(&["test", "--filter", "bare"], dir.path());
    assert_eq!(bare.status.code(), Some(0), "{}", text(&bare.stderr));
    assert!(
        text(&bare.stdout).contains("NO TESTS bare"),
        "{}",
        text(&bare.stdout)
    );
}

#[test]
fn a_case_whose_rule_still_passes_with_its_matches_taken_away_fails_as_a_negative_control() {
    let dir = tempfile::tempdir().unwrap();
    // `pass` deleted is `pass` again: the pin cannot fail, and its case says so.
    fs::write(
        dir.path().join("pins.yaml"),
        "id: empty-branch\nmatch: 'pass'\naction: {check: {}}\nexpect: 1\ntests:\n  - name: holds\n    before: \"if a:\\n    pass\\n\"\n    unchanged: true\n---\nid: keeps-call\nmatch: 'f($X)'\naction: {check: {}}\nexpect: 1\ntests:\n  - name: holds\n    before: \"if a:\\n    f(1)\\n\"\n    unchanged: true\n",
    )
    .unwrap();
    let out = regraft(&["test", "-r", "pins.yaml"], dir.path());
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("FAIL empty-branch › holds: negative control: with the 1 statement(s) it matched deleted (lines 2), rule `empty-branch` still passes: nothing shows it can fail when upstream changes; give `expect` a floor or narrow the pattern"),
        "{stdout}"
    );
    // The other pin fails once its call is gone: its control is killed and its case passes.
    assert!(stdout.contains("PASS keeps-call › holds"), "{stdout}");
    assert!(
        stdout.trim_end().ends_with("1 passed, 1 failed"),
        "{stdout}"
    );
}

/// Rules whose `effect` holds, changes nothing, is stated wrongly, raises, or has no case to
/// be judged on.
const EFFECTS: &str = r#"id: scale-fix
match: 'return x * 2'
action: {replace: 'return x * 3'}
effect: {value: scaled(2), original: 4, patched: 6}
tests:
  - name: simple
    before: "def scaled(x):\n    return x * 2\n"
---
id: no-effect
match: 'y = x + 0'
action: {replace: 'y = 0 + x'}
effect: {value: f(5)}
tests:
  - name: same
    before: "def f(x):\n    y = x + 0\n    return y\n"
---
id: wrong-expectation
match: 'return x * 2'
action: {replace: 'return x * 3'}
effect:
  run: "r = [scaled(1)]"
  value: r
  patched: '[2]'
tests:
  - name: simple
    before: "def scaled(x):\n    return x * 2\n"
---
id: unjudged
match: 'return x * 2'
action: {replace: 'return x * 3'}
effect: {value: 'scaled(1)'}
tests:
  - name: nothing
    before: "def other(x):\n    return x\n"
    unchanged: true
---
id: raises
match: 'return x * 2'
action: {replace: 'return x // 0'}
effect: {value: 'scaled(1)'}
tests:
  - name: simple
    before: "def scaled(x):\n    return x * 2\n"
"#;

#[test]
fn an_effect_is_judged_by_cpython_on_each_case_the_rule_changes() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("effects.yaml"), EFFECTS).unwrap();
    let update = regraft(&["test", "-r", "effects.yaml", "--update"], dir.path());
    assert!(text(&update.stdout).contains("UPDATED scale-fix › simple"));
    let out = regraft(&["test", "-r", "effects.yaml"], dir.path());
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    for line in [
        "PASS scale-fix › simple",
        "FAIL no-effect › same: effect: `f(5)` is 5 on the original and on the patched module: the patch changes nothing it computes",
        "FAIL wrong-expectation › simple: effect: on the patched module `r` is [3], not [2]",
        "PASS unjudged › nothing",
        "FAIL unjudged › effect: no case of this rule patches anything, so its `effect` is never judged: add a case it changes",
        "FAIL raises › simple: effect: `scaled(1)` cannot be read on the patched module: ZeroDivisionError: integer division or modulo by zero",
    ] {
        assert!(stdout.contains(line), "{line}\n---\n{stdout}");
    }
    // No interpreter: the case fails, saying how to give one.
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_regraft"));
    command
        .args(["test", "-r", "effects.yaml", "--filter", "scale-fix"])
        .current_dir(dir.path())
        .env("REGRAFT_PYTHON", dir.path().join("no-such-python"));
    let none = command.output().unwrap();
    assert_eq!(none.status.code(), Some(1));
    assert!(
        text(&none.stdout).contains("set REGRAFT_PYTHON to a CPython interpreter"),
        "{}",
        text(&none.stdout)
    );
}

#[test]
fn an_effect_that_is_not_python_is_refused_when_the_rule_loads() {
    let dir = tempfile::tempdir().unwrap();
    let base = "id: r\nmatch: 'f($X)'\naction: {replace: 'g($X)'}\n";
    for (effect, says) in [
        ("effect: {run: 'x = 1'}", "give `value`"),
        ("effect: {value: 'x = 1'}", "must be a Python expression"),
        (
            "effect: {value: 'x', run: 'def ('}",
            "must be Python statements",
        ),
        (
            "effect: {value: 'x', orignal: 1}",
            "did you mean `original`?",
        ),
        ("effect: 'x'", "a mapping"),
    ] {
        fs::write(dir.path().join("r.yaml"), format!("{base}{effect}\n")).unwrap();
        let out = regraft(&["lint", "r.yaml"], dir.path());
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{effect}: {stderr}");
        assert!(stderr.contains(says), "{effect}: {stderr}");
    }
}

#[test]
fn update_shows_what_it_wrote_and_review_writes_only_what_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    crate::util::regraft_ok(&["new", "rule", "demo"], dir.path());
    let snapshot = dir.path().join("rules/demo.tests/patches-1.0.expected.py");
    let rule = dir.path().join("rules/demo.yaml");
    let edited = fs::read_to_string(&rule)
        .unwrap()
        .replace("new_call", "newer_call");
    fs::write(&rule, edited).unwrap();

    // Review, answered "skip" then (input ended) nothing: the snapshot stays; the case fails.
    let skipped = crate::util::regraft_with_stdin(&["test", "--review"], dir.path(), "s\n");
    assert_eq!(skipped.status.code(), Some(1));
    let said = text(&skipped.stdout);
    assert!(
        said.contains("-result = new_call(1, key=2)\n+result = newer_call(1, key=2)"),
        "{said}"
    );
    assert!(
        said.contains("write it? [a]ccept, [s]kip: skipped"),
        "{said}"
    );
    assert!(fs::read_to_string(&snapshot).unwrap().contains("new_call("));
    let ended = crate::util::regraft_with_stdin(&["test", "--review"], dir.path(), "");
    assert_eq!(ended.status.code(), Some(1));

    // Accepted: written, and the case passes.
    let accepted = crate::util::regraft_with_stdin(&["test", "--review"], dir.path(), "a\n");
    assert_eq!(
        accepted.status.code(),
        Some(0),
        "{}",
        text(&accepted.stdout)
    );
    assert!(
        fs::read_to_string(&snapshot)
            .unwrap()
            .contains("newer_call(")
    );

    // --update writes every difference and shows it as a diff.
    let again = fs::read_to_string(&rule)
        .unwrap()
        .replace("newer_call", "newest_call");
    fs::write(&rule, again).unwrap();
    let updated = regraft(&["test", "--update"], dir.path());
    assert_eq!(updated.status.code(), Some(0));
    let said = text(&updated.stdout);
    assert!(
        said.contains("UPDATED demo › patches-1.0: wrote rules/demo.tests/patches-1.0.expected.py"),
        "{said}"
    );
    assert!(said.contains("+result = newest_call(1, key=2)"), "{said}");
    assert!(
        regraft(&["test", "--update", "--review"], dir.path())
            .status
            .code()
            == Some(2)
    );
}
