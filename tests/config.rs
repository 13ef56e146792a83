//! Project configuration: `regraft.toml` or `[tool.regraft]` in `pyproject.toml`, found from
//! the working directory up, supplying the flags the command line leaves out.

use std::fs;
use std::path::Path;

use crate::util::{regraft, regraft_command, text};

/// A gated rule (transformers >= 4.50) that rewrites `f(x)` to `g(x)`.
const RULE: &str = "id: use-g\nrequires: {transformers: \">=4.50\"}\nmatch: \"f($X)\"\naction: {replace: \"g($X)\"}\n";

/// A project: `myrules/r.yaml`, `pkg/a.py` and `pkg/vendored/b.py` (both calling `f`).
fn project(config_name: &str, config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("myrules")).unwrap();
    fs::write(root.join("myrules/r.yaml"), RULE).unwrap();
    fs::create_dir_all(root.join("pkg/vendored")).unwrap();
    fs::write(root.join("pkg/a.py"), "f(1)\n").unwrap();
    fs::write(root.join("pkg/vendored/b.py"), "f(2)\n").unwrap();
    fs::write(root.join(config_name), config).unwrap();
    dir
}

const CONFIG: &str =
    "rules = [\"myrules\"]\nwith = [\"transformers=4.57.6\"]\nexclude = [\"vendored\"]\n";

fn check(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = regraft(&[&["apply", "--check"], args].concat(), dir);
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn regraft_toml_found_from_a_subfolder_gives_rules_versions_and_excludes() {
    let dir = project("regraft.toml", CONFIG);
    // From `pkg/`, the config one folder up: its rules (relative to it) and its version
    // gate apply; `vendored/` is left out of the walk.
    let (code, _, stderr) = check(&dir.path().join("pkg"), &["."]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("would patch a.py"), "{stderr}");
    assert!(!stderr.contains("b.py"), "{stderr}");
    // A file named on the command line is kept, excluded or not.
    let (code, _, stderr) = check(&dir.path().join("pkg"), &["vendored/b.py"]);
    assert_eq!(code, Some(1), "{stderr}");
}

#[test]
fn the_command_line_wins_over_the_configuration() {
    let dir = project("regraft.toml", CONFIG);
    // `--with` overrides the configured version: the gate now closes.
    let (code, _, stderr) = check(dir.path(), &["--with", "transformers=4.40.0", "pkg"]);
    assert_eq!(code, Some(0), "{stderr}");
    // `-r` replaces the configured rule folders.
    fs::create_dir_all(dir.path().join("other")).unwrap();
    fs::write(
        dir.path().join("other/o.yaml"),
        "id: use-h\nmatch: \"f($X)\"\naction: {replace: \"h($X)\"}\n",
    )
    .unwrap();
    let out = regraft(&["apply", "-r", "other", "pkg/a.py"], dir.path());
    assert_eq!(text(&out.stdout), "h(1)\n", "{}", text(&out.stderr));
    // `--no-config` reads none: `./rules` does not exist here.
    let (code, _, stderr) = check(dir.path(), &["--no-config", "pkg"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("rules"), "{stderr}");
}

#[test]
fn pyproject_tool_regraft_is_read_and_a_pyproject_without_it_passed_over() {
    let dir = project(
        "pyproject.toml",
        &format!("[project]\nname = \"x\"\n\n[tool.regraft]\n{CONFIG}"),
    );
    let (code, _, stderr) = check(dir.path(), &["pkg"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("would patch pkg/a.py"), "{stderr}");
    // A pyproject.toml below it without the table does not stop the search.
    fs::write(
        dir.path().join("pkg/pyproject.toml"),
        "[project]\nname = \"y\"\n",
    )
    .unwrap();
    let (code, _, stderr) = check(&dir.path().join("pkg"), &["a.py"]);
    assert_eq!(code, Some(1), "{stderr}");
}

#[test]
fn an_explicit_config_file_and_every_command_that_takes_rules() {
    let dir = project("elsewhere.toml", CONFIG);
    fs::rename(
        dir.path().join("elsewhere.toml"),
        dir.path().join("regraft.toml"),
    )
    .unwrap();
    let sub = dir.path().join("pkg");
    for args in [
        &["lint"][..],
        &["test"],
        &["fmt", "--check"],
        &["explain", "use-g"],
    ] {
        let out = regraft(args, &sub);
        // Each finds the configured rules (exit 2 and "no rules in ./rules" otherwise).
        assert_ne!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(!text(&out.stderr).contains("no rules in"), "{args:?}");
    }
    // `--config` names the file; a missing one is an error, not a silent default.
    let out = regraft(&["--config", "../regraft.toml", "lint"], &sub);
    assert!(
        !text(&out.stderr).contains("no rules in"),
        "{}",
        text(&out.stderr)
    );
    let out = regraft(&["--config", "nope.toml", "lint"], &sub);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("nope.toml"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_wrong_key_or_value_is_a_diagnostic_at_its_place() {
    let dir = project("regraft.toml", "rules = [\"myrules\"]\nrulez = [\"x\"]\n");
    let out = regraft(&["lint"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("unknown field `rulez`"), "{stderr}");
    assert!(stderr.contains("regraft.toml:2:1"), "{stderr}");
    let dir = project("regraft.toml", "with = \"transformers=4.57.6\"\n");
    let out = regraft(&["lint"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("regraft.toml:1:8"),
        "{}",
        text(&out.stderr)
    );
    let dir = project("regraft.toml", "exclude = [\"a[\"]\n");
    let out = regraft(&["apply", "--check", "pkg"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("exclude glob `a[`"),
        "{}",
        text(&out.stderr)
    );
}

/// Git's `safe.directory` rule: a configuration another user owns names rule files and a
/// site-packages folder, so discovery passes it over (with a warning) unless trusted.
#[cfg(unix)]
#[test]
fn a_configuration_another_user_owns_is_ignored_unless_trusted() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return; // giving a file to another user needs root
    }
    let dir = project("regraft.toml", CONFIG);
    std::os::unix::fs::chown(dir.path().join("regraft.toml"), Some(4242), Some(4242)).unwrap();
    let pkg = dir.path().join("pkg");
    let (code, _, stderr) = check(&pkg, &["."]);
    assert_eq!(code, Some(2), "no configuration, so no rules: {stderr}");
    assert!(
        stderr.contains("regraft.toml: it is owned by uid 4242, not by you"),
        "{stderr}"
    );
    assert!(stderr.contains("REGRAFT_SAFE_DIRECTORIES="), "{stderr}");
    // Trusted by folder (or `*`), it is read as before.
    for trust in [dir.path().to_str().unwrap(), "*"] {
        let out = regraft_command(&["apply", "--check", "."], &pkg)
            .env("REGRAFT_SAFE_DIRECTORIES", trust)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        assert!(text(&out.stderr).contains("would patch a.py"));
    }
    // Another user's folder makes its files foreign too, and a pyproject.toml with a broken
    // table of someone else's is no error of ours.
    let other = project("pyproject.toml", "[tool.regraft\n");
    std::os::unix::fs::chown(other.path(), Some(4242), Some(4242)).unwrap();
    let (code, _, stderr) = check(&other.path().join("pkg"), &["."]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(!stderr.contains("pyproject"), "{stderr}");
    fs::write(other.path().join("regraft.toml"), CONFIG).unwrap();
    let (_, _, stderr) = check(&other.path().join("pkg"), &["."]);
    assert!(stderr.contains("owned by uid 4242"), "{stderr}");
}

/// `targets` in the configuration: a bare `regraft apply --check` checks them; with none
/// configured and none given, the command says so.
#[test]
fn configured_targets_let_a_bare_check_run() {
    let dir = project(
        "regraft.toml",
        "rules = [\"myrules\"]\nwith = [\"transformers=4.57.6\"]\ntargets = [\"pkg\"]\nexclude = [\"vendored\"]\n",
    );
    let (code, _, stderr) = check(dir.path(), &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("would patch pkg/a.py"), "{stderr}");
    let (code, _, stderr) = check(
        dir.path(),
        &[
            "--no-config",
            "-r",
            "myrules",
            "--with",
            "transformers=4.57.6",
        ],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("no targets"), "{stderr}");
}

/// A configured rules path that is a FIFO (or another non-file) is refused at its place in
/// the configuration, not read (which would wait for a writer forever).
#[cfg(unix)]
#[test]
fn a_configured_rules_path_that_is_a_fifo_is_refused_not_read() {
    let dir = project("regraft.toml", "rules = [\"pipe\"]\n");
    let made = std::process::Command::new("mkfifo")
        .arg(dir.path().join("pipe"))
        .status()
        .unwrap();
    assert!(made.success());
    let (code, _, stderr) = check(dir.path(), &["pkg"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("the rules path `pipe` is a FIFO"),
        "{stderr}"
    );
}
