//! `inside.class` / `inside.function` select scopes by what they hold and what they extend,
//! not only by name.

use regraft::rules::{load_dsl, load_yaml, write};

use crate::util::{patch, render, round_trip, rules, versions};

const MODELS: &str = r#"class ALayer(GradientCheckpointingLayer):
    def forward(self, x):
        return x


class AModel(nn.Module):
    def __init__(self, config):
        self.layers = nn.ModuleList([ALayer(config) for _ in range(2)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x, mask=None)
        return x


class BModel(nn.Module):
    def __init__(self, config):
        self.blocks = nn.ModuleList([ALayer(config) for _ in range(2)])
        self.gradient_checkpointing = False

    def forward(self, x):
        for layer in self.blocks:
            x = layer(x, mask=None)
        return x


class Helper:
    def forward(self, x):
        x = layer(x, mask=None)
        return x
"#;

const RULE: &str = "id: r\ninside:\n  class:\n    has: \"self.$L = nn.ModuleList($$$A)\"\n    lacks: \"self.gradient_checkpointing = $_\"\nmatch: \"x = layer($$$ARGS)\"\naction: {remove_kwargs: [mask]}\nexpect: {min: 0}\n";

#[test]
fn a_class_is_selected_by_what_it_holds_and_lacks() {
    let out = patch(&rules(RULE), &versions(&[]), "m.py", MODELS)
        .unwrap_or_else(|e| panic!("{}", render(&e)));
    let changed: Vec<&str> = out
        .output
        .lines()
        .filter(|l| l.contains("layer(x)"))
        .collect();
    assert_eq!(
        changed.len(),
        1,
        "only AModel holds a ModuleList and lacks the flag:\n{}",
        out.output
    );
    assert!(out.output.contains("class BModel"));
    let b = &out.output[out.output.find("class BModel").unwrap()..];
    assert!(b.contains("layer(x, mask=None)"), "BModel keeps its call");
}

#[test]
fn extends_reads_the_bases_as_written() {
    let rule = "id: r\ninside: {class: {extends: GradientCheckpointingLayer}}\nmatch: \"return x\"\naction: {replace: \"return y\"}\nexpect: 1\n";
    let out = patch(&rules(rule), &versions(&[]), "m.py", MODELS).unwrap();
    assert_eq!(out.output.matches("return y").count(), 1);
    let by_name = "id: r\ninside: {class: {name: AModel, has: \"nn.ModuleList($$$A)\"}, function: forward}\nmatch: \"return x\"\naction: {replace: \"return y\"}\nexpect: 1\n";
    assert_eq!(
        patch(&rules(by_name), &versions(&[]), "m.py", MODELS)
            .unwrap()
            .output
            .matches("return y")
            .count(),
        1
    );
}

#[test]
fn explain_says_which_predicate_a_class_misses() {
    let reasons = crate::util::near_misses(RULE, MODELS);
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("class `BModel` has `self.gradient_checkpointing = $_`")),
        "{reasons:#?}"
    );
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("class `Helper` lacks `self.$L = nn.ModuleList($$$A)`")),
        "{reasons:#?}"
    );
}

#[test]
fn scope_predicates_read_and_write_in_both_syntaxes() {
    let dsl = round_trip(RULE).dsl;
    assert!(
        dsl.contains("inside class has `self.$L = nn.ModuleList($$$A)`"),
        "{dsl}"
    );
}

#[test]
fn a_misspelt_predicate_is_refused_with_the_closest_key() {
    let bad = RULE.replace("    has:", "    hass:");
    let err = crate::util::rule_error(&bad);
    assert!(err.contains("unknown key `hass`"), "{err}");
    assert!(err.contains("did you mean `has`?"), "{err}");
    let empty = "id: r\ninside: {class: {}}\nmatch: \"f($X)\"\naction: {delete: true}\n";
    assert!(crate::util::rule_error(empty).contains("missing"));
}

#[test]
fn where_constrains_what_a_metavariable_bound() {
    let source = "a = self.q_proj(x)\nb = self.k_proj(x)\nc = q_proj(x)\nd = self.o_proj(x.y)\n";
    let run = |conditions: &str| {
        let rule = format!(
            "id: r\nmatch: \"$V = $F($A)\"\nwhere: {{{conditions}}}\naction: {{replace: \"$V = checkpoint($F, $A)\"}}\nexpect: {{min: 0}}\n"
        );
        let out = patch(&rules(&rule), &versions(&[]), "m.py", source)
            .unwrap_or_else(|e| panic!("{}", render(&e)));
        out.output
            .lines()
            .filter(|l| l.contains("checkpoint"))
            .count()
    };
    assert_eq!(run("$F: {regex: \"^self\\\\.[qk]_proj$\"}"), 2);
    assert_eq!(run("$F: {not_regex: \"o_proj\", kind: attribute}"), 2);
    assert_eq!(
        run("F: {kind: identifier}"),
        1,
        "a key may leave out the `$`"
    );
    assert_eq!(run("$A: {has: \"x.y\"}"), 1);
}

#[test]
fn where_refuses_unbound_names_and_unknown_kinds() {
    let unbound = "id: r\nmatch: \"f($A)\"\nwhere: {$B: {kind: call}}\naction: {delete: true}\n";
    let err = crate::util::rule_error(unbound);
    assert!(err.contains("$B") && err.contains("$A"), "{err}");
    let kind = "id: r\nmatch: \"f($A)\"\nwhere: {$A: {kind: cal}}\naction: {delete: true}\n";
    assert!(crate::util::rule_error(kind).contains("not a tree-sitter-python node kind"));
    let dsl = "rule r\n  match `f($A)`\n  where A regex \"^x\"\n  delete true\n";
    let loaded = load_dsl("r.graft", dsl).unwrap();
    let with_comments: Vec<_> = loaded.iter().map(|r| (r.clone(), String::new())).collect();
    assert_eq!(
        load_yaml("r.yaml", &write::to_yaml(&with_comments)).unwrap(),
        loaded
    );
    assert_eq!(
        load_dsl("r.graft", &write::to_dsl(&with_comments)).unwrap(),
        loaded
    );
}

#[test]
fn expect_per_class_keeps_drift_detection_for_each_class() {
    let rule = |count: &str| {
        format!(
            "id: r\ninside:\n  class: {{has: \"nn.ModuleList($$$A)\"}}\n  function: forward\nmatch: \"x = layer($$$ARGS)\"\naction: {{remove_kwargs: [mask]}}\nexpect: {{per: class, {count}}}\n"
        )
    };
    // AModel and BModel each hold one such call.
    let out = patch(&rules(&rule("count: 1")), &versions(&[]), "m.py", MODELS)
        .unwrap_or_else(|e| panic!("{}", render(&e)));
    assert_eq!(out.output.matches("layer(x)").count(), 2, "{}", out.output);
    // A class whose call is gone drifts, named, though the file still has a match elsewhere.
    let drifted = MODELS.replacen(
        "            x = layer(x, mask=None)\n        return x\n\n\nclass BModel",
        "            x = x\n        return x\n\n\nclass BModel",
        1,
    );
    let err = patch(&rules(&rule("count: 1")), &versions(&[]), "m.py", &drifted).unwrap_err();
    let text = render(&err);
    assert!(text.contains("exactly 1 per class"), "{text}");
    assert!(text.contains("`AModel` has 0 match(es)"), "{text}");
    let dsl = round_trip(&rule("count: 1")).dsl;
    assert!(dsl.contains("expect per class"), "{dsl}");
}

#[test]
fn a_per_class_expect_under_warn_declines_only_the_class_that_misses() {
    let source = "class A:\n    def forward(self, x):\n        return f(x)\n\n\nclass B:\n    def forward(self, x):\n        return g(x)\n\n\nclass C:\n    def forward(self, x):\n        return f(x) + f(x)\n";
    let rule = "id: pc\ninside: {class: {regex: \"^[ABC]$\"}, function: forward}\nmatch: \"f($X)\"\naction: {replace: \"h($X)\"}\nexpect: {per: class, count: 1}\non_miss: warn\n";
    let out = crate::util::patch(
        &crate::util::rules(rule),
        &crate::util::versions(&[]),
        "m.py",
        source,
    )
    .unwrap();
    // A holds and is patched; B (no match) and C (two) miss, each warned about, left alone.
    assert!(
        out.output.contains("        return h(x)\n\n\nclass B"),
        "{}",
        out.output
    );
    assert!(out.output.contains("return f(x) + f(x)"), "{}", out.output);
    assert_eq!(out.warnings.len(), 2, "{:?}", out.warnings);
    // Under `on_miss: error` the file fails as before.
    let strict = rule.replace("on_miss: warn\n", "");
    assert!(
        crate::util::patch(
            &crate::util::rules(&strict),
            &crate::util::versions(&[]),
            "m.py",
            source
        )
        .is_err()
    );
}

#[test]
fn a_scope_predicate_can_count_what_it_has() {
    let one = "class A(nn.Module):\n    def __init__(self):\n        self.layers = nn.ModuleList([])\n\n    def forward(self, x):\n        for layer in self.layers:\n            x = layer(x, mask=None)\n        return x\n";
    let two = one.replace(
        "        self.layers = nn.ModuleList([])\n",
        "        self.layers = nn.ModuleList([])\n        self.extra = nn.ModuleList([])\n",
    );
    let rule = "id: c\ninside:\n  class: {has: \"self.$L = nn.ModuleList($$$A)\", count: 1}\n  function: forward\nmatch: \"x = layer(x, mask=$M)\"\naction: {remove_kwargs: [mask]}\nexpect: {min: 0}\n";
    let rules = crate::util::rules(rule);
    let env = crate::util::versions(&[]);
    let out = crate::util::patch(&rules, &env, "m.py", one).unwrap();
    assert!(
        out.output.contains("x = layer(x)\n"),
        "exactly one: applies\n{}",
        out.output
    );
    let out = crate::util::patch(&rules, &env, "m.py", &two).unwrap();
    assert_eq!(out.output, two, "two lists: the class is not selected");
    // `count` needs `has`, and counts from 1.
    let error = crate::util::rule_error(
        "id: c\ninside: {class: {lacks: \"x\", count: 1}}\nmatch: \"f($X)\"\naction: {delete: true}\n",
    );
    assert!(error.contains("how many matches of `has`"), "{error}");
}

#[test]
fn a_predicate_is_found_wherever_it_stands_in_the_class() {
    // The searches below a class skip what cannot hold the pattern's root and what lacks its
    // literals: a `lacks` hidden in a lambda, a comprehension, an f-string field, a nested
    // def's default or a decorator must still be found, and still exclude the class.
    let rule = "id: r\ninside:\n  class:\n    has: \"self.$L = nn.ModuleList($$$A)\"\n    lacks: \"self.$L.append($$$X)\"\nmatch: \"x = layer($$$ARGS)\"\naction: {remove_kwargs: [mask]}\nexpect: {min: 0}\n";
    let hidden = [
        "        self.hook = lambda m: self.layers.append(m)",
        "        _ = [self.layers.append(m) for m in ()]",
        "        _ = f\"{self.layers.append(1)}\"",
        "        def more(n=self.layers.append(2)):\n            pass",
        "        @decorate(self.layers.append(3))\n        def more():\n            pass",
        "        if True:\n            while False:\n                g(h(self.layers.append(4)))",
    ];
    for line in hidden {
        let source = format!(
            "import torch.nn as nn\n\nclass M:\n    def __init__(self):\n        self.layers = nn.ModuleList([])\n{line}\n\n    def forward(self, x):\n        for layer in self.layers:\n            x = layer(x, mask=None)\n        return x\n"
        );
        let out = patch(&rules(rule), &versions(&[]), "m.py", &source)
            .unwrap_or_else(|e| panic!("{}", render(&e)));
        assert_eq!(out.output, source, "the class appends to its list:\n{line}");
    }
    // The metavariable the `has` bound is part of what `lacks` looks for: another list's
    // append does not exclude the class.
    let other = "import torch.nn as nn\n\nclass M:\n    def __init__(self):\n        self.layers = nn.ModuleList([])\n        self.hook = lambda m: self.others.append(m)\n\n    def forward(self, x):\n        for layer in self.layers:\n            x = layer(x, mask=None)\n        return x\n";
    let out = patch(&rules(rule), &versions(&[]), "m.py", other).unwrap();
    assert!(out.output.contains("x = layer(x)\n"), "{}", out.output);
}
