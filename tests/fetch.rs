//! Releases fetched on demand (`matrix --fetch`, `bisect`), from a local wheel folder through
//! pip's own `PIP_FIND_LINKS`/`PIP_NO_INDEX`, so no test needs the network.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::util::{regraft_command, snapshots, text};

/// Wheels of a package `demo` whose `f` renames `mask` to `attn_mask` in 2.1.0.
fn wheels(dir: &Path) {
    let script = r#"
import sys, zipfile
out = sys.argv[1]
for v in ["1.0.0", "1.1.0", "1.2.0", "1.3.0", "2.0.0", "2.1.0", "2.2.0", "2.3.0rc1"]:
    old = tuple(int(p) for p in v.split("rc")[0].split(".")) < (2, 1, 0)
    kw = "mask" if old else "attn_mask"
    body = f"def f(x, {kw}=None):\n    return x\n\n\ndef g(y):\n    return f(y, {kw}=1)\n"
    with zipfile.ZipFile(f"{out}/demo-{v}-py3-none-any.whl", "w") as z:
        z.writestr("demo/__init__.py", "")
        z.writestr("demo/core.py", body)
        z.writestr(f"demo-{v}.dist-info/METADATA", f"Metadata-Version: 2.1\nName: demo\nVersion: {v}\n")
        z.writestr(f"demo-{v}.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"demo-{v}.dist-info/RECORD", "")
"#;
    let status = Command::new("python3")
        .args(["-c", script, &dir.display().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn regraft_offline(args: &[&str], dir: &Path) -> std::process::Output {
    regraft_command(args, dir)
        .env("PIP_NO_INDEX", "1")
        .env("PIP_FIND_LINKS", dir.join("wheels"))
        .env("REGRAFT_CACHE", dir.join("cache"))
        .output()
        .unwrap()
}

const RULE: &str = "id: drop-mask\nfiles: [\"**/demo/core.py\"]\nmatch: \"f($$$A)\"\naction: {remove_kwargs: [mask]}\nexpect: 1\n";

#[test]
fn bisect_finds_the_release_that_changed_a_rule_in_log_n_fetches() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("wheels")).unwrap();
    wheels(&dir.path().join("wheels"));
    fs::write(dir.path().join("r.yaml"), RULE).unwrap();
    let out = regraft_offline(
        &["bisect", "drop-mask", "-r", "r.yaml", "--fetch", "demo>=1"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    // Seven releases: both ends, then halvings: 5 looked at, each fetched once.
    assert!(
        stdout.contains("5 of 7 releases looked at, 5 fetched"),
        "{stdout}"
    );
    let without_time: String = stdout
        .lines()
        .filter(|l| !l.ends_with(" s"))
        .map(|l| format!("{l}\n"))
        .collect();
    let _guard = snapshots(module_path!());
    insta::assert_snapshot!("bisect", without_time);
    // A second run finds every release in the cache.
    let again = regraft_offline(
        &["bisect", "drop-mask", "-r", "r.yaml", "--fetch", "demo>=1"],
        dir.path(),
    );
    assert!(
        text(&again.stdout).contains("5 of 7 releases looked at, 0 fetched"),
        "{}",
        text(&again.stdout)
    );
}

#[test]
fn matrix_fetches_the_releases_a_selection_names() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("wheels")).unwrap();
    wheels(&dir.path().join("wheels"));
    fs::write(dir.path().join("r.yaml"), RULE).unwrap();
    let out = regraft_offline(
        &[
            "matrix",
            "-r",
            "r.yaml",
            "--fetch",
            "demo==1.0.*,2.*",
            "--format",
            "json",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cells: Vec<(String, String)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["target"].as_str().unwrap().to_string(),
                r["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        cells,
        [
            ("demo==1.0.0".to_string(), "ok".to_string()),
            ("demo==2.0.0".to_string(), "ok".to_string()),
            ("demo==2.1.0".to_string(), "redundant".to_string()),
            ("demo==2.2.0".to_string(), "redundant".to_string()),
        ]
    );
}

#[test]
fn a_scheduled_drift_run_samples_each_major_and_the_newest_pre_release() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("wheels")).unwrap();
    wheels(&dir.path().join("wheels"));
    fs::write(dir.path().join("r.yaml"), RULE).unwrap();
    let targets = |extra: &[&str]| {
        let mut args = vec![
            "matrix", "-r", "r.yaml", "--fetch", "demo>=1", "--format", "json",
        ];
        args.extend(extra);
        let out = regraft_offline(&args, dir.path());
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut seen: Vec<String> = Vec::new();
        for row in rows.as_array().unwrap() {
            let target = row["target"].as_str().unwrap().to_string();
            if !seen.contains(&target) {
                seen.push(target);
            }
        }
        (seen, text(&out.stderr))
    };
    let (sample, stderr) = targets(&["--per", "sample", "--pre"]);
    assert_eq!(
        sample,
        [
            "demo==1.0.0",
            "demo==1.3.0",
            "demo==2.2.0",
            "demo==2.3.0rc1"
        ],
        "oldest, highest of each major, newest, and the newer pre-release"
    );
    assert!(
        stderr.contains("1.1.0"),
        "what the pick leaves out is named: {stderr}"
    );
    // Without `--pre` no pre-release, whatever the selection.
    let (plain, _) = targets(&[]);
    assert!(!plain.iter().any(|t| t.contains("rc")), "{plain:?}");
}

#[test]
fn fetching_without_pip_or_releases_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("wheels")).unwrap();
    fs::write(dir.path().join("r.yaml"), RULE).unwrap();
    let none = regraft_offline(
        &["matrix", "-r", "r.yaml", "--fetch", "demo>=1"],
        dir.path(),
    );
    assert_eq!(none.status.code(), Some(2));
    // pip itself finds nothing to list: its own words, and where releases would be cached.
    let stderr = text(&none.stderr);
    assert!(
        stderr.contains("listing the releases of demo failed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("No matching distribution found for demo"),
        "{stderr}"
    );
    // Releases exist, but none the selection admits.
    wheels(&dir.path().join("wheels"));
    let out = regraft_offline(
        &["matrix", "-r", "r.yaml", "--fetch", "demo>=3"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no release of demo matches `>=3` (the index has 2.2.0, 2.1.0"),
        "{}",
        text(&out.stderr)
    );
    let no_python = regraft_command(
        &["matrix", "-r", "r.yaml", "--fetch", "demo>=1"],
        dir.path(),
    )
    .env("REGRAFT_PYTHON", "/nonexistent/python")
    .env("REGRAFT_CACHE", dir.path().join("cache"))
    .output()
    .unwrap();
    assert_eq!(no_python.status.code(), Some(2));
    let stderr = text(&no_python.stderr);
    assert!(
        stderr.contains("listing the releases of demo failed"),
        "{stderr}"
    );
    assert!(stderr.contains("cache"), "{stderr}");
}

/// A diagnostic's words on one line: it wraps long lines behind a `│`.
fn flat(stderr: &str) -> String {
    let words = stderr.replace('│', " ");
    words.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn an_edited_cached_release_is_detected_at_use() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("wheels")).unwrap();
    wheels(&dir.path().join("wheels"));
    fs::write(dir.path().join("r.yaml"), RULE).unwrap();
    let args = ["matrix", "-r", "r.yaml", "--fetch", "demo==1.0.0"];
    let out = regraft_offline(&args, dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let release = dir.path().join("cache/demo-1.0.0");
    let manifest = fs::read_to_string(release.join(".complete-sha256")).unwrap();
    assert_eq!(manifest.lines().count(), 2, "{manifest}");
    // Unchanged, the cache is used as it is.
    let out = regraft_offline(&args, dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // An edited file, then an added one: each refused, naming the file.
    let core = release.join("demo/core.py");
    let original = fs::read_to_string(&core).unwrap();
    fs::write(&core, original.replace("return x", "return x  # planted")).unwrap();
    let out = regraft_offline(&args, dir.path());
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let words = flat(&stderr);
    assert!(
        words.contains("the cached release demo==1.0.0 was changed after it was fetched: demo/core.py does not have the content fetched"),
        "{stderr}"
    );
    assert!(stderr.contains("to fetch the release again"), "{stderr}");
    fs::write(&core, original).unwrap();
    fs::write(release.join("demo/extra.py"), "x = 1\n").unwrap();
    let out = regraft_offline(&args, dir.path());
    assert!(
        flat(&text(&out.stderr)).contains("demo/extra.py was not in the release"),
        "{}",
        text(&out.stderr)
    );
    // Removed, the release is fetched again.
    fs::remove_dir_all(&release).unwrap();
    let out = regraft_offline(&args, dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}
