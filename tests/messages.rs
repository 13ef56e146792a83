//! Messages that tell the truth and the next step: each says what is wrong in the user's terms
//! and what to run or write next.

use std::fs;

use crate::util::{regraft, text, words};

fn stderr_of(args: &[&str], dir: &std::path::Path) -> (Option<i32>, String) {
    let out = regraft(args, dir);
    (out.status.code(), words(&text(&out.stderr)))
}

#[test]
fn drift_ends_with_the_explain_command_to_run_and_that_command_runs() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("r.yaml"),
        "id: layer-call\ninside: {function: forward}\nmatch: \"self.layer($X)\"\naction: {replace: \"self.fast($X)\"}\nexpect: 1\n",
    )
    .unwrap();
    fs::create_dir_all(dir.path().join("pkg dir")).unwrap();
    fs::write(
        dir.path().join("pkg dir/m.py"),
        "def forward(self, x):\n    return self.layers(x)\n",
    )
    .unwrap();
    let out = regraft(
        &["apply", "-r", "r.yaml", "--check", "pkg dir/m.py"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(3));
    let stderr = text(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.contains("the near misses, and why each fails: "))
        .unwrap_or_else(|| panic!("{stderr}"));
    let command = line.split("why each fails: ").nth(1).unwrap();
    assert_eq!(
        command,
        "regraft explain layer-call -r r.yaml --in 'pkg dir/m.py'"
    );
    // The command as printed, run by a shell where apply ran: it explains the near miss.
    let shell = std::process::Command::new("sh")
        .arg("-c")
        .arg(command.replacen(
            "regraft",
            &crate::util::regraft_bin().display().to_string(),
            1,
        ))
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(shell.status.code(), Some(0), "{}", text(&shell.stderr));
    assert!(words(&text(&shell.stdout)).contains("near miss for rule `layer-call`"));
}

#[test]
fn a_missing_rules_path_names_the_flag_and_its_default() {
    let dir = tempfile::tempdir().unwrap();
    for command in ["lint", "test"] {
        let (code, said) = stderr_of(&[command], dir.path());
        assert_eq!(code, Some(2), "{said}");
        assert!(
            said.contains("`rules` (the default of `-r/--rules`) does not exist"),
            "{said}"
        );
    }
    let (code, said) = stderr_of(&["apply", "-r", "nowhere", "x.py"], dir.path());
    assert_eq!(code, Some(2));
    assert!(
        said.contains("rules `nowhere` (from `-r/--rules`"),
        "{said}"
    );
    fs::write(
        dir.path().join("r.yaml"),
        "id: r\nmatch: \"f($X)\"\nexpect: 1\n",
    )
    .unwrap();
    let (code, said) = stderr_of(&["apply", "-r", "r.yaml", "x.py"], dir.path());
    assert_eq!(code, Some(2));
    assert!(said.contains("x.py: no such file or folder"), "{said}");
}

#[test]
fn a_colon_in_a_plain_yaml_value_says_to_quote_it() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("r.yaml"),
        "id: r\ndescription: Fix: the call\nmatch: \"f($X)\"\nexpect: 1\n",
    )
    .unwrap();
    let (code, said) = stderr_of(&["lint", "-r", "r.yaml"], dir.path());
    assert_eq!(code, Some(2));
    assert!(
        said.contains("quote it: `description: 'Fix: the call'`"),
        "{said}"
    );
}

#[test]
fn a_scoped_deletion_counts_the_same_thing_applied_and_already_applied() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("d.yaml"),
        "id: d\ninside: {class: A}\nmatch: \"@torch.jit.script\"\naction: {delete: true}\nexpect: {min: 1}\n",
    )
    .unwrap();
    let three = "class A:\n    @torch.jit.script\n    def f(self): pass\n    @torch.jit.script\n    def g(self): pass\n    @torch.jit.script\n    def h(self): pass\n";
    fs::write(dir.path().join("u.py"), three).unwrap();
    let (code, said) = stderr_of(&["apply", "-r", "d.yaml", "--write", "u.py"], dir.path());
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("d applied (3 matches in 1 class)"), "{said}");
    let (code, said) = stderr_of(&["apply", "-r", "d.yaml", "--check", "u.py"], dir.path());
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.contains("d already applied (1 class cleared: nothing left to delete)"),
        "{said}"
    );
}

#[test]
fn add_parameter_names_an_assignment_as_an_assignment() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("p.yaml"),
        "id: p\nmatch: \"def f($$$P): $$$B\"\naction: {add_parameter: {name: scale, default: \"1\"}}\nexpect: 1\n",
    )
    .unwrap();
    for (source, said_as) in [
        (
            "def f(a):\n    scale = 2\n    return a * scale\n",
            "already assigns `scale`",
        ),
        (
            "def f(a):\n    for scale in a:\n        pass\n",
            "already assigns `scale`",
        ),
        ("def f(a):\n    return a * scale\n", "already reads `scale`"),
    ] {
        fs::write(dir.path().join("w.py"), source).unwrap();
        let (code, said) = stderr_of(&["apply", "-r", "p.yaml", "w.py"], dir.path());
        assert_eq!(code, Some(3), "{said}");
        assert!(said.contains(said_as), "{source}: {said}");
    }
}

#[test]
fn the_name_check_reports_every_unbound_name_at_once() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("n.yaml"),
        "id: n\nmatch: \"y = f($X)\"\naction: {replace: \"y = fused(alpha * $X, beta, gamma)\"}\nexpect: 1\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("n.py"),
        "def f(x):\n    return x\n\n\ndef g(v):\n    y = f(v)\n    return y\n",
    )
    .unwrap();
    let (code, said) = stderr_of(&["apply", "-r", "n.yaml", "n.py"], dir.path());
    assert_eq!(code, Some(3), "{said}");
    assert!(
        said.contains("the edits read 4 names that no scope they can see binds: `fused`, `alpha`, `beta`, `gamma`"),
        "{said}"
    );
    assert_eq!(
        said.matches("and this, bound in no scope it sees").count(),
        3,
        "{said}"
    );
}
