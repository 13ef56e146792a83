//! `apply --write` killed at arbitrary moments leaves every file wholly old or wholly new, and
//! a run that finishes leaves no temporary file behind.

use std::fs;
use std::path::Path;
use std::process::Stdio;

use crate::util::regraft_command;
use std::time::Duration;

const RULE: &str = "id: r\nmatch: \"$OUT = self.layer($$$A)\"\naction: {remove_kwargs: [output_attentions]}\nexpect: {min: 0}\n";

fn old_text(i: usize) -> String {
    let body: String = (0..20)
        .map(|j| format!("        h{j} = self.layer(x, {i}, output_attentions=True)\n"))
        .collect();
    format!("class M{i}:\n    def forward(self, x):\n{body}        return x\n")
}

fn tree(dir: &Path, files: usize) {
    fs::write(dir.join("r.yaml"), RULE).unwrap();
    fs::create_dir_all(dir.join("src")).unwrap();
    for i in 0..files {
        fs::write(dir.join(format!("src/m{i}.py")), old_text(i)).unwrap();
    }
}

fn apply(dir: &Path) -> std::process::Child {
    regraft_command(&["apply", "-r", "r.yaml", "--write", "src"], dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// How long an uninterrupted `--write` over a tree of `files` takes here, in milliseconds:
/// the scale the kill delays are fractions of.
fn whole_run_millis(files: usize) -> u64 {
    let timing = tempfile::tempdir().unwrap();
    tree(timing.path(), files);
    let started = std::time::Instant::now();
    assert!(apply(timing.path()).wait().unwrap().success());
    started.elapsed().as_millis() as u64
}

#[test]
fn killed_writes_leave_each_file_wholly_old_or_wholly_new() {
    let files = 200;
    // Kill at fractions of a whole run's duration, so some kills land among the writes.
    let whole = whole_run_millis(files);
    let mut saw_partial = false;
    for percent in [50u64, 80, 90, 94, 96, 98, 99, 100] {
        let delay_ms = whole * percent / 100;
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        tree(dir, files);
        let mut child = apply(dir);
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        let (mut old, mut new) = (0, 0);
        for i in 0..files {
            let text = fs::read_to_string(dir.join(format!("src/m{i}.py"))).unwrap();
            let before = old_text(i);
            if text == before {
                old += 1;
            } else if text == before.replace(", output_attentions=True", "") {
                new += 1;
            } else {
                panic!("after a kill at {delay_ms} ms, src/m{i}.py is neither old nor new");
            }
        }
        assert_eq!(old + new, files);
        saw_partial |= old > 0 && new > 0;
    }
    eprintln!("whole run {whole} ms; a kill landed mid-write: {saw_partial}");
}

#[test]
fn a_finished_run_leaves_no_temporary_file() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    tree(dir, 40);
    let status = apply(dir).wait().unwrap();
    assert!(status.success());
    for entry in fs::read_dir(dir.join("src")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            name.starts_with('m') && name.ends_with(".py"),
            "left behind: {name}"
        );
    }
    assert!(
        fs::read_to_string(dir.join("src/m0.py"))
            .unwrap()
            .contains("self.layer(x, 0)")
    );
}

#[test]
fn write_goes_through_symlinks_and_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("real.py"), "f(1, a=2)\n").unwrap();
    std::os::unix::fs::symlink("real.py", dir.path().join("link.py")).unwrap();
    std::fs::write(
        dir.path().join("r.yaml"),
        "id: r\nphase: pre_compile\nmatch: \"f($$$A)\"\naction: {remove_kwargs: [a]}\nexpect: 1\n",
    )
    .unwrap();
    let out = crate::util::regraft(&["apply", "-r", "r.yaml", "link.py", "--write"], dir.path());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::util::text(&out.stderr)
    );
    let link = std::fs::symlink_metadata(dir.path().join("link.py")).unwrap();
    assert!(link.file_type().is_symlink(), "the link stays a link");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("real.py")).unwrap(),
        "f(1)\n"
    );
    // fmt writes a rule file through its link too.
    std::fs::rename(dir.path().join("r.yaml"), dir.path().join("rules.yaml")).unwrap();
    std::os::unix::fs::symlink("rules.yaml", dir.path().join("r.yaml")).unwrap();
    crate::util::regraft_ok(&["fmt", "--canonical", "r.yaml"], dir.path());
    assert!(
        std::fs::symlink_metadata(dir.path().join("r.yaml"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("rules.yaml")).unwrap(),
        "id: r\nmatch: \"f($$$A)\"\naction: {remove_kwargs: [a]}\nexpect: 1\n",
        "fmt --canonical rewrote the file behind the link (the default phase left out)"
    );
}

#[test]
fn sigterm_during_the_write_leaves_the_tree_all_old_or_all_new_and_no_temporary_file() {
    let files = 200;
    let whole = whole_run_millis(files);
    for percent in [60u64, 85, 95, 100] {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        tree(dir, files);
        let child = regraft_command(&["apply", "-r", "r.yaml", "--write", "src"], dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(whole * percent / 100));
        // SAFETY: kill(2) on a child we spawned and have not waited for.
        unsafe { libc_kill(child.id() as i32, 15) };
        let out = child.wait_with_output().unwrap();
        let new = (0..files)
            .filter(|i| {
                let text = fs::read_to_string(dir.join(format!("src/m{i}.py"))).unwrap();
                text != old_text(*i)
            })
            .count();
        // All or nothing: a signal during staging cancels every write, one during the renames
        // lets them finish.
        assert!(
            new == 0 || new == files,
            "{new} of {files} files patched after SIGTERM"
        );
        match out.status.code() {
            Some(143) => {
                assert_eq!(new, 0);
                assert!(crate::util::text(&out.stderr).contains("interrupted by SIGTERM"));
            }
            Some(0) => assert_eq!(new, files),
            // Killed before the handler was set up (while patching): nothing written.
            None => assert_eq!(new, 0),
            other => panic!("exit {other:?}"),
        }
        let temps = fs::read_dir(dir.join("src"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with(".regraft-")
            })
            .count();
        assert_eq!(temps, 0, "temporary files left behind");
    }
}

unsafe extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, signal: i32) -> i32;
}

/// One immutable file (`chattr +i`) in the middle of a tree: nothing is written anywhere, and
/// no file is reported patched.
#[test]
fn an_immutable_file_in_a_tree_stops_every_write() {
    let dir = tempfile::tempdir().unwrap();
    for d in ["a", "b", "c"] {
        std::fs::create_dir(dir.path().join(d)).unwrap();
        std::fs::write(dir.path().join(d).join("m.py"), "f(1)\n").unwrap();
    }
    let middle = dir.path().join("b/m.py");
    let chattr = |flag: &str| {
        std::process::Command::new("chattr")
            .arg(flag)
            .arg(&middle)
            .status()
            .is_ok_and(|s| s.success())
    };
    if !chattr("+i") {
        return; // needs root and a file system with the flag
    }
    std::fs::write(
        dir.path().join("r.yaml"),
        "id: r\nmatch: \"f($X)\"\naction: {replace: \"g($X)\"}\n",
    )
    .unwrap();
    let out = crate::util::regraft(
        &["apply", "-r", "r.yaml", "--write", "a", "b", "c"],
        dir.path(),
    );
    chattr("-i");
    let stderr = crate::util::text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("b/m.py is immutable"), "{stderr}");
    assert!(!stderr.contains("patched"), "{stderr}");
    for d in ["a", "b", "c"] {
        let text = std::fs::read_to_string(dir.path().join(d).join("m.py")).unwrap();
        assert_eq!(text, "f(1)\n", "{d}/m.py was written");
    }
}

/// Two `--write` runs on one tree at once: every file ends patched, and each run's exit says
/// what it did (one may find its files already patched by the other: that is done, not lost).
#[test]
fn two_runs_writing_one_tree_at_once_leave_every_file_patched() {
    let files = 600;
    for round in 0..3 {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path(), files);
        let run = || {
            regraft_command(&["apply", "-r", "r.yaml", "--write", "src"], dir.path())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (run(), run());
        let outputs = [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()];
        for out in &outputs {
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success() || stderr.contains("changed"),
                "round {round}: {stderr}"
            );
        }
        assert!(outputs.iter().any(|o| o.status.success()), "round {round}");
        for i in 0..files {
            let text = fs::read_to_string(dir.path().join(format!("src/m{i}.py"))).unwrap();
            assert!(
                !text.contains("output_attentions"),
                "round {round}: src/m{i}.py left unpatched"
            );
        }
    }
}

/// A file with other names is never silently detached from them: refused, saying so, unless
/// `--detach-links` asks for a file of its own (the other names keep the old text).
#[test]
fn a_hard_linked_target_is_refused_unless_asked_to_detach() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path(), 2);
    fs::hard_link(
        dir.path().join("src/m0.py"),
        dir.path().join("other-name.py"),
    )
    .unwrap();
    let out = regraft_command(&["apply", "-r", "r.yaml", "--write", "src"], dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("has 2 hard links"), "{stderr}");
    assert!(stderr.contains("--detach-links"), "{stderr}");
    for name in ["src/m0.py", "src/m1.py", "other-name.py"] {
        let text = fs::read_to_string(dir.path().join(name)).unwrap();
        assert!(text.contains("output_attentions"), "{name} was written");
    }
    let out = regraft_command(
        &["apply", "-r", "r.yaml", "--write", "--detach-links", "src"],
        dir.path(),
    )
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let patched = fs::read_to_string(dir.path().join("src/m0.py")).unwrap();
    let other = fs::read_to_string(dir.path().join("other-name.py")).unwrap();
    assert!(!patched.contains("output_attentions") && other.contains("output_attentions"));
}
