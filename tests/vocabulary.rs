//! Statement, function, decorator, rename and guard actions, and `after:` ordering.

use crate::util::{patch, render, rule_error, rules, versions};

fn apply(rule: &str, source: &str) -> String {
    let set = rules(rule);
    let out =
        patch(&set, &versions(&[]), "m.py", source).unwrap_or_else(|e| panic!("{}", render(&e)));
    // Every action is a fixed point: applying it to its own output changes nothing.
    let again = patch(&set, &versions(&[]), "m.py", &out.output)
        .unwrap_or_else(|e| panic!("{}", render(&e)));
    assert_eq!(again.output, out.output, "second run changed the output");
    out.output
}

const NESTED: &str = r#"class Model(nn.Module):
    def forward(self, x):
        for layer in self.layers:
            if self.training:
                h = self.embed(x)
                x = layer(h)
        return x
"#;

#[test]
fn insert_before_and_after_indent_multi_line_templates_in_nested_blocks() {
    let _snapshots = crate::util::snapshots(module_path!());
    let out = apply(
        "id: around\nmatch: \"h = self.embed($X)\"\naction:\n  insert_before: |-\n    if $X is None:\n        raise ValueError(\"no input\")\nexpect: 1\n",
        NESTED,
    );
    let out = apply(
        "id: after\nmatch: \"h = self.embed($X)\"\naction:\n  insert_after: |-\n    h = h * self.scale\n    h = self.dropout(h)\nexpect: 1\n",
        &out,
    );
    insta::assert_snapshot!(out);
}

#[test]
fn delete_statements_and_decorators() {
    let _snapshots = crate::util::snapshots(module_path!());
    let source = "class A:\n    @torch.compile\n    def f(self):\n        debug(self)\n        return 1\n\n    @torch.compile(mode=\"max-autotune\")\n    def g(self):\n        debug(self)\n";
    let out = apply(
        "id: no-compile\nmatch: \"@torch.compile($$$A)\"\naction: {delete: true}\nexpect: {max: 2}\n",
        source,
    );
    let out = apply(
        "id: no-debug\nmatch: \"debug($X)\"\naction: {delete: true}\nexpect: {min: 0}\n",
        &out,
    );
    insta::assert_snapshot!(out);
}

#[test]
fn append_body_is_guarded_by_unless_on_a_second_run() {
    let _snapshots = crate::util::snapshots(module_path!());
    let rule = "id: gc-flag\ninside: {class: Model}\nmatch: \"def __init__($$$P): $$$B\"\nunless: \"self.gradient_checkpointing = $_\"\naction:\n  append_body: \"self.gradient_checkpointing = False\"\nexpect: 1\n";
    let source = "class Model(nn.Module):\n    def __init__(self, config):\n        super().__init__()\n        self.layers = nn.ModuleList()\n";
    let once = apply(rule, source);
    insta::assert_snapshot!(once);
    let set = rules(rule);
    let report = patch(&set, &versions(&[]), "m.py", &once).unwrap();
    assert_eq!(
        report.rules[0].status,
        regraft::engine::RuleStatus::Redundant
    );
    assert!(report.rules[0].matches[0].guarded);
}

#[test]
fn prepend_body_goes_after_the_docstring_or_after_super() {
    let _snapshots = crate::util::snapshots(module_path!());
    let source = "class Model(nn.Module):\n    def __init__(self, config) -> None:\n        \"\"\"Builds it.\"\"\"\n        super().__init__()\n        self.x = 1\n";
    let after_doc = apply(
        "id: a\nmatch: \"def __init__($$$P): $$$B\"\naction: {prepend_body: \"self.ready = False\"}\n",
        source,
    );
    let after_super = apply(
        "id: b\nmatch: \"def __init__($$$P): $$$B\"\naction:\n  prepend_body: {code: \"self.config = config\", after_super: true}\n",
        source,
    );
    insta::assert_snapshot!(format!("{after_doc}---\n{after_super}"));
}

#[test]
fn add_decorator_is_idempotent() {
    let _snapshots = crate::util::snapshots(module_path!());
    let source = "import torch\n\n\nclass A:\n    @property\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n";
    let out = apply(
        "id: eager\nmatch: \"def $F(self): $$$B\"\naction: {add_decorator: \"torch._dynamo.disable\"}\nexpect: 2\n",
        source,
    );
    insta::assert_snapshot!(out);
}

#[test]
fn rename_skips_attributes_strings_and_keywords_unless_asked() {
    let _snapshots = crate::util::snapshots(module_path!());
    let source = "def f(layer_idx):\n    idx = layer_idx + 1  # layer_idx\n    return g(layer_idx=layer_idx, s=\"layer_idx\", a=self.layer_idx)\n";
    let plain = apply(
        "id: r\nmatch: \"def f($$$P): $$$B\"\naction: {rename: {from: layer_idx, to: index}}\n",
        source,
    );
    let with_attributes = apply(
        "id: r\nmatch: \"def f($$$P): $$$B\"\naction: {rename: {from: layer_idx, to: index, attributes: true}}\n",
        source,
    );
    insta::assert_snapshot!(format!("{plain}---\n{with_attributes}"));
}

#[test]
fn replace_may_span_several_statements() {
    let _snapshots = crate::util::snapshots(module_path!());
    let source = "class M:\n    def forward(self, x):\n        for layer in self.layers:\n            x = layer(x, mask)\n        return x\n";
    let out = apply(
        "id: ckpt\nmatch: \"$X = $L($$$A)\"\nnot_inside: \"if self.gradient_checkpointing and self.training: $$$T\\nelse: $$$E\"\ninside: {loop: \"for $L in self.layers\"}\naction:\n  replace: |-\n    if self.gradient_checkpointing and self.training:\n        $X = self._gradient_checkpointing_func($L.__call__, $$$A)\n    else:\n        $X = $L($$$A)\nexpect: 1\n",
        source,
    );
    insta::assert_snapshot!(out);
}

#[test]
fn after_chains_see_the_output_of_earlier_rules() {
    let chain = "id: second\nafter: [first]\nmatch: \"self.final_norm($X)\"\nnot_inside: \"$E.float()\"\naction: {replace: \"self.final_norm($X).float()\"}\nexpect: 1\n---\nid: first\nmatch: \"self.norm($X)\"\naction: {replace: \"self.final_norm($X)\"}\nexpect: 1\n";
    let set = rules(chain);
    let out = patch(&set, &versions(&[]), "m.py", "y = self.norm(x)\n").unwrap();
    assert_eq!(out.output, "y = self.final_norm(x).float()\n");
    let order: Vec<(&str, usize)> = out
        .rules
        .iter()
        .map(|r| (r.rule.as_str(), r.step))
        .collect();
    assert_eq!(order, [("first", 0), ("second", 1)]);
}

#[test]
fn after_errors() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(
        "after_unknown",
        rule_error(
            "id: a\nafter: [frist]\nmatch: \"f($X)\"\naction: {replace: \"g($X)\"}\n---\nid: first\nmatch: \"g($X)\"\naction: {replace: \"h($X)\"}\n"
        )
    );
    insta::assert_snapshot!(
        "after_cycle",
        rule_error(
            "id: a\nafter: [b]\nmatch: \"f($X)\"\naction: {replace: \"g($X)\"}\n---\nid: b\nafter: [a]\nmatch: \"g($X)\"\naction: {replace: \"h($X)\"}\n"
        )
    );
    insta::assert_snapshot!(
        "body_action_needs_function",
        rule_error("id: a\nmatch: \"f($X)\"\naction: {append_body: \"pass\"}\n")
    );
}

#[test]
fn when_probes_gate_on_what_the_file_looks_like() {
    let rule = "id: w\nwhen:\n  has: \"class $C(GradientCheckpointingLayer): $$$B\"\n  lacks_text: \"# regraft: off\"\nmatch: \"self.norm($X)\"\naction: {replace: \"self.final_norm($X)\"}\n";
    let set = rules(rule);
    let env = versions(&[]);
    let with =
        "class L(GradientCheckpointingLayer):\n    def f(self, x):\n        return self.norm(x)\n";
    let without = with.replace("GradientCheckpointingLayer", "nn.Module");
    let out = patch(&set, &env, "m.py", with).unwrap();
    assert!(out.output.contains("self.final_norm(x)"));
    let out = patch(&set, &env, "m.py", &without).unwrap();
    assert_eq!(out.output, without);
    assert_eq!(out.rules[0].status, regraft::engine::RuleStatus::Inactive);
    assert_eq!(
        out.rules[0].reason.as_deref(),
        Some("when: the file has no `class $C(GradientCheckpointingLayer): $$$B`")
    );
    let off = format!("{with}# regraft: off\n");
    let out = patch(&set, &env, "m.py", &off).unwrap();
    assert_eq!(
        out.rules[0].reason.as_deref(),
        Some("when: the file contains `# regraft: off`")
    );
    // The same rule round-trips through the DSL.
    let dsl = regraft::rules::write::to_dsl(&[(
        regraft::rules::load_yaml("w.yaml", rule).unwrap()[0].clone(),
        String::new(),
    )]);
    assert!(
        dsl.contains("  when has `class $C(GradientCheckpointingLayer): $$$B`\n"),
        "{dsl}"
    );
    assert_eq!(
        regraft::rules::load_dsl("w.graft", &dsl).unwrap(),
        regraft::rules::load_yaml("w.yaml", rule).unwrap()
    );
}

#[test]
fn rules_composed_with_a_rename_are_already_applied_after_their_write() {
    // One rule renames `old_fn`, another edits its calls by the old name in the same step: on
    // the written text each rule's applied shape is sought with the renames replayed.
    let pack = "- id: ren\n  match: \"from lib import old_fn\"\n  action: {rename: {from: old_fn, to: new_fn}}\n  expect: 1\n- id: ren-calls\n  match: \"old_fn($$$A)\"\n  action: {rename: {from: old_fn, to: new_fn}}\n  expect: 1\n- id: noflag\n  match: \"old_fn($X, flag=$F)\"\n  action: {remove_kwargs: [flag]}\n  expect: 1\n";
    let source = "from lib import old_fn\n\n\ndef f(x):\n    return old_fn(x, flag=True)\n";
    let set = rules(pack);
    let once = patch(&set, &versions(&[]), "m.py", source).unwrap();
    assert_eq!(
        once.output,
        "from lib import new_fn\n\n\ndef f(x):\n    return new_fn(x)\n"
    );
    let again = patch(&set, &versions(&[]), "m.py", &once.output)
        .unwrap_or_else(|e| panic!("{}", render(&e)));
    let statuses: Vec<String> = again
        .rules
        .iter()
        .map(|r| serde_json::to_value(r).unwrap()["status"].to_string())
        .collect();
    assert_eq!(statuses, ["\"redundant\""; 3], "{statuses:?}");
    // A rename that ran before the rule (its `after:`) is not replayed: the rule saw the new
    // name already.
    let before = pack.replace("- id: noflag\n", "- id: noflag\n  after: [ren-calls]\n");
    let drift = patch(&rules(&before), &versions(&[]), "m.py", source).unwrap_err();
    assert!(render(&drift).contains("found 0"), "{}", render(&drift));
}

#[test]
fn a_template_builds_names_from_captures() {
    let source = "class Foo:\n    pass\n";
    let out = apply(
        "id: n\nmatch: \"class $C: $$$B\"\naction:\n  insert_after: |-\n    def ${C}_forward(x):\n        return ${C}(x)\nexpect: 1\n",
        source,
    );
    assert_eq!(
        out,
        "class Foo:\n    pass\ndef Foo_forward(x):\n    return Foo(x)\n"
    );
    // A pattern matches whole names: gluing is for templates.
    let error = rule_error("id: n\nmatch: \"${C}_forward(x)\"\naction: {delete: true}\n");
    assert!(error.contains("a pattern matches whole names"), "{error}");
    let error = rule_error("id: n\nmatch: \"f($X)\"\naction: {replace: \"g(${X)\"}\n");
    assert!(error.contains("`${NAME}`"), "{error}");
}

#[test]
fn where_takes_a_list_of_kinds_and_kinds_to_avoid() {
    let source = "y = f(a)\nz = f(a.b)\nw = f(g(a))\n";
    let listed = apply(
        "id: k\nmatch: \"f($X)\"\nwhere: {$X: {kind: [identifier, attribute]}}\naction: {replace: \"h($X)\"}\nexpect: 2\n",
        source,
    );
    assert_eq!(listed, "y = h(a)\nz = h(a.b)\nw = f(g(a))\n");
    let avoided = apply(
        "id: k\nmatch: \"f($X)\"\nwhere: {$X: {not_kind: call}}\naction: {replace: \"h($X)\"}\nexpect: 2\n",
        source,
    );
    assert_eq!(avoided, listed);
    let error = rule_error(
        "id: k\nmatch: \"f($X)\"\nwhere: {$X: {not_kind: [call, kall]}}\naction: {delete: true}\n",
    );
    assert!(
        error.contains("`kall` is not a tree-sitter-python node kind"),
        "{error}"
    );
}
