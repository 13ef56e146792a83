//! Rendered diagnostics for rule-authoring errors and for every kind of patching failure.

use crate::util::{patch, render, rule_error, rules, versions};

const BASE: &str = r#"id: demo
requires:
  transformers: ">=4.52"
files: ["**/modeling_demo.py"]
match: "$OUT = self.layer($$$ARGS)"
action:
  remove_kwargs: [output_attentions]
expect: 1
"#;

/// `BASE` with one line replaced.
/// The demo target patched by `rules` on transformers 4.57.6.
fn demo(
    rules: &regraft::compile::RuleSet,
) -> Result<regraft::engine::Patched, regraft::engine::PatchError> {
    patch(
        rules,
        &versions(&["transformers=4.57.6"]),
        "m/modeling_demo.py",
        TARGET,
    )
}

fn with(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from}");
    BASE.replace(from, to)
}

#[test]
fn base_rule_loads() {
    rules(BASE);
}

#[test]
fn unknown_key_suggests_the_closest() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(rule_error(&with("requires:", "requries:")));
}

#[test]
fn wrong_type() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(rule_error(&with("expect: 1", "expect: one")));
}

#[test]
fn missing_match() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(rule_error(&with(
        "match: \"$OUT = self.layer($$$ARGS)\"\n",
        ""
    )));
}

#[test]
fn bad_specifier() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(rule_error(&with("\">=4.52\"", "\">=4.52,<<5\"")));
}

#[test]
fn unquoted_version_number() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(rule_error(&with("\">=4.52\"", "4.52")));
}

#[test]
fn misspelt_phase() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(rule_error(&with(
        "expect: 1",
        "expect: 1\nphase: precompile"
    )));
}

#[test]
fn pattern_that_is_not_python() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(rule_error(&with("($$$ARGS)\"", "($$$ARGS\"")));
}

#[test]
fn lower_case_metavariable() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(rule_error(&with("$OUT =", "$out =")));
}

#[test]
fn misspelt_action() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(rule_error(&with("remove_kwargs:", "remove_kwarg:")));
}

#[test]
fn call_action_on_a_pattern_without_a_call() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(rule_error(&with("self.layer($$$ARGS)", "$X")));
}

#[test]
fn unbound_metavariable_in_a_template() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(rule_error(&with(
        "  remove_kwargs: [output_attentions]",
        "  replace: \"$OUT = checkpoint(self.layer, $$$ARG)\""
    )));
}

#[test]
fn yaml_syntax_error() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(rule_error(&with(
        "files: [\"**/modeling_demo.py\"]",
        "files: [\"**/modeling_demo.py\""
    )));
}

#[test]
fn bad_class_regex() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(rule_error(&with(
        "expect: 1",
        "expect: 1\ninside:\n  class: {regex: \"Whisper(Decoder\"}"
    )));
}

#[test]
fn loop_that_is_not_a_for_header() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(rule_error(&with(
        "expect: 1",
        "expect: 1\ninside:\n  loop: \"while $X\""
    )));
}

#[test]
fn duplicate_ids() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(rule_error(&format!("{BASE}---\n{BASE}")));
}

#[test]
fn non_utf8_rule_file() {
    let _snapshots = crate::util::snapshots(module_path!());
    let mut bytes = BASE.as_bytes().to_vec();
    bytes.splice(4..4, [0xff, 0xfe]);
    let error =
        regraft::rules::load_bytes("rule.yaml", &bytes, regraft::rules::Syntax::Yaml).unwrap_err();
    insta::assert_snapshot!(render(&error));
}

const TARGET: &str = "class Demo:\n    def forward(self, x):\n        out = self.layer(x, output_attentions=True, use_cache=False)\n        return out\n";

#[test]
fn drift_when_the_call_is_gone() {
    let _snapshots = crate::util::snapshots(module_path!());
    let source = TARGET.replace("out = self.layer(", "out = self.block(");
    let err = patch(
        &rules(BASE),
        &versions(&["transformers=4.57.6"]),
        "m/modeling_demo.py",
        &source,
    )
    .unwrap_err();
    assert_eq!(err.kind(), "drift");
    insta::assert_snapshot!(render(&err));
}

#[test]
fn drift_when_there_are_too_many() {
    let _snapshots = crate::util::snapshots(module_path!());
    let source = TARGET.replace(
        "        return out\n",
        "        out = self.layer(out)\n        return out\n",
    );
    let err = patch(
        &rules(BASE),
        &versions(&["transformers=4.57.6"]),
        "m/modeling_demo.py",
        &source,
    )
    .unwrap_err();
    insta::assert_snapshot!(render(&err));
}

#[test]
fn conflict_between_two_rules() {
    let _snapshots = crate::util::snapshots(module_path!());
    // Both rules edit `output_attentions=True`: one removes it, one sets it.
    let second = with("id: demo", "id: demo-cache").replace(
        "  remove_kwargs: [output_attentions]",
        "  set_kwargs: {output_attentions: \"False\"}",
    );
    let both = rules(&format!("{BASE}---\n{second}"));
    let err = demo(&both).unwrap_err();
    assert_eq!(err.kind(), "conflict");
    insta::assert_snapshot!(render(&err));
}

#[test]
fn unparseable_target() {
    let _snapshots = crate::util::snapshots(module_path!());
    let source = "class Demo:\n    def forward(self, x:\n        return x\n";
    let err = patch(
        &rules(BASE),
        &versions(&["transformers=4.57.6"]),
        "m/modeling_demo.py",
        source,
    )
    .unwrap_err();
    assert_eq!(err.kind(), "target-syntax");
    insta::assert_snapshot!(render(&err));
}

#[test]
fn unparseable_result() {
    let _snapshots = crate::util::snapshots(module_path!());
    let broken = with(
        "  remove_kwargs: [output_attentions]",
        "  replace: \"$OUT = self.layer($$$ARGS\"",
    );
    let err = demo(&rules(&broken)).unwrap_err();
    assert_eq!(err.kind(), "unparseable-result");
    insta::assert_snapshot!(render(&err));
}

#[test]
fn not_idempotent() {
    let _snapshots = crate::util::snapshots(module_path!());
    let growing = with(
        "  remove_kwargs: [output_attentions]",
        "  replace: \"$OUT = self.layer(1, $$$ARGS)\"",
    );
    let err = demo(&rules(&growing)).unwrap_err();
    insta::assert_snapshot!(render(&err));
}

#[test]
fn cpython_rejects_what_tree_sitter_accepts() {
    let _snapshots = crate::util::snapshots(module_path!());
    // tree-sitter reads `f(a=1, x)`; CPython does not: nothing is written.
    let positional_last = with(
        "  remove_kwargs: [output_attentions]",
        "  replace: \"$OUT = self.layer($$$ARGS, 1)\"",
    );
    let err = demo(&rules(&positional_last)).unwrap_err();
    assert_eq!(err.kind(), "unparseable-result");
    insta::assert_snapshot!(render(&err));
}

#[test]
fn rules_editing_disjoint_parts_of_one_call_compose() {
    let second = with("id: demo", "id: demo-cache").replace(
        "  remove_kwargs: [output_attentions]",
        "  set_kwargs: {use_cache: \"True\"}",
    );
    let both = rules(&format!("{BASE}---\n{second}"));
    let out = demo(&both).unwrap_or_else(|e| panic!("{}", render(&e)));
    assert!(
        out.output.contains("out = self.layer(x, use_cache=True)"),
        "{}",
        out.output
    );
}
