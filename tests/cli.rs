//! The `regraft` binary: modes, exit codes, atomic writes, stdin and JSON.

use std::fs;
use std::path::Path;

use crate::util::{regraft, regraft_with_stdin, text};

/// A scratch folder holding the shipped rules and the shipped example.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    fs::create_dir_all(dir.path().join("rules")).unwrap();
    fs::create_dir_all(dir.path().join("src/whisper")).unwrap();
    fs::copy(
        root.join("rules/whisper-decoder-layer-positional.yaml"),
        dir.path()
            .join("rules/whisper-decoder-layer-positional.yaml"),
    )
    .unwrap();
    fs::copy(
        root.join("examples/whisper/modeling_whisper.py"),
        dir.path().join("src/whisper/modeling_whisper.py"),
    )
    .unwrap();
    dir
}

const TARGET: &str = "src/whisper/modeling_whisper.py";

#[test]
fn one_file_and_no_mode_prints_the_patched_source() {
    let dir = workspace();
    let out = regraft(
        &["apply", "--with", "transformers=4.57.6", TARGET],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("                causal_mask,\n                encoder_hidden_states,\n                None,\n"));
    assert!(text(&out.stderr).contains("whisper-decoder-layer-positional would apply (1 match)"));
}

#[test]
fn check_exits_one_and_writes_nothing() {
    let dir = workspace();
    let before = fs::read(dir.path().join(TARGET)).unwrap();
    let out = regraft(
        &["apply", "--with", "transformers=4.57.6", "--check", "src"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("would patch src/whisper/modeling_whisper.py"));
    assert_eq!(fs::read(dir.path().join(TARGET)).unwrap(), before);
}

#[test]
fn write_replaces_the_file_keeping_its_permissions_and_a_second_check_is_clean() {
    use std::os::unix::fs::PermissionsExt;
    let dir = workspace();
    let path = dir.path().join(TARGET);
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    let out = regraft(
        &["apply", "--with", "transformers=4.57.6", "--write", "src"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written = fs::read_to_string(&path).unwrap();
    assert!(!written.contains("attention_mask=causal_mask"));
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o640
    );
    let leftovers: Vec<_> = fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        1,
        "no temporary file is left behind: {leftovers:?}"
    );
    let again = regraft(
        &["apply", "--with", "transformers=4.57.6", "--check", "src"],
        dir.path(),
    );
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
}

#[test]
fn diff_prints_a_unified_diff() {
    let dir = workspace();
    let out = regraft(
        &["apply", "--with", "transformers=4.57.6", "--diff", TARGET],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0));
    let diff = text(&out.stdout);
    assert!(diff.starts_with(
        "--- a/src/whisper/modeling_whisper.py\n+++ b/src/whisper/modeling_whisper.py\n"
    ));
    assert!(diff.contains("-                attention_mask=causal_mask,\n"));
    assert!(diff.contains("+                None,\n"));
}

#[test]
fn drift_exits_three_and_write_writes_nothing() {
    let dir = workspace();
    let path = dir.path().join(TARGET);
    let drifted = fs::read_to_string(&path)
        .unwrap()
        .replace("enumerate(self.layers)", "enumerate(self.blocks)");
    fs::write(&path, &drifted).unwrap();
    let out = regraft(
        &["apply", "--with", "transformers=4.57.6", "--write", "src"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(3));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("drift: rule `whisper-decoder-layer-positional`"),
        "{stderr}"
    );
    assert!(stderr.contains("nothing was written"));
    assert_eq!(fs::read_to_string(&path).unwrap(), drifted);
}

#[test]
fn an_unknown_version_is_an_error_pointing_at_requires() {
    let dir = workspace();
    let out = regraft(&["apply", TARGET], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("requires `transformers`, whose version is not known"),
        "{stderr}"
    );
    assert!(stderr.contains("--with transformers=VERSION"));
}

#[test]
fn site_packages_supplies_versions() {
    let dir = workspace();
    let info = dir.path().join("site/transformers-4.52.4.dist-info");
    fs::create_dir_all(&info).unwrap();
    fs::write(
        info.join("METADATA"),
        "Name: transformers\nVersion: 4.52.4\n",
    )
    .unwrap();
    let out = regraft(
        &["apply", "--site-packages", "site", "--check", TARGET],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
}

#[test]
fn stdin_uses_the_stdin_filename_for_globs() {
    let dir = workspace();
    let source = fs::read_to_string(dir.path().join(TARGET)).unwrap();
    let run = |name: &str| {
        let args = [
            "apply",
            "--with",
            "transformers=4.57.6",
            "--stdin-filename",
            name,
            "-",
        ];
        regraft_with_stdin(&args, dir.path(), &source)
    };
    let patched = run("models/whisper/modeling_whisper.py");
    assert_eq!(patched.status.code(), Some(0));
    assert_ne!(text(&patched.stdout), source);
    let elsewhere = run("models/bart/modeling_bart.py");
    assert_eq!(
        text(&elsewhere.stdout),
        source,
        "the glob does not select this name"
    );
}

#[test]
fn json_lists_matches_with_spans_and_edits() {
    let dir = workspace();
    let out = regraft(
        &[
            "apply",
            "--with",
            "transformers=4.57.6",
            "--format",
            "json",
            "src",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let file = &json[0];
    assert_eq!(file["path"], "src/whisper/modeling_whisper.py");
    assert_eq!(file["changed"], true);
    let rule = &file["rules"][0];
    assert_eq!(rule["rule"], "whisper-decoder-layer-positional");
    assert_eq!(rule["status"], "applied");
    assert_eq!(rule["phase"], "pre_compile");
    let m = &rule["matches"][0];
    assert_eq!(m["start"]["line"], 62);
    assert_eq!(m["bindings"]["LAYER"], "decoder_layer");
    assert_eq!(m["bindings"]["OUT"], "layer_outputs");
    let edit = &m["edits"][0];
    assert!(edit["replacement"].as_str().unwrap().contains("None,"));
    assert!(edit["range"]["start"].as_u64().unwrap() < edit["range"]["end"].as_u64().unwrap());
}

#[test]
fn missing_paths_and_bad_input_exit_two() {
    let dir = workspace();
    let out = regraft(
        &["apply", "--with", "transformers=4.57.6", "nope.py"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("nope.py"));
    let out = regraft(&["apply", "--with", "transformers", TARGET], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("is not PKG=VERSION"));
    fs::write(
        dir.path().join("src/whisper/modeling_whisper.py"),
        b"x = '\xff'\n",
    )
    .unwrap();
    let out = regraft(
        &["apply", "--with", "transformers=4.57.6", "--check", "src"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("not valid UTF-8"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn explain_prints_the_compiled_query() {
    let _snapshots = crate::util::snapshots(module_path!());
    let dir = workspace();
    let out = regraft(
        &["explain", "rules/whisper-decoder-layer-positional.yaml"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!(text(&out.stdout));
}

#[test]
fn on_miss_warn_reports_drift_and_exits_zero_and_skip_is_silent() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("t.py"), "x = 1\n").unwrap();
    for (policy, expect_warning) in [("warn", true), ("skip", false), ("error", true)] {
        fs::write(
            dir.path().join("r.yaml"),
            format!("id: r\nmatch: \"f($X)\"\naction: {{replace: \"g($X)\"}}\nexpect: 1\non_miss: {policy}\n"),
        )
        .unwrap();
        let out = regraft(&["apply", "-r", "r.yaml", "--check", "t.py"], dir.path());
        let stderr = text(&out.stderr);
        let code = if policy == "error" { 3 } else { 0 };
        assert_eq!(out.status.code(), Some(code), "{policy}: {stderr}");
        assert_eq!(
            stderr.contains("drift: rule `r`"),
            expect_warning,
            "{policy}: {stderr}"
        );
        if policy == "warn" {
            assert!(stderr.contains("warning (on_miss: warn)"), "{stderr}");
        }
        let matrix = regraft(
            &[
                "matrix",
                "-r",
                "r.yaml",
                "--target",
                "pkg=1.0:.",
                "--format",
                "json",
            ],
            dir.path(),
        );
        let rows: serde_json::Value = serde_json::from_slice(&matrix.stdout).unwrap();
        assert_eq!(
            rows[0]["status"], "missing",
            "{policy}: the matrix still shows it"
        );
        assert_eq!(matrix.status.code(), Some(code), "{policy}");
    }
}

#[test]
fn stamp_appends_one_line_and_shifts_none() {
    let dir = workspace();
    let out = regraft(
        &["apply", "--with", "transformers=4.57.6", "--stamp", TARGET],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stamped = text(&out.stdout);
    let plain = text(
        &regraft(
            &["apply", "--with", "transformers=4.57.6", TARGET],
            dir.path(),
        )
        .stdout,
    );
    assert_eq!(stamped.lines().count(), plain.lines().count() + 1);
    assert!(stamped.starts_with(&plain));
    assert_eq!(
        stamped.lines().last().unwrap(),
        "# patched by regraft: whisper-decoder-layer-positional on transformers==4.57.6"
    );
}

#[test]
fn a_closed_stdout_is_a_normal_end() {
    let dir = workspace();
    for args in [
        &["lint", "--format", "json"][..],
        &["lint", "--format", "sarif"],
        &["explain", "rules/whisper-decoder-layer-positional.yaml"],
        &["test"],
        &[
            "fmt",
            "--to",
            "dsl",
            "rules/whisper-decoder-layer-positional.yaml",
        ],
    ] {
        let mut child = crate::util::regraft_command(args, dir.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before the command writes anything.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = text(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    }
}

#[test]
fn color_follows_the_flag_then_no_color_then_force_color() {
    let dir = workspace();
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut command = crate::util::regraft_command(args, dir.path());
        command.env_remove("NO_COLOR").env_remove("FORCE_COLOR");
        for (k, v) in env {
            command.env(k, v);
        }
        text(&command.output().unwrap().stderr).contains('\u{1b}')
    };
    let bad = ["lint", "-r", "no-such-rules"];
    // Not a terminal: no colour, unless asked for.
    assert!(!run(&bad, &[]));
    assert!(run(&[&bad[..], &["--color", "always"]].concat(), &[]));
    assert!(run(&bad, &[("FORCE_COLOR", "1")]));
    // NO_COLOR wins over FORCE_COLOR, but only when not empty; --color always wins over both.
    assert!(!run(&bad, &[("FORCE_COLOR", "1"), ("NO_COLOR", "1")]));
    assert!(run(&bad, &[("FORCE_COLOR", "1"), ("NO_COLOR", "")]));
    assert!(run(
        &[&bad[..], &["--color", "always"]].concat(),
        &[("NO_COLOR", "1")]
    ));
    assert!(!run(
        &[&bad[..], &["--color", "never"]].concat(),
        &[("FORCE_COLOR", "1")]
    ));
}

#[test]
fn new_rule_scaffolds_a_rule_whose_cases_pass_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let out = regraft(&["new", "rule", "my-fix"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let test = regraft(&["test", "-r", "rules"], dir.path());
    assert_eq!(test.status.code(), Some(0), "{}", text(&test.stdout));
    assert!(text(&test.stdout).ends_with("3 passed, 0 failed\n"));
    let lint = regraft(&["lint", "-r", "rules", "--deny-warnings"], dir.path());
    assert_eq!(lint.status.code(), Some(0), "{}", text(&lint.stderr));
    let again = regraft(&["new", "rule", "my-fix"], dir.path());
    assert_eq!(again.status.code(), Some(2));
    assert!(text(&again.stderr).contains("already exists: nothing was written"));
    let bad = regraft(&["new", "rule", "no spaces"], dir.path());
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn completions_are_generated_for_each_shell() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let out = regraft(&["completions", shell], dir.path());
        assert_eq!(out.status.code(), Some(0));
        let script = text(&out.stdout);
        assert!(
            script.contains("bisect") && script.contains("matrix"),
            "{shell}"
        );
    }
}

#[test]
fn diffs_apply_with_git_apply_whatever_path_was_given() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/t.py"), "f(1, a=2)\n").unwrap();
    std::fs::write(
        dir.path().join("r.yaml"),
        "id: r\nmatch: \"f($$$A)\"\naction: {remove_kwargs: [a]}\nexpect: 1\n",
    )
    .unwrap();
    let absolute = dir.path().join("src/t.py").display().to_string();
    for given in ["src/t.py", "./src/t.py", absolute.as_str()] {
        let out = regraft(&["apply", "-r", "r.yaml", given, "--diff"], dir.path());
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(
            text(&out.stdout).starts_with("--- a/src/t.py\n+++ b/src/t.py\n"),
            "{given}"
        );
        std::fs::write(dir.path().join("p.diff"), &out.stdout).unwrap();
        let check = std::process::Command::new("git")
            .args(["apply", "--check", "p.diff"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(check.status.success(), "{given}: {}", text(&check.stderr));
    }
}

#[test]
fn write_then_check_passes_for_a_replace_rule_and_real_drift_still_fails() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("r.yaml"),
        "id: r\nmatch: \"x = old_api($$$A)\"\naction:\n  replace: |-\n    if ready:\n        x = new_api($$$A)\nexpect: 1\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("m.py"),
        "def f():\n    x = old_api(1, k=2)\n",
    )
    .unwrap();
    let write = regraft(&["apply", "-r", "r.yaml", "m.py", "--write"], dir.path());
    assert_eq!(write.status.code(), Some(0), "{}", text(&write.stderr));
    let check = regraft(&["apply", "-r", "r.yaml", "m.py", "--check"], dir.path());
    assert_eq!(check.status.code(), Some(0), "{}", text(&check.stderr));
    assert!(text(&check.stderr).contains("r already applied (1 match)"));
    // Neither the pattern's shape nor the patched one: drift, as before.
    std::fs::write(dir.path().join("m.py"), "def f():\n    x = other_api(1)\n").unwrap();
    let drift = regraft(&["apply", "-r", "r.yaml", "m.py", "--check"], dir.path());
    assert_eq!(drift.status.code(), Some(3));
}

/// `--write`, then `--check` with the same rule: the check passes ("already applied").
fn write_then_check(rule: &str, source: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("r.yaml"), rule).unwrap();
    std::fs::write(dir.path().join("m.py"), source).unwrap();
    let write = regraft(&["apply", "-r", "r.yaml", "m.py", "--write"], dir.path());
    assert_eq!(write.status.code(), Some(0), "{}", text(&write.stderr));
    assert_ne!(
        std::fs::read_to_string(dir.path().join("m.py")).unwrap(),
        source
    );
    let check = regraft(&["apply", "-r", "r.yaml", "m.py", "--check"], dir.path());
    assert_eq!(check.status.code(), Some(0), "{}", text(&check.stderr));
    (dir, text(&check.stderr))
}

#[test]
fn write_then_check_passes_for_rename_and_delete_rules_and_real_drift_still_fails() {
    // rename: the pattern with its names renamed is the patched shape.
    let rename = "id: r\ninside: {function: forward}\nmatch: \"self.drop(x)\"\naction: {rename: {from: drop, to: dropout, attributes: true}}\nexpect: 1\n";
    let (dir, said) = write_then_check(rename, "def forward(self, x):\n    return self.drop(x)\n");
    assert!(said.contains("r already applied (1 match)"), "{said}");
    std::fs::write(
        dir.path().join("m.py"),
        "def forward(self, x):\n    return self.other(x)\n",
    )
    .unwrap();
    let drift = regraft(&["apply", "-r", "r.yaml", "m.py", "--check"], dir.path());
    assert_eq!(drift.status.code(), Some(3), "{}", text(&drift.stderr));
    // delete: the match's absence from the function the rule names.
    let delete = "id: d\ninside: {class: Model, function: forward}\nmatch: \"x = self.dropout(x)\"\naction: {delete: true}\nexpect: 1\n";
    let source = "class Model:\n    def forward(self, x):\n        x = self.dropout(x)\n        return x\n\n    def helper(self, x):\n        return x\n";
    let (dir, said) = write_then_check(delete, source);
    assert!(
        said.contains("d already applied (1 function cleared: nothing left to delete)"),
        "{said}"
    );
    // Upstream changed the statement rather than the deletion removing it: drift.
    std::fs::write(dir.path().join("m.py"), "class Model:\n    def forward(self, x):\n        x = self.drop_path(x)\n        return x\n").unwrap();
    let drift = regraft(&["apply", "-r", "r.yaml", "m.py", "--check"], dir.path());
    assert_eq!(drift.status.code(), Some(3), "{}", text(&drift.stderr));
    // Without its anchor (no `Model.forward`), the absence is drift.
    std::fs::write(
        dir.path().join("m.py"),
        "class Other:\n    def forward(self, x):\n        return x\n",
    )
    .unwrap();
    let drift = regraft(&["apply", "-r", "r.yaml", "m.py", "--check"], dir.path());
    assert_eq!(drift.status.code(), Some(3), "{}", text(&drift.stderr));
    // A delete rule with no class or function to anchor it: the absence says nothing.
    let bare = "id: d\nmatch: \"x = self.dropout(x)\"\naction: {delete: true}\nexpect: 1\n";
    std::fs::write(dir.path().join("r.yaml"), bare).unwrap();
    let drift = regraft(&["apply", "-r", "r.yaml", "m.py", "--check"], dir.path());
    assert_eq!(drift.status.code(), Some(3), "{}", text(&drift.stderr));
}

#[test]
fn diffs_are_coloured_when_colour_is_on_and_plain_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.py"), "f(1, a=2)\n").unwrap();
    std::fs::write(
        dir.path().join("r.yaml"),
        "id: r\nmatch: \"f($$$A)\"\naction: {remove_kwargs: [a]}\nexpect: 1\n",
    )
    .unwrap();
    let coloured = regraft(
        &[
            "apply", "-r", "r.yaml", "m.py", "--diff", "--color", "always",
        ],
        dir.path(),
    );
    let stdout = text(&coloured.stdout);
    assert!(stdout.contains("\u{1b}[31m-f(1, a=2)"), "{stdout:?}");
    assert!(stdout.contains("\u{1b}[32m+f(1)"), "{stdout:?}");
    let plain = regraft(&["apply", "-r", "r.yaml", "m.py", "--diff"], dir.path());
    assert!(!text(&plain.stdout).contains('\u{1b}'));
}

#[test]
fn quiet_and_verbose_say_less_and_more_on_stderr() {
    let dir = workspace();
    let run = |flags: &[&str]| {
        let args = [
            &["apply", "--check", "--with", "transformers=4.57.6"],
            flags,
            &[TARGET],
        ]
        .concat();
        let out = regraft(&args, dir.path());
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        text(&out.stderr)
    };
    let normal = run(&[]);
    assert!(
        normal.contains("would patch src/whisper/modeling_whisper.py"),
        "{normal}"
    );
    assert!(normal.contains("would apply (1 match)"), "{normal}");
    // -q: no summaries; -qq: nothing at all; the exit code still tells.
    assert_eq!(run(&["-q"]), "");
    assert_eq!(run(&["-qq"]), "");
    // -v: what was loaded and walked, and the time.
    let verbose = run(&["-v"]);
    assert!(
        verbose.contains("1 rule(s) from rules; 1 target file(s); versions: transformers==4.57.6"),
        "{verbose}"
    );
    assert!(verbose.contains("done in "), "{verbose}");
    // -q keeps diagnostics; -qq drops them too.
    let bad = regraft(&["apply", "-q", "-r", "nope", TARGET], dir.path());
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("nope"), "{}", text(&bad.stderr));
    let silent = regraft(&["apply", "-qq", "-r", "nope", TARGET], dir.path());
    assert_eq!(silent.status.code(), Some(2));
    assert_eq!(text(&silent.stderr), "");
}

/// A template that unwraps (`replace: "$X"`), or holds no code of its own (`$F($$$A)`), has no
/// shape to recognise once applied: a patched file and a drifted one look the same. Neither is
/// called "already applied": with `expect` unmet, both are drift (exit 3), saying why, unless
/// the rule's `on_miss: warn` says patched files are expected.
#[test]
fn an_unwrapping_template_never_calls_drift_already_applied() {
    let dir = tempfile::tempdir().unwrap();
    let rule = "id: unwrap\nmatch: \"wrap($X)\"\naction: {replace: \"$X\"}\nexpect: 1\n";
    std::fs::write(dir.path().join("r.yaml"), rule).unwrap();
    // A template with no code of its own is as general: it would call every call patched.
    let call =
        "id: unwrap-call\nmatch: \"wrap($F)($$$A)\"\naction: {replace: \"$F($$$A)\"}\nexpect: 1\n";
    std::fs::write(dir.path().join("c.yaml"), call).unwrap();
    std::fs::write(dir.path().join("w.yaml"), format!("{rule}on_miss: warn\n")).unwrap();
    std::fs::write(dir.path().join("t.py"), "y = wrap(a + b)\n").unwrap();
    std::fs::write(dir.path().join("u.py"), "y = wrap(f)(a, b)\n").unwrap();
    std::fs::write(dir.path().join("d.py"), "y = other(a)\n").unwrap();
    let out = crate::util::regraft(&["apply", "-r", "r.yaml", "--write", "t.py"], dir.path());
    assert_eq!(out.status.code(), Some(0));
    let out = crate::util::regraft(&["apply", "-r", "c.yaml", "--write", "u.py"], dir.path());
    assert_eq!(out.status.code(), Some(0));
    for (rules, file) in [
        ("r.yaml", "t.py"),
        ("r.yaml", "d.py"),
        ("c.yaml", "u.py"),
        ("c.yaml", "d.py"),
    ] {
        let out = crate::util::regraft(&["apply", "-r", rules, "--check", file], dir.path());
        let stderr = crate::util::text(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{rules} {file}: {stderr}");
        assert!(!stderr.contains("already applied"), "{stderr}");
        let words = stderr.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains("a file it patched cannot be told from one that drifted"),
            "{stderr}"
        );
    }
    // Where patched files are expected, the rule says so and it is a warning.
    let out = crate::util::regraft(&["apply", "-r", "w.yaml", "--check", "t.py"], dir.path());
    let stderr = crate::util::text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("warning (on_miss: warn)"), "{stderr}");
}

/// A pin whose file is not among the targets: under `--check` it is drift (exit 3), as `matrix`
/// calls it missing; applied to part of a tree without `--check`, the rule is only mentioned.
#[test]
fn a_rule_whose_files_select_no_target_fails_the_check() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("pkg")).unwrap();
    std::fs::write(dir.path().join("pkg/a.py"), "x = 1\n").unwrap();
    std::fs::write(
        dir.path().join("p.yaml"),
        "id: pin\nfiles: [\"**/pkg/missing.py\"]\nmatch: \"def forward($$$P): $$$B\"\nexpect: 1\n---\nid: loose\nfiles: [\"**/other.py\"]\nmatch: \"f($X)\"\naction: {replace: \"g($X)\"}\nexpect: {min: 0}\n",
    )
    .unwrap();
    let out = crate::util::regraft(&["apply", "-r", "p.yaml", "--check", "pkg"], dir.path());
    let stderr = crate::util::text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(3),
        "drift, as every drift: {stderr}"
    );
    assert!(
        stderr.contains("error: drift: rule `pin` is missing: it selects no file of the targets (files: **/pkg/missing.py), and it expects matches there"),
        "{stderr}"
    );
    assert!(
        stderr.contains("warning: rule `loose` selects no file of the targets"),
        "{stderr}"
    );
    let out = crate::util::regraft(&["apply", "-r", "p.yaml", "--diff", "pkg"], dir.path());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::util::text(&out.stderr)
    );
}

/// A rule from `regraft new rule` is laid out already; `fmt` keeps a rule's keys where its
/// author put them (a default written out too), and `fmt --canonical` puts them in schema
/// order, leaves defaults out, and keeps the author's quoting and flow style where the value
/// is canonical.
#[test]
fn a_new_rule_passes_fmt_check_and_fmt_canonical_drops_only_what_is_not_canonical() {
    let dir = tempfile::tempdir().unwrap();
    let new = crate::util::regraft(&["new", "rule", "fresh"], dir.path());
    assert_eq!(
        new.status.code(),
        Some(0),
        "{}",
        crate::util::text(&new.stderr)
    );
    for check in [
        &["fmt", "--check", "rules"][..],
        &["fmt", "--check", "--canonical", "rules"],
    ] {
        let check = crate::util::regraft(check, dir.path());
        assert_eq!(
            check.status.code(),
            Some(0),
            "{}",
            crate::util::text(&check.stdout)
        );
    }
    let text = "expect: 1\nid: z\nphase: pre_compile\nmatch: \"f($X)\"   # the call\naction:\n  replace: 'g($X)'\n";
    std::fs::write(dir.path().join("z.yaml"), text).unwrap();
    let out = crate::util::regraft(&["fmt", "--check", "z.yaml"], dir.path());
    assert_eq!(out.status.code(), Some(0), "laid out as written already");
    let out = crate::util::regraft(&["fmt", "--canonical", "z.yaml"], dir.path());
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("z.yaml")).unwrap(),
        "id: z\nmatch: \"f($X)\"   # the call\naction:\n  replace: 'g($X)'\nexpect: 1\n",
        "keys in order, the default phase left out, the rest as written"
    );
}

/// `fmt --check --diff` shows what it would change, as a unified diff, and writes nothing.
#[test]
fn fmt_check_diff_shows_the_change() {
    let dir = tempfile::tempdir().unwrap();
    let text = "id:   r\nmatch: \"f($X)\"\naction: {replace: \"g($X)\"}\nexpect: 1\n";
    std::fs::write(dir.path().join("f.yaml"), text).unwrap();
    let out = crate::util::regraft(&["fmt", "--check", "--diff", "f.yaml"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let stdout = crate::util::text(&out.stdout);
    assert!(
        stdout.starts_with("--- a/f.yaml\n+++ b/f.yaml\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("-id:   r\n") && stdout.contains("+id: r\n"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f.yaml")).unwrap(),
        text
    );
}

/// A drift diagnostic for two matches 233 lines apart shows each in a snippet of its own, not
/// the 240 lines between them.
#[test]
fn drift_matches_far_apart_get_snippets_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let source = format!("from lib import f\nf(1)\n{}f(2)\n", "x = 1\n".repeat(233));
    std::fs::write(dir.path().join("far.py"), source).unwrap();
    std::fs::write(
        dir.path().join("r.yaml"),
        "id: r\nmatch: \"f($X)\"\naction: {replace: \"f($X)\"}\nexpect: 1\n",
    )
    .unwrap();
    let out = crate::util::regraft(&["apply", "-r", "r.yaml", "--check", "far.py"], dir.path());
    let stderr = crate::util::text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.lines().count() < 40, "{stderr}");
    assert!(
        stderr.contains("match 1") && stderr.contains("match 2"),
        "{stderr}"
    );
    assert!(stderr.contains(" 236 │ f(2)"), "{stderr}");
}

/// SARIF and GitHub annotations name files relative to the repository root, whatever path was
/// typed (`../sub/x.py` from a subfolder), so code scanning can resolve them.
#[test]
fn annotations_name_files_from_the_repository_root() {
    let dir = tempfile::tempdir().unwrap();
    for d in [".git", "sub", "a"] {
        std::fs::create_dir(dir.path().join(d)).unwrap();
    }
    std::fs::write(dir.path().join("sub/x.py"), "f(1, a1=2)\n").unwrap();
    std::fs::write(
        dir.path().join("r.yaml"),
        "id: r\nmatch: \"f($$$A)\"\naction: {remove_kwargs: [a1]}\n",
    )
    .unwrap();
    let out = crate::util::regraft(
        &[
            "apply",
            "-r",
            "../r.yaml",
            "--check",
            "--format",
            "github",
            "../sub/x.py",
        ],
        &dir.path().join("a"),
    );
    let stdout = crate::util::text(&out.stdout);
    assert!(
        stdout.starts_with("::error file=sub/x.py,line=1"),
        "{stdout}"
    );
}

#[test]
fn expect_per_run_counts_over_every_file_of_the_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("pkg")).unwrap();
    std::fs::write(dir.path().join("pkg/a.py"), "y = f(1)\n").unwrap();
    std::fs::write(dir.path().join("pkg/b.py"), "z = 2\n").unwrap();
    let rule = |expect: &str| {
        format!("id: t\nmatch: \"f($X)\"\naction: {{replace: \"g($X)\"}}\nexpect: {expect}\n")
    };
    // One site in the tree: a file without one is no drift, the run total holds.
    std::fs::write(dir.path().join("one.yaml"), rule("{per: run, min: 1}")).unwrap();
    let out = regraft(&["apply", "-r", "one.yaml", "--check", "pkg"], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains("drift"),
        "{}",
        text(&out.stderr)
    );
    // Two wanted over the run: drift, and nothing is written.
    std::fs::write(dir.path().join("two.yaml"), rule("{per: run, count: 2}")).unwrap();
    let out = regraft(&["apply", "-r", "two.yaml", "--write", "pkg"], dir.path());
    assert_eq!(out.status.code(), Some(3));
    assert!(
        text(&out.stderr).contains(
            "drift: rule `t` expects exactly 2 match(es) over the run, found 1 in 1 of 2 file(s)"
        ),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("pkg/a.py")).unwrap(),
        "y = f(1)\n"
    );
    // fmt writes it back as `per: run`.
    let out = regraft(&["fmt", "one.yaml"], dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let formatted = std::fs::read_to_string(dir.path().join("one.yaml")).unwrap();
    assert!(formatted.contains("per: run"), "{formatted}");
}

/// A rule that missed (under `on_miss: warn`) but matches what another rule wrote is named as
/// such, with the `after:` that makes the pack a fixed point — not called "not idempotent".
#[test]
fn a_rule_that_matches_another_rules_output_is_told_apart_from_one_that_reedits_its_own() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.py"), "f(1)\n").unwrap();
    let rules = "- id: edit\n  match: f($X)\n  action: {replace: g($X)}\n- id: other\n  match: g($X)\n  action: {replace: k($X)}\n  expect: 1\n  on_miss: warn\n";
    std::fs::write(dir.path().join("r.yaml"), rules).unwrap();
    let out = crate::util::regraft(
        &["apply", "--no-config", "-r", "r.yaml", "m.py"],
        dir.path(),
    );
    let stderr = crate::util::text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("rule `other` did not edit m.py"),
        "{stderr}"
    );
    assert!(stderr.contains("after: [edit]"), "{stderr}");
    assert!(!stderr.contains("applied to its own output"), "{stderr}");
}

/// `--verify`: the check a runtime patcher passes — exit 0 where every rule applies cleanly,
/// however many files would change; drift still fails.
#[test]
fn verify_passes_rules_that_apply_and_fails_drift() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.py"), "y = f(1)\n").unwrap();
    std::fs::write(
        dir.path().join("r.yaml"),
        "id: r\nmatch: 'f($X)'\naction: {replace: 'g($X)'}\nexpect: 1\n",
    )
    .unwrap();
    let verify = crate::util::regraft(
        &["apply", "--no-config", "-r", "r.yaml", "--verify", "m.py"],
        dir.path(),
    );
    assert_eq!(verify.status.code(), Some(0));
    assert!(
        crate::util::text(&verify.stderr)
            .contains("every rule applies cleanly (1 of 1 file would change)")
    );
    let check = crate::util::regraft(
        &["apply", "--no-config", "-r", "r.yaml", "--check", "m.py"],
        dir.path(),
    );
    assert_eq!(
        check.status.code(),
        Some(1),
        "--check: a change is what fails"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("m.py")).unwrap(),
        "y = f(1)\n"
    );
    std::fs::write(dir.path().join("m.py"), "y = h(1)\n").unwrap();
    let drift = crate::util::regraft(
        &["apply", "--no-config", "-r", "r.yaml", "--verify", "m.py"],
        dir.path(),
    );
    assert_eq!(
        drift.status.code(),
        Some(3),
        "{}",
        crate::util::text(&drift.stderr)
    );
}

/// What a newcomer meets: a `delete` rule without a scope says why its own output reads as
/// drift after `--write`; `explain` says a per-run count is over the files together.
#[test]
fn a_deleting_rule_explains_its_drift_after_write_and_per_run_counts_read_as_such() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("d.yaml"),
        "id: d\nmatch: \"debug($X)\"\naction: {delete: true}\nexpect: {min: 1}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("m.py"),
        "def f():\n    debug(1)\n    return 2\n",
    )
    .unwrap();
    let write = crate::util::regraft(&["apply", "-r", "d.yaml", "--write", "m.py"], dir.path());
    assert_eq!(write.status.code(), Some(0));
    let check = crate::util::regraft(&["apply", "-r", "d.yaml", "--check", "m.py"], dir.path());
    assert_eq!(check.status.code(), Some(3));
    let said = crate::util::words(&crate::util::text(&check.stderr));
    assert!(
        said.contains("give it an `inside` class or function"),
        "{said}"
    );
    std::fs::write(
        dir.path().join("p.yaml"),
        "id: p\nmatch: \"f($X)\"\naction: {replace: \"g($X)\"}\nexpect: {per: run, min: 1}\nprovides: [g]\n",
    )
    .unwrap();
    let explain = crate::util::regraft(&["explain", "p.yaml"], dir.path());
    let said = crate::util::text(&explain.stdout);
    assert!(
        said.contains("at least 1 over the run (all the selected files of a run together)"),
        "{said}"
    );
    assert!(!said.contains("per selected file"), "{said}");
}

/// `--rule-errors summary` (what the pre-commit hooks other than regraft-lint pass): a rule
/// file that does not load is named in one line, so a broken rule is reported in full once
/// per `pre-commit run`, by regraft-lint; a drift or any other failure is still in full.
#[test]
fn rule_errors_summary_names_a_broken_rule_file_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("rules")).unwrap();
    std::fs::write(
        dir.path().join("rules/r.yaml"),
        "id: r\nmach: \"f($X)\"\naction: {replace: \"g($X)\"}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("m.py"), "y = f(1)\n").unwrap();
    let run = |extra: &[&str]| {
        crate::util::regraft(
            &[&["apply", "--verify", "m.py"], extra].concat(),
            dir.path(),
        )
    };
    let summary = run(&["--rule-errors", "summary"]);
    assert_eq!(summary.status.code(), Some(2));
    assert_eq!(
        crate::util::text(&summary.stderr),
        "error: rules/r.yaml does not load: nothing checked (`regraft lint rules/r.yaml` shows why)\n"
    );
    let full = run(&[]);
    assert_eq!(full.status.code(), Some(2));
    assert!(
        crate::util::text(&full.stderr).contains("unknown key `mach`"),
        "{}",
        crate::util::text(&full.stderr)
    );
    std::fs::write(
        dir.path().join("rules/r.yaml"),
        "id: r\nmatch: \"h($X)\"\naction: {replace: \"g($X)\"}\nexpect: 1\n",
    )
    .unwrap();
    let drift = run(&["--rule-errors", "summary"]);
    assert_eq!(drift.status.code(), Some(3));
    assert!(
        crate::util::text(&drift.stderr).contains("drift"),
        "{}",
        crate::util::text(&drift.stderr)
    );
}

#[test]
fn version_names_the_commit_and_its_date() {
    let out = crate::util::regraft_ok(&["--version"], crate::util::root());
    let line = out.trim_end();
    let inner = line
        .strip_prefix(&format!("regraft {} (", env!("CARGO_PKG_VERSION")))
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{line}"));
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=9", "HEAD"])
        .current_dir(crate::util::root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match head {
        Some(commit) => {
            let (built, date) = inner.split_once(' ').unwrap_or_else(|| panic!("{line}"));
            assert_eq!(built.trim_end_matches("-modified"), commit, "{line}");
            let digits: Vec<&str> = date.split('-').collect();
            assert!(digits.len() == 3 && digits[0].len() == 4, "a date: {line}");
        }
        None => assert_eq!(inner, "not built from a git checkout"),
    }
}

#[test]
fn init_starts_a_project_whose_rules_pass_lint_fmt_and_their_tests() {
    let dir = tempfile::tempdir().unwrap();
    let said = crate::util::regraft_ok(&["init"], dir.path());
    assert!(said.contains("regraft.toml"), "{said}");
    for file in [
        "regraft.toml",
        "rules/example-rule.yaml",
        ".pre-commit-config.yaml",
    ] {
        assert!(dir.path().join(file).is_file(), "{file}");
    }
    // The configuration points the commands at rules/: no -r needed.
    let tested = crate::util::regraft_ok(&["test"], dir.path());
    assert!(tested.ends_with("3 passed, 0 failed\n"), "{tested}");
    crate::util::regraft_ok(&["lint", "--deny-warnings"], dir.path());
    crate::util::regraft_ok(&["fmt", "--check"], dir.path());
    let hooks = fs::read_to_string(dir.path().join(".pre-commit-config.yaml")).unwrap();
    let hooks: serde_yaml::Value = serde_yaml::from_str(&hooks).unwrap();
    let ids: Vec<&str> = hooks["repos"][0]["hooks"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter_map(|h| h["id"].as_str())
        .collect();
    assert_eq!(ids, ["regraft-lint", "regraft-fmt"]);
    // Again: refused, nothing touched.
    let before = fs::read_to_string(dir.path().join("regraft.toml")).unwrap();
    assert_eq!(regraft(&["init"], dir.path()).status.code(), Some(2));
    assert_eq!(
        fs::read_to_string(dir.path().join("regraft.toml")).unwrap(),
        before
    );
    // A project with its own pre-commit set-up gets the snippet printed, its file untouched.
    let other = tempfile::tempdir().unwrap();
    fs::write(other.path().join(".pre-commit-config.yaml"), "repos: []\n").unwrap();
    let said = crate::util::regraft_ok(&["init"], other.path());
    assert!(
        said.contains("add these hooks to it") && said.contains("id: regraft-lint"),
        "{said}"
    );
    assert_eq!(
        fs::read_to_string(other.path().join(".pre-commit-config.yaml")).unwrap(),
        "repos: []\n"
    );
}

/// Runs `regraft ARGS` in `dir` on a pseudo-terminal (util-linux `script`), its output as the
/// terminal got it; `None` where `script` is not installed.
fn on_a_terminal(args: &str, dir: &Path) -> Option<String> {
    let command = format!("{} {args}", crate::util::regraft_bin().display());
    let out = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .ok()?;
    Some(text(&out.stdout))
}

#[test]
fn long_runs_show_progress_on_a_terminal_and_nothing_in_a_pipe_or_with_quiet() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("r.yaml"),
        "id: r\nmatch: \"torch.compile($X)\"\naction: {replace: \"maybe_compile($X)\"}\n",
    )
    .unwrap();
    fs::create_dir(dir.path().join("tree")).unwrap();
    for i in 0..300 {
        fs::write(
            dir.path().join(format!("tree/f{i}.py")),
            format!("a = torch.compile(m{i})\n"),
        )
        .unwrap();
    }
    let Some(shown) = on_a_terminal("apply -r r.yaml tree --check", dir.path()) else {
        eprintln!("skipped: util-linux `script` is not installed, so no pseudo-terminal");
        return;
    };
    assert!(shown.contains("patching ["), "{shown}");
    let matrix = on_a_terminal(
        "matrix -r r.yaml --target transformers=1.0:tree",
        dir.path(),
    )
    .unwrap();
    assert!(matrix.contains("surveying transformers==1.0 ["), "{matrix}");
    let quiet = on_a_terminal("-q apply -r r.yaml tree --check", dir.path()).unwrap();
    assert!(!quiet.contains("patching"), "{quiet}");
    let piped = regraft(&["apply", "-r", "r.yaml", "tree", "--check"], dir.path());
    assert!(!text(&piped.stderr).contains("patching"));
}
