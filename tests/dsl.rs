//! The text DSL: one model with YAML, canonical round trips, and its diagnostics.

use std::fs;
use std::path::{Path, PathBuf};

use regraft::rules::model::Rule;

use crate::util::regraft;
use regraft::rules::{Syntax, load_dsl, load_text, load_yaml, write};

fn with_comments(rules: &[Rule]) -> Vec<(Rule, String)> {
    rules
        .iter()
        .map(|r| {
            (
                r.clone(),
                write::leading_comments(r.origin.file.text(), r.origin.span.start),
            )
        })
        .collect()
}

fn to_dsl(rules: &[Rule]) -> String {
    write::to_dsl(&with_comments(rules))
}

fn to_yaml(rules: &[Rule]) -> String {
    write::to_yaml(&with_comments(rules))
}

fn rule_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("rules"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| regraft::rules::is_rule_file(p))
        .collect();
    files.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/every-key.yaml"));
    files.sort();
    files
}

fn load(path: &Path) -> Vec<Rule> {
    let text = fs::read_to_string(path).unwrap();
    let syntax = Syntax::of(path).unwrap();
    load_text(&path.display().to_string(), &text, syntax)
        .unwrap_or_else(|e| panic!("{}", crate::util::render(&e)))
}

#[test]
fn every_shipped_rule_is_the_same_model_in_both_syntaxes() {
    let _snapshots = crate::util::snapshots(module_path!());
    for path in rule_files() {
        let rules = load(&path);
        let dsl = to_dsl(&rules);
        let from_dsl = load_dsl("converted.graft", &dsl)
            .unwrap_or_else(|e| panic!("{}\n{dsl}", crate::util::render(&e)));
        assert_eq!(rules, from_dsl, "{}", path.display());
        let yaml = to_yaml(&from_dsl);
        let back = load_yaml("converted.yaml", &yaml).unwrap();
        assert_eq!(rules, back, "{}", path.display());
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        insta::assert_snapshot!(format!("dsl_{name}"), dsl);
    }
}

#[test]
fn canonical_text_round_trips_byte_for_byte() {
    for path in rule_files() {
        let rules = load(&path);
        let dsl = to_dsl(&rules);
        let yaml = to_yaml(&rules);
        // DSL → YAML → DSL
        let via_yaml =
            to_dsl(&load_yaml("x.yaml", &to_yaml(&load_dsl("x.graft", &dsl).unwrap())).unwrap());
        assert_eq!(via_yaml, dsl, "{}", path.display());
        // YAML → DSL → YAML
        let via_dsl =
            to_yaml(&load_dsl("x.graft", &to_dsl(&load_yaml("x.yaml", &yaml).unwrap())).unwrap());
        assert_eq!(via_dsl, yaml, "{}", path.display());
    }
}

#[test]
fn leading_comments_survive_conversion() {
    let rules = load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/every-key.yaml"));
    assert!(
        to_dsl(&rules).starts_with(
            "# Exercises every key and value form the rule model has.\nrule every-key\n"
        )
    );
}

const WHISPER_DSL: &str = "# The Whisper case of the README.
rule whisper-decoder-layer-positional
  description \"Call Whisper decoder layers positionally so gradient checkpointing can forward them.\"
  requires transformers >=4.52
  phase pre_compile
  files [\"**/whisper/modeling_whisper.py\"]
  inside class WhisperDecoder
  inside function forward
  inside loop `for $_, $LAYER in enumerate(self.layers)`
  match `$OUT = $LAYER($$$ARGS)`
  kwargs_to_positional signature WhisperDecoderLayer.forward
  expect 1
";

#[test]
fn a_dsl_rule_applies_like_its_yaml_twin() {
    let rules =
        regraft::compile::RuleSet::compile(load_dsl("w.graft", WHISPER_DSL).unwrap()).unwrap();
    let source = include_str!("../examples/whisper/modeling_whisper.py");
    let env = crate::util::versions(&["transformers=4.57.6"]);
    let from_dsl =
        crate::util::patch(&rules, &env, "examples/whisper/modeling_whisper.py", source).unwrap();
    let from_yaml = crate::util::patch(
        &crate::util::whisper_rule(),
        &env,
        "examples/whisper/modeling_whisper.py",
        source,
    )
    .unwrap();
    assert_eq!(from_dsl.output, from_yaml.output);
    assert_ne!(from_dsl.output, source);
}

fn dsl_error(text: &str) -> String {
    let error = match load_dsl("rules.graft", text) {
        Err(e) => e,
        Ok(rules) => regraft::compile::RuleSet::compile(rules).expect_err("an error"),
    };
    crate::util::render(&error)
}

fn whisper_with(from: &str, to: &str) -> String {
    assert!(WHISPER_DSL.contains(from), "{from}");
    WHISPER_DSL.replace(from, to)
}

#[test]
fn parse_error_unclosed_backtick() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(dsl_error(&whisper_with(
        "match `$OUT = $LAYER($$$ARGS)`",
        "match `$OUT = $LAYER($$$ARGS)"
    )));
}

#[test]
fn parse_error_unclosed_string() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(dsl_error(&whisper_with("forward them.\"", "forward them.")));
}

#[test]
fn parse_error_statement_without_value() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(dsl_error(&whisper_with("  expect 1", "  expect")));
}

#[test]
fn parse_error_misspelt_rule_keyword() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(dsl_error(&whisper_with("rule whisper", "rul whisper")));
}

#[test]
fn parse_error_value_in_key_position() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(dsl_error(&whisper_with(
        "inside class WhisperDecoder",
        "inside \"class\" WhisperDecoder"
    )));
}

#[test]
fn parse_error_key_given_twice() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(dsl_error(&whisper_with(
        "  expect 1",
        "  expect 1\n  expect 2"
    )));
}

#[test]
fn parse_error_unclosed_list() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(dsl_error(&whisper_with(
        "files [\"**/whisper/modeling_whisper.py\"]",
        "files [\"**/whisper/modeling_whisper.py\""
    )));
}

#[test]
fn parse_error_missing_rule_id() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(dsl_error(&whisper_with(
        "rule whisper-decoder-layer-positional",
        "rule"
    )));
}

#[test]
fn parse_error_unclosed_fence() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(dsl_error(&whisper_with(
        "  kwargs_to_positional signature WhisperDecoderLayer.forward",
        "  replace ```\n    $OUT = 1\n"
    )));
}

#[test]
fn semantic_error_unknown_key_with_did_you_mean() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(dsl_error(&whisper_with("inside class", "insde class")));
}

#[test]
fn semantic_error_misspelt_action() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(dsl_error(&whisper_with(
        "kwargs_to_positional signature",
        "kwargs_to_positionals signature"
    )));
}

#[test]
fn semantic_error_bad_specifier_points_into_the_dsl() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(dsl_error(&whisper_with(">=4.52", ">=4..52")));
}

#[test]
fn semantic_error_pattern_not_python_points_into_the_backticks() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(dsl_error(&whisper_with(
        "`$OUT = $LAYER($$$ARGS)`",
        "`$OUT = = $LAYER($$$ARGS)`"
    )));
}

#[test]
fn semantic_error_misspelt_phase() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(dsl_error(&whisper_with(
        "phase pre_compile",
        "phase precompile"
    )));
}

#[test]
fn fmt_checks_rewrites_and_keeps_leading_comments() {
    let dir = tempfile::tempdir().unwrap();
    let messy = "# keep me\nrule a\n    match   `f($X)`\n  replace `g($X)`\n\n\n";
    fs::write(dir.path().join("a.graft"), messy).unwrap();
    let check = regraft(&["fmt", "--check", "a.graft"], dir.path());
    assert_eq!(check.status.code(), Some(1));
    let write = regraft(&["fmt", "a.graft"], dir.path());
    assert_eq!(
        write.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&write.stderr)
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("a.graft")).unwrap(),
        "# keep me\nrule a\n  match `f($X)`\n  replace `g($X)`\n"
    );
    assert_eq!(
        regraft(&["fmt", "--check", "a.graft"], dir.path())
            .status
            .code(),
        Some(0)
    );
    let to_yaml = regraft(&["fmt", "--to", "yaml", "a.graft"], dir.path());
    assert_eq!(
        String::from_utf8_lossy(&to_yaml.stdout),
        "# keep me\nid: a\nmatch: f($X)\naction:\n  replace: g($X)\n"
    );
}

#[test]
fn fmt_refuses_to_drop_a_comment_inside_a_rule() {
    let dir = tempfile::tempdir().unwrap();
    let text = "rule a\n  match `f($X)`  # why this matches\n  replace `g($X)`\n";
    fs::write(dir.path().join("a.graft"), text).unwrap();
    let out = regraft(&["fmt", "a.graft"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("fmt would drop this comment"));
    assert_eq!(
        fs::read_to_string(dir.path().join("a.graft")).unwrap(),
        text
    );
}

#[test]
fn fmt_keeps_comments_above_a_rules_keys_in_both_syntaxes() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = "- id: a\n  # why this shape\n  match: \"f($X)\"\n  # the fix\n  action: {replace: \"g($X)\"}\n";
    fs::write(dir.path().join("a.yaml"), yaml).unwrap();
    let check = regraft(&["fmt", "--check", "a.yaml"], dir.path());
    assert_eq!(check.status.code(), Some(0), "a list stays a list");
    let out = regraft(&["fmt", "--canonical", "a.yaml"], dir.path());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("a.yaml")).unwrap(),
        "id: a\n# why this shape\nmatch: \"f($X)\"\n# the fix\naction: {replace: \"g($X)\"}\n",
        "the author's quoting and flow style stay where the value is already canonical"
    );
    let to_dsl = regraft(&["fmt", "--to", "dsl", "a.yaml"], dir.path());
    assert_eq!(
        String::from_utf8_lossy(&to_dsl.stdout),
        "rule a\n  # why this shape\n  match `f($X)`\n  # the fix\n  replace `g($X)`\n"
    );
    // A DSL file's comment above a bare action stays above it.
    fs::write(
        dir.path().join("b.graft"),
        String::from_utf8_lossy(&to_dsl.stdout).as_ref(),
    )
    .unwrap();
    let check = regraft(&["fmt", "--check", "b.graft"], dir.path());
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
}

#[test]
fn rule_folders_load_dsl_files_beside_yaml() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("rules")).unwrap();
    fs::write(
        dir.path().join("rules/a.graft"),
        "rule a\n  match `f($X)`\n  replace `g($X)`\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("rules/b.yaml"),
        "id: b\nmatch: \"h($X)\"\naction: {replace: \"k($X)\"}\n",
    )
    .unwrap();
    fs::write(dir.path().join("t.py"), "f(1)\nh(2)\n").unwrap();
    let out = regraft(&["apply", "t.py"], dir.path());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "g(1)\nk(2)\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn on_refuse_reads_and_writes_in_both_syntaxes() {
    let yaml = "id: r\non_refuse: warn\nmatch: \"f($$$A)\"\naction: {remove_kwargs: [x]}\n";
    let rules = load_yaml("r.yaml", yaml).unwrap();
    assert_eq!(rules[0].on_refuse, regraft::rules::model::Policy::Warn);
    let dsl = to_dsl(&rules);
    assert!(dsl.contains("on_refuse warn"), "{dsl}");
    assert_eq!(load_dsl("r.graft", &dsl).unwrap(), rules);
}
