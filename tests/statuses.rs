//! Statuses say what happened: `--check` with a broken file still names every file that would
//! change; a warned miss reads as drift warned about, not as a failure, and exits 0; `--verify`
//! says "every rule applies cleanly" only when no rule drifted, naming the ones that did.

use crate::util::{regraft, text};

fn words(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn check_with_a_broken_file_still_names_every_file_that_would_change() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("r.yaml"),
        "id: r\nmatch: \"f($X)\"\naction: {replace: \"g($X)\"}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("a.py"), "f(1)\n").unwrap();
    std::fs::write(dir.path().join("b.py"), "def (:\n").unwrap();
    std::fs::write(dir.path().join("c.py"), "f(2)\n").unwrap();
    let out = regraft(
        &["apply", "-r", "r.yaml", "--check", "a.py", "b.py", "c.py"],
        dir.path(),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("b.py is not valid Python"), "{stderr}");
    for line in [
        "would patch a.py\n",
        "would patch c.py\n",
        "check: 2 of 3 files would change; 1 file failed (above)\n",
    ] {
        assert!(stderr.contains(line), "{line}: {stderr}");
    }
}

#[test]
fn a_warned_miss_beside_another_rule_is_a_warning_and_verify_names_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("w.yaml"),
        "id: r\nmatch: \"f($X)\"\naction: {replace: \"g($X)\"}\n---\nid: w\nmatch: \"h($X)\"\naction: {replace: \"k($X)\"}\nexpect: 1\non_miss: warn\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("a.py"), "f(1)\n").unwrap();
    let applied = regraft(&["apply", "-r", "w.yaml", "a.py"], dir.path());
    let stderr = text(&applied.stderr);
    assert_eq!(applied.status.code(), Some(0), "{stderr}");
    assert_eq!(text(&applied.stdout), "g(1)\n");
    assert!(stderr.contains("warning (on_miss: warn)"), "{stderr}");
    assert!(
        stderr.contains("a.py: w drifted, warned (on_miss: warn) (0 matches)"),
        "{stderr}"
    );
    assert!(!stderr.contains("w failed"), "{stderr}");
    let verify = regraft(&["apply", "-r", "w.yaml", "--verify", "a.py"], dir.path());
    let stderr = text(&verify.stderr);
    assert_eq!(verify.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("verify: drift warned about in `w` (1 of 1 file would change)"),
        "{stderr}"
    );
    assert!(!stderr.contains("cleanly"), "{stderr}");
}

#[test]
fn verify_never_says_clean_beside_a_drift_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("v.yaml"),
        "id: p\nfiles: [\"**/nothere.py\"]\nmatch: \"f($X)\"\nexpect: 1\n---\nid: r\nmatch: \"f($X)\"\naction: {replace: \"g($X)\"}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("a.py"), "f(1)\n").unwrap();
    for mode in ["--verify", "--check"] {
        let out = regraft(&["apply", "-r", "v.yaml", mode, "a.py"], dir.path());
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{mode}: {stderr}");
        assert!(
            words(&stderr).contains("error: drift: rule `p` is missing"),
            "{stderr}"
        );
        assert!(!stderr.contains("cleanly"), "{mode}: {stderr}");
    }
    let verify = regraft(&["apply", "-r", "v.yaml", "--verify", "a.py"], dir.path());
    assert!(
        text(&verify.stderr)
            .contains("verify: not every rule applies: drift in `p` (1 of 1 file would change)")
    );
}
