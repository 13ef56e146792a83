//! `regraft matrix`: each status on small fixture trees, formats and exit codes.

use crate::util::regraft;
use std::fs;

const RULES: &str = r#"id: ok-rule
files: ["**/mod.py"]
match: "h($X)"
action: {replace: "k($X)"}
expect: 1
---
id: gated
requires: {demo: ">=2"}
match: "h($X)"
action: {replace: "k($X)"}
expect: 1
---
id: missing
match: "g($X)"
action: {replace: "k($X)"}
expect: 1
---
id: conflict-a
match: "f($$$A)"
action: {remove_kwargs: [a]}
expect: 1
---
id: conflict-b
match: "f($$$A)"
action: {set_kwargs: {a: "2"}}
expect: 1
---
id: broken
match: "$Y = layer($$$A)"
action: {kwargs_to_positional: {signature: Layer.forward}}
expect: 1
---
id: already-done
match: "h($X)"
action: {remove_kwargs: [zzz]}
expect: 1
---
id: elsewhere
files: ["**/other/*.py"]
match: "h($X)"
action: {replace: "k($X)"}
expect: 1
"#;

fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("rules.yaml"), RULES).unwrap();
    for version in ["1.0", "2.0"] {
        let tree = dir.path().join(format!("demo-{version}/pkg"));
        fs::create_dir_all(&tree).unwrap();
        fs::write(tree.join("mod.py"), "f(x, a=1)\nh(y)\nz = layer(x, b=2)\n").unwrap();
    }
    dir
}

#[test]
fn every_status_on_fixture_trees() {
    let dir = fixture();
    let out = regraft(
        &[
            "matrix",
            "-r",
            "rules.yaml",
            "--target",
            "demo=1.0:demo-1.0",
            "--target",
            "demo=2.0:demo-2.0",
            "--format",
            "json",
        ],
        dir.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let status = |rule: &str, target: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["rule"] == rule && r["target"] == target)
            .unwrap_or_else(|| panic!("{rule} {target}"))
            .clone()
    };
    let ok = status("ok-rule", "demo==1.0");
    assert_eq!(ok["status"], "ok");
    assert_eq!(ok["matches"], 1);
    assert_eq!(ok["files"], serde_json::json!(["pkg/mod.py"]));
    assert_eq!(status("gated", "demo==1.0")["status"], "inactive");
    let redundant = status("already-done", "demo==1.0");
    assert_eq!(redundant["status"], "redundant");
    assert_eq!(redundant["matches"], 1);
    assert_eq!(status("gated", "demo==2.0")["status"], "ok");
    let missing = status("missing", "demo==1.0");
    assert_eq!(missing["status"], "missing");
    assert!(
        missing["message"]
            .as_str()
            .unwrap()
            .contains("found 0, wanted exactly 1 in pkg/mod.py")
    );
    assert_eq!(status("conflict-a", "demo==1.0")["status"], "conflict");
    assert_eq!(status("conflict-b", "demo==1.0")["status"], "conflict");
    let broken = status("broken", "demo==1.0");
    assert_eq!(broken["status"], "error");
    assert!(
        broken["message"]
            .as_str()
            .unwrap()
            .contains("no definition of `Layer.forward`")
    );
    let elsewhere = status("elsewhere", "demo==2.0");
    assert_eq!(elsewhere["status"], "missing");
    assert!(
        elsewhere["message"]
            .as_str()
            .unwrap()
            .contains("no file of demo-2.0 is selected")
    );
}

#[test]
fn markdown_and_human_tables() {
    let _snapshots = crate::util::snapshots(module_path!());
    let dir = fixture();
    let args = [
        "matrix",
        "-r",
        "rules.yaml",
        "--target",
        "demo=1.0:demo-1.0",
        "--target",
        "demo=2.0:demo-2.0",
    ];
    let md = regraft(&[&args[..], &["--format", "markdown"]].concat(), dir.path());
    insta::assert_snapshot!("markdown", String::from_utf8_lossy(&md.stdout));
    let human = regraft(&args, dir.path());
    insta::assert_snapshot!("human", String::from_utf8_lossy(&human.stdout));
    // Releases as rows: the same cells, read the other way.
    let by_release = regraft(&[&args[..], &["--layout", "releases"]].concat(), dir.path());
    insta::assert_snapshot!(
        "human-by-release",
        String::from_utf8_lossy(&by_release.stdout)
    );
}

#[test]
fn all_ok_or_inactive_exits_zero_and_bad_targets_exit_two() {
    let dir = fixture();
    fs::write(
        dir.path().join("one.yaml"),
        RULES.split("---").next().unwrap(),
    )
    .unwrap();
    let out = regraft(
        &["matrix", "-r", "one.yaml", "--target", "demo=1.0:demo-1.0"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0));
    let bad = regraft(
        &["matrix", "-r", "one.yaml", "--target", "demo:demo-1.0"],
        dir.path(),
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not PKG=VERSION:DIR"));
}

#[test]
fn site_packages_names_are_normalised() {
    let dir = fixture();
    let info = dir.path().join("site/Demo_Pkg-2.0.dist-info");
    fs::create_dir_all(&info).unwrap();
    fs::write(
        info.join("METADATA"),
        "Metadata-Version: 2.1\nName: Demo_Pkg\nVersion: 2.0\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("gate.yaml"),
        "id: gate\nrequires: {demo-pkg: \">=2\"}\nmatch: \"h($X)\"\naction: {replace: \"k($X)\"}\nexpect: 1\n",
    )
    .unwrap();
    let out = regraft(
        &[
            "apply",
            "-r",
            "gate.yaml",
            "--site-packages",
            "site",
            "demo-1.0/pkg/mod.py",
        ],
        dir.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("k(y)"));
}

#[test]
fn files_globs_select_the_same_files_as_apply() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("pkg/transformers");
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::write(tree.join("trainer.py"), "x = h(1)\n").unwrap();
    std::fs::write(
        dir.path().join("r.yaml"),
        "id: t\nfiles: [\"**/transformers/trainer.py\"]\nmatch: \"h($X)\"\naction: {replace: \"k($X)\"}\nexpect: 1\n",
    )
    .unwrap();
    let apply = regraft(
        &[
            "apply",
            "-r",
            "r.yaml",
            "--check",
            "pkg/transformers/trainer.py",
        ],
        dir.path(),
    );
    assert_eq!(
        apply.status.code(),
        Some(1),
        "apply selects and would patch"
    );
    let matrix = regraft(
        &[
            "matrix",
            "-r",
            "r.yaml",
            "--target",
            "transformers=4.57.6:pkg/transformers",
            "--format",
            "json",
        ],
        dir.path(),
    );
    let rows: serde_json::Value = serde_json::from_slice(&matrix.stdout).unwrap();
    assert_eq!(rows[0]["status"], "ok", "{rows}");
}

#[test]
fn identical_files_are_surveyed_once_unless_a_module_they_read_changed() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("rules.yaml"),
        r#"id: positional
files: ["**/mod.py"]
match: "$Y = layer($$$A)"
action: {kwargs_to_positional: {signature: Layer.forward}}
expect: 1
"#,
    )
    .unwrap();
    let layers =
        |params: &str| format!("class Layer:\n    def forward(self, {params}):\n        pass\n");
    for (version, params) in [
        ("1.0", "x, b=None"),
        ("2.0", "x, b=None"),
        ("3.0", "x, c=None"),
    ] {
        let tree = dir.path().join(format!("demo-{version}/pkg"));
        fs::create_dir_all(&tree).unwrap();
        fs::write(tree.join("__init__.py"), "").unwrap();
        fs::write(
            tree.join("mod.py"),
            "from .layers import Layer\n\nz = layer(x, b=2)\n",
        )
        .unwrap();
        fs::write(tree.join("layers.py"), layers(params)).unwrap();
    }
    let out = regraft(
        &[
            "-v",
            "matrix",
            "-r",
            "rules.yaml",
            "--target",
            "demo=1.0:demo-1.0",
            "--target",
            "demo=2.0:demo-2.0",
            "--target",
            "demo=3.0:demo-3.0",
            "--format",
            "json",
        ],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    // 2.0 repeats 1.0 byte for byte; 3.0's `mod.py` does too, but the module it reads differs.
    assert!(
        stderr.contains("9 file(s) in 3 target(s); 1 took the survey of an identical file"),
        "{stderr}"
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let status = |target: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["target"] == target)
            .map(|r| r["status"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert_eq!(status("demo==1.0"), "ok", "{rows}");
    assert_eq!(status("demo==2.0"), "ok", "{rows}");
    assert_ne!(status("demo==3.0"), "ok", "{rows}");
}

#[test]
fn each_pin_says_whether_any_release_made_it_fail() {
    let root = crate::util::root();
    let pin = "examples/flax-pin/pin.yaml";
    let out = crate::util::regraft(
        &[
            "matrix",
            "-r",
            pin,
            "--target",
            "transformers=1:examples/flax-pin/before",
            "--target",
            "transformers=2:examples/flax-pin/after",
        ],
        root,
    );
    let stderr = crate::util::text(&out.stderr);
    assert!(
        stderr.contains("pin `flax-whisper-decoder-layer-call-order` failed on 1 of 2 release(s) where it is active: transformers==1\n"),
        "{stderr}"
    );
    let out = crate::util::regraft(
        &[
            "matrix",
            "-r",
            pin,
            "--target",
            "transformers=2:examples/flax-pin/after",
        ],
        root,
    );
    let stderr = crate::util::text(&out.stderr);
    assert!(
        stderr.contains("pin `flax-whisper-decoder-layer-call-order` held on all 1 release(s) where it is active: none of them shows it can fail\n"),
        "{stderr}"
    );
}
