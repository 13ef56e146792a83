//! Check-only rules (pins): rules that edit nothing and assert what a patch depends on.

use std::fs;

use regraft::rules::load_yaml;

use crate::util::{patch, regraft, render, root, round_trip, rules, snapshots, text, versions};

#[test]
fn the_flax_pin_fails_on_the_pre_fix_shape_and_holds_on_the_fixed_one() {
    let _guard = snapshots(module_path!());
    let run = |dir: &str| {
        regraft(
            &["apply", "-r", "examples/flax-pin/pin.yaml", dir, "--check"],
            root(),
        )
    };
    let after = run("examples/flax-pin/after");
    assert_eq!(after.status.code(), Some(0), "{}", text(&after.stderr));
    assert!(text(&after.stderr).contains("holds (1 match)"));
    let before = run("examples/flax-pin/before");
    assert_eq!(before.status.code(), Some(3));
    insta::assert_snapshot!("flax_pin_fails", text(&before.stderr));
}

const LAYER: &str = "class Layer(nn.Module):\n    def forward(self, hidden, mask=None, cache=None):\n        return hidden\n\n\nclass Model(nn.Module):\n    def forward(self, x, m):\n        for layer in self.layers:\n            x = layer(x, m)\n        return x\n";

#[test]
fn a_signature_pin_names_what_upstream_changed() {
    let rule = "id: pin\nmatch: \"x = layer($$$A)\"\naction:\n  check:\n    signature: {of: Layer.forward, has: [hidden, mask], order: [hidden, mask]}\nexpect: 1\n";
    assert!(patch(&rules(rule), &versions(&[]), "m.py", LAYER).is_ok());
    let changed = LAYER.replace(
        "(self, hidden, mask=None,",
        "(self, mask=None, hidden=None,",
    );
    let err = patch(&rules(rule), &versions(&[]), "m.py", &changed).unwrap_err();
    let _guard = snapshots(module_path!());
    insta::assert_snapshot!("signature_pin_fails", render(&err));
    // A pin on the definition itself points at its parameter list, not its whole body.
    let on_def = "id: pin\ninside: {class: Layer}\nmatch: \"def forward($$$P): $$$B\"\naction:\n  check:\n    signature: {of: Layer.forward, order: [hidden, mask]}\nexpect: 1\n";
    let err = patch(&rules(on_def), &versions(&[]), "m.py", &changed).unwrap_err();
    insta::assert_snapshot!("signature_pin_on_a_def_fails", render(&err));
}

#[test]
fn exists_and_absent_assert_the_count() {
    let exists = "id: pin\nmatch: \"self.rotary_emb = $X\"\naction: {check: {exists: true}}\n";
    let loaded = load_yaml("r.yaml", exists).unwrap();
    assert_eq!(loaded[0].expect.unwrap().min, 1);
    let err = patch(&rules(exists), &versions(&[]), "m.py", LAYER).unwrap_err();
    assert!(
        render(&err).contains("expects at least 1"),
        "{}",
        render(&err)
    );
    let absent = "id: pin\nmatch: \"x = layer($$$A)\"\naction: {check: {absent: true}}\n";
    let err = patch(&rules(absent), &versions(&[]), "m.py", LAYER).unwrap_err();
    assert!(
        render(&err).contains("expects exactly 0"),
        "{}",
        render(&err)
    );
    let both = "id: pin\nmatch: \"f($X)\"\naction: {check: {exists: true, absent: true}}\n";
    assert!(crate::util::rule_error(both).contains("cannot both hold"));
}

#[test]
fn a_rule_without_an_action_is_a_pin_in_both_syntaxes() {
    let rule = "id: pin\nmatch: \"x = layer($$$A)\"\nexpect: 1\n";
    let written = round_trip(rule);
    assert!(written.rules[0].action.is_check());
    assert!(!written.yaml.contains("action"), "{}", written.yaml);
    let out = patch(&rules(rule), &versions(&[]), "m.py", LAYER).unwrap();
    assert_eq!(out.output, LAYER, "a pin edits nothing");
}

#[test]
fn a_failing_pin_follows_on_miss_and_is_missing_in_the_matrix() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("t")).unwrap();
    fs::write(
        dir.path().join("t/m.py"),
        LAYER.replace("x = layer(x, m)", "x = layer(m, x)"),
    )
    .unwrap();
    let pin = |policy: &str| {
        format!(
            "id: pin\nmatch: \"x = layer($$$A)\"\naction: {{check: {{binds_as_named: Layer.forward, aliases: {{hidden: [x], mask: [m]}}}}}}\nexpect: 1\non_miss: {policy}\n"
        )
    };
    fs::write(dir.path().join("warn.yaml"), pin("warn")).unwrap();
    let out = regraft(
        &["apply", "-r", "warn.yaml", "t/m.py", "--check"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("warning (on_miss: warn)"),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stderr).contains("argument 1 `m` binds parameter `hidden`"));
    fs::write(dir.path().join("error.yaml"), pin("error")).unwrap();
    let out = regraft(
        &[
            "matrix",
            "-r",
            "error.yaml",
            "--target",
            "demo=1.0:t",
            "--format",
            "json",
        ],
        dir.path(),
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows[0]["status"], "missing", "{rows}");
    // The aliases let the fixed call hold.
    fs::write(dir.path().join("t/m.py"), LAYER).unwrap();
    let out = regraft(
        &[
            "matrix",
            "-r",
            "error.yaml",
            "--target",
            "demo=1.0:t",
            "--format",
            "json",
        ],
        dir.path(),
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows[0]["status"], "ok", "{rows}");
}

#[test]
fn a_pin_can_ask_for_a_top_level_function_and_a_last_statement() {
    let holds =
        |rule: &str, source: &str| patch(&rules(rule), &versions(&[]), "m.py", source).is_ok();
    let top = "id: pin\nmatch: 'def $F($$$P): $$$B'\nwhere: {F: {regex: '^helper$'}}\nat: top_level\nexpect: 1\n";
    assert!(holds(top, "def helper(x):\n    return x\n"));
    assert!(
        holds(top, "@cache\ndef helper(x):\n    return x\n"),
        "decorated, still top level"
    );
    assert!(
        !holds(top, "class A:\n    def helper(self):\n        pass\n"),
        "a method"
    );
    assert!(
        !holds(top, "def outer():\n    def helper():\n        pass\n"),
        "a nested function"
    );
    assert!(
        !holds(top, "if X:\n    def helper():\n        pass\n"),
        "under a condition"
    );
    let last = "id: pin\ninside: {function: forward}\nmatch: 'return $X'\nat: last\nexpect: 1\n";
    assert!(
        holds(
            last,
            "def forward(x):\n    y = x\n    return y\n    # the end\n"
        ),
        "a comment after it does not count"
    );
    assert!(holds(last, "def forward(x): return x\n"), "a one-line body");
    assert!(!holds(last, "def forward(x):\n    return x\n    x = 1\n"));
    assert!(
        !holds(
            last,
            "def forward(x):\n    if x:\n        return x\n    return None\n"
        ),
        "the early return is last of the `if`, but two matches"
    );
    // Both, on a run: its last statement is the last of the module.
    let both = "id: pin\nmatch: |\n  A = 1\n  B = 2\nat: [top_level, last]\nexpect: 1\n";
    assert!(holds(both, "A = 1\nB = 2\n"));
    assert!(!holds(both, "A = 1\nB = 2\nC = 3\n"));
    assert_eq!(round_trip(both).rules[0].at.len(), 2);
    let bad = crate::util::rule_error("id: pin\nmatch: 'x'\nat: lats\n");
    assert!(bad.contains("did you mean `last`"), "{bad}");
}
