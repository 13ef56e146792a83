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

#[test]
fn killed_writes_leave_each_file_wholly_old_or_wholly_new() {
    let files = 200;
    // Kill at fractions of a whole run's duration, so some kills land among the writes.
    let timing = tempfile::tempdir().unwrap();
    tree(timing.path(), files);
    let started = std::time::Instant::now();
    assert!(apply(timing.path()).wait().unwrap().success());
    let whole = started.elapsed().as_millis() as u64;
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
