//! `group: NAME`: rules that apply together in each file, or not at all.

use crate::util::{patch, rules, versions};

const GROUP: &str = r#"id: branch
group: checkpointing
match: "x = layer(x)"
action: {replace: "x = checkpoint(layer, x)"}
expect: 1
on_miss: warn
---
id: flag
group: checkpointing
match: "def __init__(self): $$$B"
action: {append_body: "self.gradient_checkpointing = False"}
expect: 1
---
id: unrelated
match: "print($X)"
action: {replace: "log($X)"}
expect: {min: 0}
"#;

const MODEL: &str = "from lib import checkpoint, layer, log\n\n\nclass M:\n    def __init__(self):\n        self.n = 1\n\n    def forward(self, x):\n        x = layer(x)\n        print(x)\n        return x\n";

#[test]
fn a_group_applies_together() {
    let out = patch(&rules(GROUP), &versions(&[]), "m.py", MODEL).unwrap();
    assert!(
        out.output.contains("x = checkpoint(layer, x)"),
        "{}",
        out.output
    );
    assert!(
        out.output.contains("self.gradient_checkpointing = False"),
        "{}",
        out.output
    );
}

#[test]
fn a_member_that_misses_leaves_the_whole_group_out_and_is_named() {
    // The loop was rewritten upstream: `branch` misses (a warning), so `flag` must not land
    // alone; the rule outside the group still applies.
    let drifted = MODEL.replace("x = layer(x)", "x = self.layers(x)");
    let out = patch(&rules(GROUP), &versions(&[]), "m.py", &drifted).unwrap();
    assert!(
        !out.output.contains("gradient_checkpointing"),
        "{}",
        out.output
    );
    assert!(out.output.contains("log(x)"), "{}", out.output);
    assert_eq!(
        out.warnings.len(),
        1,
        "the member's drift is still reported"
    );
    let flag = out.rules.iter().find(|r| r.rule == "flag").unwrap();
    assert_eq!(flag.status, regraft::engine::RuleStatus::Failed);
    assert_eq!(
        flag.reason.as_deref(),
        Some("group `checkpointing` left out of this file: member `branch` failed")
    );
}

#[test]
fn a_when_probe_sees_the_output_of_the_rules_it_runs_after() {
    // `y` is active only where `x` wrote `marker()`: its probe must be read on x's output,
    // not on the file as read (which made the fixed-point check call it not idempotent).
    let chain = "id: x\nmatch: \"def forward($$$P): $$$B\"\naction: {prepend_body: \"marker()\"}\nexpect: 1\n---\nid: y\nafter: [x]\nwhen: {has: \"marker()\"}\nmatch: \"def forward($$$P): $$$B\"\nunless: \"second()\"\naction: {append_body: \"second()\"}\nexpect: 1\n";
    let source =
        "from lib import marker, second\n\n\nclass M:\n    def forward(self, x):\n        y = x\n";
    let out = patch(&rules(chain), &versions(&[]), "m.py", source)
        .unwrap_or_else(|e| panic!("{}", crate::util::render(&e)));
    assert_eq!(
        out.output,
        "from lib import marker, second\n\n\nclass M:\n    def forward(self, x):\n        marker()\n        y = x\n        second()\n"
    );
}

/// A group whose rules edit several files applies in all of them or none: a rename in one file
/// and not in its importer would be an ImportError.
#[test]
fn a_group_across_files_applies_in_all_or_none() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "def old_name():\n    return 1\n").unwrap();
    // The importer drifted: it imports the name differently, so its member misses (a warning).
    std::fs::write(dir.path().join("b.py"), "import a\n\nx = a.old_name()\n").unwrap();
    std::fs::write(
        dir.path().join("r.yaml"),
        "id: def\ngroup: rename\nfiles: [\"**/a.py\"]\nmatch: \"def old_name(): $$$B\"\naction: {replace: \"def new_name(): $$$B\"}\nexpect: 1\n---\nid: import\ngroup: rename\nfiles: [\"**/b.py\"]\nmatch: \"from a import old_name\"\naction: {replace: \"from a import new_name\"}\nexpect: 1\non_miss: warn\n",
    )
    .unwrap();
    let out = crate::util::regraft(
        &["apply", "-r", "r.yaml", "--write", "a.py", "b.py"],
        dir.path(),
    );
    let stderr = crate::util::text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(
            "warning: group `rename` left out of a.py too: member `import` failed in b.py"
        ),
        "{stderr}"
    );
    let a = std::fs::read_to_string(dir.path().join("a.py")).unwrap();
    assert_eq!(
        a, "def old_name():\n    return 1\n",
        "nothing of the group lands anywhere"
    );
}
