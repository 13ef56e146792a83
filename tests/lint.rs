//! `regraft lint`: findings in every output format, and exit codes.

use std::process::Output;

use crate::util::{regraft, root, text};

fn lint(args: &[&str]) -> Output {
    regraft(&[&["lint"], args].concat(), root())
}

#[test]
fn shipped_rules_lint_clean() {
    let out = lint(&["-r", "rules", "--deny-warnings"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn shipped_rules_are_laid_out_as_fmt_writes_them() {
    let out = regraft(&["fmt", "--check", "rules", "examples"], root());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

#[test]
fn human_output_lists_every_finding() {
    let _snapshots = crate::util::snapshots(module_path!());
    let out = lint(&["-r", "tests/fixtures/lint"]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(text(&out.stderr));
}

#[test]
fn json_output() {
    let _snapshots = crate::util::snapshots(module_path!());
    let out = lint(&["-r", "tests/fixtures/lint", "--format", "json"]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(text(&out.stdout));
}

#[test]
fn warnings_alone_exit_zero_unless_denied() {
    let dir = tempfile::tempdir().unwrap();
    let rule = dir.path().join("r.yaml");
    std::fs::write(
        &rule,
        "id: a\nmatch: \"f($X)\"\naction: {replace: \"g($X)\"}\n",
    )
    .unwrap();
    let rule = rule.to_str().unwrap();
    assert_eq!(lint(&["-r", rule]).status.code(), Some(0));
    assert_eq!(
        lint(&["-r", rule, "--deny-warnings"]).status.code(),
        Some(1)
    );
}

#[test]
fn sarif_has_tool_rules_and_located_results() {
    let out = lint(&["-r", "tests/fixtures/lint", "--format", "sarif"]);
    let log: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(log["version"], "2.1.0");
    let run = &log["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "regraft");
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    for r in results {
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], r["ruleId"]);
        // The rule's id, with the diagnostic code as a property.
        assert_eq!(r["ruleId"], "a", "{r}");
        assert!(
            r["properties"]["code"]
                .as_str()
                .unwrap()
                .starts_with("regraft::")
        );
        assert!(matches!(r["level"].as_str(), Some("error" | "warning")));
        let loc = &r["locations"][0]["physicalLocation"];
        assert!(
            loc["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
                .ends_with(".yaml")
        );
        assert!(loc["region"]["startLine"].as_u64().unwrap() >= 1);
        assert!(loc["region"]["startColumn"].as_u64().unwrap() >= 1);
    }
}

#[test]
fn github_annotations() {
    let out = lint(&["-r", "tests/fixtures/lint", "--format", "github"]);
    let annotations = text(&out.stdout);
    assert!(
        annotations
            .lines()
            .all(|l| l.starts_with("::error file=") || l.starts_with("::warning file=")),
        "{annotations}"
    );
    // Properties escape `:` and `,` as the runner requires, so the title is not cut at `::`.
    assert!(annotations.contains("title=regraft%3A%3Alint%3A%3Aunsatisfiable::"));
}

#[test]
fn bindings_that_cannot_agree_are_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let rule = dir.path().join("r.yaml");
    std::fs::write(
        &rule,
        "id: a\ninside:\n  class: {has: \"nn.ModuleList($$$A)\"}\nmatch: \"x = layer($A)\"\naction: {replace: \"y = layer($A)\"}\nexpect: 1\n---\nid: b\nmatch: \"self.$F($X)\"\nwhere:\n  $F: {kind: call}\naction: {replace: \"g($X)\"}\nexpect: 1\n",
    )
    .unwrap();
    let out = regraft(&["lint", "-r", "r.yaml"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!("bindings_disagree", text(&out.stderr));
}

#[test]
fn every_error_of_every_rule_in_one_pass() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("r.yaml"),
        "- id: a\n  mtach: \"f($X)\"\n  on_miss: loud\n  action: {replace: \"g($X)\"}\n\
         - id: b\n  match: \"f(\"\n  files: [\"a[\"]\n  unless: \"g(\"\n  action: {replace: \"g()\"}\n\
         - id: c\n  match: \"h($X)\"\n  action: {replace: \"k($X)\"}\n",
    )
    .unwrap();
    let out = regraft(&["lint", "-r", "r.yaml", "--format", "json"], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let findings: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let said: Vec<(String, u64)> = findings
        .iter()
        .map(|f| {
            (
                f["message"].as_str().unwrap().to_string(),
                f["start"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    // Rule a: the misspelt key, the `match` it leaves missing, the bad policy.
    // Rule b: the glob (read with the rule), then the pattern and the `unless` guard (found
    // by compiling what could be read of it).
    // Rule c reads and compiles: only its missing `expect` is said.
    let lines: Vec<u64> = said.iter().map(|(_, l)| *l).collect();
    assert_eq!(lines, [2, 1, 3, 7, 6, 8, 10], "{said:#?}");
    assert!(said[0].0.contains("mtach"), "{said:#?}");
    assert!(said[1].0.contains("match"), "{said:#?}");
    assert!(said[6].0.contains("expect"), "{said:#?}");
    // Loading (apply) still stops at the first.
    std::fs::write(dir.path().join("m.py"), "f(1)\n").unwrap();
    let apply = regraft(&["apply", "-r", "r.yaml", "m.py"], dir.path());
    assert_eq!(apply.status.code(), Some(2));
    assert!(text(&apply.stderr).contains("mtach"));
    assert!(!text(&apply.stderr).contains("is not error, warn or skip"));
}

/// A predicate of several statements (`inside.*.has`, `unless`, ...) would never be found:
/// refused where written, not silently always false.
#[test]
fn a_predicate_of_several_statements_is_refused() {
    for (key, yaml) in [
        (
            "inside.function.has",
            "inside:\n  function:\n    has: \"a = 1\\nb = 2\"\n",
        ),
        ("unless", "unless: \"a = 1\\nb = 2\"\n"),
        ("when.has", "when:\n  has: \"a = 1\\nb = 2\"\n"),
    ] {
        let rule =
            format!("id: r\n{yaml}match: \"f($X)\"\naction: {{replace: \"g($X)\"}}\nexpect: 1\n");
        let error = crate::util::rule_error(&rule);
        assert!(
            error.contains(&format!("invalid `{key}`: it holds several statements")),
            "{key}: {error}"
        );
    }
}

#[test]
fn a_pattern_error_is_said_beside_errors_of_the_action_and_where() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("r.yaml"),
        "- id: a\n  match: \"f($x)\"\n  action: {replac: \"g($X)\"}\n  expect: 1\n\
         - id: b\n  match: \"f($x)\"\n  where: {$X: {regex: \"(\"}}\n  action: {replace: \"g()\"}\n  expect: 1\n",
    )
    .unwrap();
    let out = regraft(&["lint", "-r", "r.yaml", "--format", "json"], dir.path());
    let findings: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let codes: Vec<&str> = findings
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes.iter().filter(|c| c.contains("metavariable")).count(),
        2,
        "each rule's `$x` is said, whatever else failed: {codes:?}"
    );
    assert!(codes.contains(&"regraft::rule::action"), "{codes:?}");
    assert!(codes.iter().any(|c| c.contains("value")), "{codes:?}");
}

#[test]
fn a_metavariable_reused_across_a_scope_predicate_and_match_in_other_shapes_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let clash = "id: r\ninside: {class: {has: \"self.$X = nn.ModuleList($$$A)\"}}\nmatch: \"$X($$$B)\"\naction: {replace: \"g($$$B)\"}\nexpect: 1\n";
    std::fs::write(dir.path().join("clash.yaml"), clash).unwrap();
    let out = regraft(&["lint", "-r", "clash.yaml"], dir.path());
    assert!(
        text(&out.stderr).contains("it stands where only a name can in `inside.class.has`"),
        "{}",
        text(&out.stderr)
    );
    // The same shape in both (the layer list's name) is the intended reuse: nothing said.
    let agree = clash.replace("match: \"$X($$$B)\"", "match: \"self.$X($$$B)\"");
    std::fs::write(dir.path().join("clash.yaml"), agree).unwrap();
    let out = regraft(&["lint", "-r", "clash.yaml"], dir.path());
    assert!(
        text(&out.stderr).contains("0 warning(s)"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn sarif_uris_are_percent_encoded() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad #1 50%.yaml"),
        "id: x\nmatch: f($X)\naction: {nope: 1}\n",
    )
    .unwrap();
    let out = regraft(
        &["lint", "--format", "sarif", "bad #1 50%.yaml"],
        dir.path(),
    );
    let log: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let uri = &log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
        ["uri"];
    assert_eq!(uri, "bad%20%231%2050%25.yaml");
}

/// A template that writes its own pattern's match is a lint warning at the template; a guard
/// that recognises the output silences it.
#[test]
fn a_template_that_rematches_its_pattern_is_found_at_lint() {
    let findings = |rule: &str| {
        regraft::lint::lint_text("r.yaml", rule, regraft::rules::Syntax::Yaml)
            .iter()
            .map(|e| e.kind.code_name())
            .collect::<Vec<_>>()
    };
    let wraps = "id: r\nmatch: 'f($X)'\naction: {replace: 'g(f($X))'}\nexpect: 1\n";
    assert_eq!(findings(wraps), ["regraft::lint::template_rematches"]);
    let guarded =
        "id: r\nmatch: 'f($X)'\nnot_inside: 'g(f($X))'\naction: {replace: 'g(f($X))'}\nexpect: 1\n";
    assert_eq!(findings(guarded), Vec::<&str>::new());
    let renames = "id: r\nmatch: 'f($X)'\naction: {replace: 'h($X)'}\nexpect: 1\n";
    assert_eq!(findings(renames), Vec::<&str>::new());
}

#[test]
fn a_pin_without_a_case_it_fails_on_is_a_warning_until_one_is_added() {
    let dir = tempfile::tempdir().unwrap();
    let rule = dir.path().join("pin.yaml");
    let pin = "id: keeps-call\nmatch: \"f($X)\"\nexpect: 1\ntests:\n  - name: holds\n    before: \"f(1)\\n\"\n    unchanged: true\n";
    std::fs::write(&rule, pin).unwrap();
    let path = rule.to_str().unwrap();
    let out = lint(&["-r", path, "--deny-warnings"]);
    assert_eq!(out.status.code(), Some(1));
    let said = crate::util::words(&text(&out.stderr));
    assert!(
        said.contains("regraft::lint::pin_never_fails")
            && said.contains("pin `keeps-call` has no test case on which it fails: nothing shows it can fail when upstream changes"),
        "{said}"
    );
    // A case in its tests folder that expects it to fail, as well as an inline one, answers it.
    let cases = dir.path().join("keeps-call.tests");
    std::fs::create_dir(&cases).unwrap();
    std::fs::write(cases.join("gone.py"), "# regraft: error drift\ng(1)\n").unwrap();
    assert_eq!(
        lint(&["-r", path, "--deny-warnings"]).status.code(),
        Some(0)
    );
    std::fs::remove_dir_all(&cases).unwrap();
    std::fs::write(
        &rule,
        format!("{pin}  - name: gone\n    before: \"g(1)\\n\"\n    error: drift\n"),
    )
    .unwrap();
    assert_eq!(
        lint(&["-r", path, "--deny-warnings"]).status.code(),
        Some(0)
    );
}
