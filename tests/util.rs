//! Helpers shared by the integration tests: rule compiling and patching in-process, and the
//! one runner of the `regraft` binary that every CLI test uses.
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use regraft::compile::RuleSet;
use regraft::engine::{Engine, PatchError, Patched, Target};
use regraft::rules::load_yaml;
use regraft::versions::VersionEnv;

/// Compiles YAML rule text, panicking with the rendered diagnostic on failure.
pub fn rules(yaml: &str) -> RuleSet {
    let loaded = load_yaml("rule.yaml", yaml).unwrap_or_else(|e| panic!("{}", render(&e)));
    RuleSet::compile(loaded).unwrap_or_else(|e| panic!("{}", render(&e)))
}

/// What YAML rule text reads as, having checked that writing it back as YAML and as the DSL
/// reads as the same rules; the two written texts come along for further checks.
pub struct RoundTrip {
    /// The rules read.
    pub rules: Vec<regraft::rules::model::Rule>,
    /// They written as canonical YAML.
    pub yaml: String,
    /// They written in the DSL.
    pub dsl: String,
}

/// Reads `yaml`, writes it back in both syntaxes, and asserts both read as the same rules.
pub fn round_trip(yaml: &str) -> RoundTrip {
    use regraft::rules::{load_dsl, write};
    let rules = load_yaml("r.yaml", yaml).unwrap_or_else(|e| panic!("{}", render(&e)));
    let with_comments: Vec<_> = rules.iter().map(|r| (r.clone(), String::new())).collect();
    let (yaml, dsl) = (
        write::to_yaml(&with_comments),
        write::to_dsl(&with_comments),
    );
    assert_eq!(load_yaml("r.yaml", &yaml).unwrap(), rules, "{yaml}");
    assert_eq!(load_dsl("r.graft", &dsl).unwrap(), rules, "{dsl}");
    RoundTrip { rules, yaml, dsl }
}

/// The rule-loading or compiling error of YAML rule text, rendered.
pub fn rule_error(yaml: &str) -> String {
    let error = match load_yaml("rule.yaml", yaml) {
        Err(e) => e,
        Ok(rules) => match RuleSet::compile(rules) {
            Err(e) => e,
            Ok(_) => panic!("rule loaded without error:\n{yaml}"),
        },
    };
    render(&error)
}

/// Versions from `PKG=VER` pairs.
pub fn versions(pairs: &[&str]) -> VersionEnv {
    let mut env = VersionEnv::default();
    for p in pairs {
        env.insert_pair(p).unwrap();
    }
    env
}

/// Patches `source` (at `path`) with `rules` under `versions`.
pub fn patch(
    rules: &RuleSet,
    versions: &VersionEnv,
    path: &str,
    source: &str,
) -> Result<Patched, PatchError> {
    Engine::new(rules, versions, None).patch(Target { path, source })
}

/// `source` (at `m.py`) patched by the YAML `rule` with no versions, panicking with the
/// rendered diagnostic where it fails.
pub fn patched(rule: &str, source: &str) -> String {
    patch(&rules(rule), &versions(&[]), "m.py", source)
        .unwrap_or_else(|e| panic!("{}", render(&e)))
        .output
}

/// Renders a diagnostic without colour, as a user sees it in a log.
pub fn render(diagnostic: &dyn miette::Diagnostic) -> String {
    regraft::report::render(diagnostic, regraft::report::Palette::new(false))
}

/// The shipped Whisper rule.
pub fn whisper_rule() -> RuleSet {
    rules(include_str!(
        "../rules/whisper-decoder-layer-positional.yaml"
    ))
}

/// The `regraft` binary every test runs (a shell line may need its path).
pub fn regraft_bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_regraft"))
}

/// The `regraft` binary, run in `dir` without colour.
pub fn regraft_command(args: &[&str], dir: &Path) -> Command {
    let mut command = Command::new(regraft_bin());
    command.args(args).current_dir(dir).env("NO_COLOR", "1");
    command
}

/// Runs `regraft ARGS` in `dir` and waits for it.
pub fn regraft(args: &[&str], dir: &Path) -> Output {
    regraft_command(args, dir)
        .output()
        .expect("the regraft binary runs")
}

/// Runs `regraft ARGS` in `dir`, which must succeed (its stderr shown if not); its stdout.
pub fn regraft_ok(args: &[&str], dir: &Path) -> String {
    let out = regraft(args, dir);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Runs `regraft ARGS` in `dir` with `input` on stdin.
pub fn regraft_with_stdin(args: &[&str], dir: &Path, input: &str) -> Output {
    let mut child = regraft_command(args, dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the regraft binary runs");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(input.as_bytes())
        .expect("stdin takes the input");
    child.wait_with_output().expect("the regraft binary ends")
}

/// The repository's root, where tests that read shipped files run the binary.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A rendered diagnostic's words, one space apart: miette wraps long messages and draws a
/// gutter (`│`) at the start of continuation lines, so phrases are looked for here.
pub fn words(rendered: &str) -> String {
    rendered
        .replace('│', " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The near-miss reasons `explain --in` gives for the one rule of YAML `rule` in `source`.
pub fn near_misses(rule: &str, source: &str) -> Vec<String> {
    use regraft::engine::{Engine, Target};
    let set = rules(rule);
    let env = versions(&[]);
    let found = Engine::new(&set, &env, None)
        .explain(
            0,
            Target {
                path: "m.py",
                source,
            },
        )
        .unwrap();
    found.near_misses.iter().map(|n| n.to_string()).collect()
}

/// Bytes as text, for messages and comparisons.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Keeps a test's snapshots in `tests/snapshots/FEATURE/`, named by the assertion alone;
/// FEATURE is the test module's name. Hold the guard for the test's duration.
pub fn snapshots(module: &str) -> insta::internals::SettingsBindDropGuard {
    let feature = module.rsplit("::").next().unwrap_or(module);
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(format!("snapshots/{feature}"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind_to_scope()
}

/// Runs the Python `script` with `payload` as JSON on stdin and returns what it prints as
/// JSON: one batched `python3` for a differential test against CPython.
pub fn python_json<T: serde::de::DeserializeOwned>(
    script: &str,
    payload: &impl serde::Serialize,
) -> T {
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let input = serde_json::to_string(payload).expect("the payload serialises");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(input.as_bytes())
        .expect("python3 reads its input");
    let out = child.wait_with_output().expect("python3 ends");
    assert!(out.status.success(), "the python3 check itself failed");
    serde_json::from_slice(&out.stdout).expect("python3 prints JSON")
}
