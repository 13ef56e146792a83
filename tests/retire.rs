//! Retirement (`fixed_upstream`), rule families and `matrix --suggest`.

use std::fs;

use crate::util::{regraft, round_trip, snapshots, text};

const RULE: &str = "id: r\nrequires: {demo: \">=1\"}\nfixed_upstream: {demo: \">=2\"}\nmatch: \"x = layer($$$A)\"\naction: {replace: \"x = layer2($$$A)\"}\nexpect: 1\n";

fn tree(dir: &std::path::Path, name: &str, body: &str) {
    fs::create_dir_all(dir.join(name)).unwrap();
    fs::write(dir.join(name).join("m.py"), body).unwrap();
}

#[test]
fn a_retired_rule_is_skipped_in_apply_and_retired_in_the_matrix() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("r.yaml"), RULE).unwrap();
    tree(dir.path(), "v1", "x = layer(1)\n");
    // In 2.x upstream removed the call: without retirement that would be drift.
    tree(dir.path(), "v2", "y = 1\n");
    let out = regraft(
        &[
            "apply", "-r", "r.yaml", "v2/m.py", "--with", "demo=2.1", "--check",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("r retired (fixed upstream in demo >=2 (2.1))"),
        "{}",
        text(&out.stderr)
    );
    let out = regraft(
        &[
            "matrix",
            "-r",
            "r.yaml",
            "--target",
            "demo=1.5:v1",
            "--target",
            "demo=2.1:v2",
            "--format",
            "json",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows[0]["status"], "ok");
    assert_eq!(rows[1]["status"], "retired");
    round_trip(RULE);
    // `group` and `family` are written back in both syntaxes too.
    let grouped = round_trip(&RULE.replace("id: r\n", "id: r\ngroup: g\nfamily: f\n"));
    assert_eq!(grouped.rules[0].group.as_ref().unwrap().value, "g");
    assert!(grouped.dsl.contains("family f"), "{}", grouped.dsl);
}

#[test]
fn matrix_suggest_proposes_bounds_from_what_it_saw() {
    let dir = tempfile::tempdir().unwrap();
    let open = RULE.replace("fixed_upstream: {demo: \">=2\"}\n", "");
    fs::write(dir.path().join("r.yaml"), &open).unwrap();
    fs::write(
        dir.path().join("gone.yaml"),
        "id: gone\nmatch: \"old_api($X)\"\naction: {replace: \"new_api($X)\"}\nexpect: 1\n",
    )
    .unwrap();
    // Upstream dropped the keyword in 2.0 itself: the patch is redundant from there on.
    fs::write(
        dir.path().join("kw.yaml"),
        "id: kw\nmatch: \"attend($$$A)\"\naction: {remove_kwargs: [dropout]}\nexpect: 1\n",
    )
    .unwrap();
    // A call upstream removed in 3.0 without a replacement: the rule's shape is gone.
    fs::write(
        dir.path().join("legacy.yaml"),
        "id: legacy\nmatch: \"legacy($X)\"\naction: {delete: true}\nexpect: 1\n",
    )
    .unwrap();
    let v1 = "x = layer(1)\nold_api(1)\nattend(q, dropout=0.1)\nlegacy(1)\n";
    tree(dir.path(), "v1", v1);
    tree(
        dir.path(),
        "v2",
        "x = layer2(1)\nold_api(1)\nattend(q)\nlegacy(1)\n",
    );
    tree(dir.path(), "v3", "x = layer2(1)\nnew_api(1)\nattend(q)\n");
    let out = regraft(
        &[
            "matrix",
            "-r",
            "r.yaml",
            "-r",
            "gone.yaml",
            "-r",
            "kw.yaml",
            "-r",
            "legacy.yaml",
            "--suggest",
            "--target",
            "demo=3.0:v3",
            "--target",
            "demo=1.0:v1",
            "--target",
            "demo=2.0:v2",
        ],
        dir.path(),
    );
    let _guard = snapshots(module_path!());
    insta::assert_snapshot!("suggest", text(&out.stderr));
}

#[test]
fn lint_checks_a_family_for_overlaps_and_holes() {
    let dir = tempfile::tempdir().unwrap();
    let member = |id: &str, range: &str| {
        format!(
            "id: {id}\nfamily: layer-fix\nrequires: {{transformers: \"{range}\"}}\nmatch: \"f($X)\"\naction: {{replace: \"g($X)\"}}\nexpect: 1\n"
        )
    };
    let rules = [
        member("old", ">=4.40,<4.50"),
        member("mid", ">=4.48,<4.52"),
        member("new", ">=4.55,<5"),
    ]
    .join("---\n");
    fs::write(dir.path().join("r.yaml"), rules).unwrap();
    let out = regraft(&["lint", "-r", "r.yaml"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let _guard = snapshots(module_path!());
    insta::assert_snapshot!("family", text(&out.stderr));
}
