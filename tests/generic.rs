//! Generic rules: metavariables bound by scope predicates reach the match and the action,
//! loop headers may be alternatives, and a signature named through a binding is followed
//! through bases and imports into other modules.

use std::fs;

use crate::util::{patch, regraft, render, round_trip, rules, snapshots, text, versions};

/// A layer-call rule that names no class: the class is whatever the `ModuleList` holds.
const GENERIC: &str = r#"id: layers-positional
inside:
  class:
    has: "self.$LIST = nn.ModuleList([$CLS($$$A) for $I in $R])"
  function: forward
  loop:
    any:
      - "for $LAYER in self.$LIST"
      - "for $_, $LAYER in enumerate(self.$LIST)"
match: "$OUT = $LAYER($$$ARGS)"
action:
  kwargs_to_positional:
    signature: $CLS.forward
"#;

const TWO_MODELS: &str = r#"class ALayer(nn.Module):
    def forward(self, x, mask=None, bias=None):
        return x


class BLayer(nn.Module):
    def forward(self, x, bias=None, mask=None):
        return x


class AModel(nn.Module):
    def __init__(self, config):
        self.layers = nn.ModuleList([ALayer(config) for _ in range(2)])
        self.norms = nn.ModuleList([nn.LayerNorm(4) for _ in range(2)])

    def forward(self, x, m, b):
        for layer in self.layers:
            x = layer(x, bias=b, mask=m)
        for norm in self.norms:
            x = norm(x)
        return x


class BModel(nn.Module):
    def __init__(self, config):
        self.blocks = nn.ModuleList([BLayer(config) for i in range(2)])

    def forward(self, x, m, b):
        for i, block in enumerate(self.blocks):
            x = block(x, mask=m, bias=b)
        return x
"#;

#[test]
fn each_class_converts_against_the_layer_class_its_list_holds() {
    let out = patch(&rules(GENERIC), &versions(&[]), "m.py", TWO_MODELS)
        .unwrap_or_else(|e| panic!("{}", render(&e)));
    // ALayer takes (x, mask, bias); BLayer takes (x, bias, mask): each call in its own order.
    assert!(out.output.contains("x = layer(x, m, b)"), "{}", out.output);
    assert!(out.output.contains("x = block(x, b, m)"), "{}", out.output);
    // The `norms` list holds `nn.LayerNorm`, whose call has no keywords: left alone.
    assert!(out.output.contains("x = norm(x)"), "{}", out.output);
}

#[test]
fn a_binding_must_agree_with_the_scope_that_made_it() {
    // The loop walks `self.other`, which no ModuleList comprehension in the class made.
    let source = TWO_MODELS.replace("for layer in self.layers:", "for layer in self.other:");
    let out = patch(&rules(GENERIC), &versions(&[]), "m.py", &source)
        .unwrap_or_else(|e| panic!("{}", render(&e)));
    assert!(
        out.output.contains("x = layer(x, bias=b, mask=m)"),
        "{}",
        out.output
    );
    assert!(out.output.contains("x = block(x, b, m)"), "{}", out.output);
}

#[test]
fn a_binding_that_is_no_name_is_refused_precisely() {
    let source = TWO_MODELS.replace(
        "nn.ModuleList([ALayer(config) for _ in range(2)])",
        "nn.ModuleList([layers.ALayer(config) for _ in range(2)])",
    );
    let err = patch(&rules(GENERIC), &versions(&[]), "m.py", &source).unwrap_err();
    let _guard = snapshots(module_path!());
    insta::assert_snapshot!("binding_not_a_name", render(&err));
}

#[test]
fn loop_alternatives_round_trip_through_both_syntaxes() {
    assert_eq!(round_trip(GENERIC).rules[0].inside.loop_header.len(), 2);
    let empty = GENERIC.replace(
        "    any:\n      - \"for $LAYER in self.$LIST\"\n      - \"for $_, $LAYER in enumerate(self.$LIST)\"\n",
        "    any: []\n",
    );
    assert!(crate::util::rule_error(&empty).contains("list at least one pattern"));
}

#[test]
fn a_signature_metavariable_must_be_bound() {
    let unbound = GENERIC.replace("signature: $CLS.forward", "signature: $KLASS.forward");
    let message = crate::util::rule_error(&unbound);
    assert!(message.contains("KLASS"), "{message}");
}

/// A package on disk: the model imports its layer from another model's module, and that
/// layer inherits `forward` from a base defined in a third.
fn package(dir: &std::path::Path) {
    let write = |path: &str, body: &str| {
        let path = dir.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, body).unwrap();
    };
    write(
        "pkg/models/base/modeling_base.py",
        "class BaseLayer(nn.Module):\n    def forward(self, x, mask=None, cache=None):\n        return x\n",
    );
    write(
        "pkg/models/llama/modeling_llama.py",
        "from ..base.modeling_base import BaseLayer\n\n\nclass LlamaLayer(BaseLayer):\n    pass\n",
    );
    write(
        "pkg/models/qwen/modeling_qwen.py",
        "from ..llama.modeling_llama import LlamaLayer as QwenLayer\n\n\nclass QwenModel(nn.Module):\n    def __init__(self, config):\n        self.layers = nn.ModuleList([QwenLayer(config) for _ in range(2)])\n\n    def forward(self, x, m):\n        for layer in self.layers:\n            x = layer(x, cache=None, mask=m)\n        return x\n",
    );
}

#[test]
fn signatures_are_followed_through_imports_and_bases() {
    let dir = tempfile::tempdir().unwrap();
    package(dir.path());
    fs::write(dir.path().join("r.yaml"), GENERIC).unwrap();
    let out = regraft(
        &[
            "apply",
            "-r",
            "r.yaml",
            "pkg/models/qwen/modeling_qwen.py",
            "--diff",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("+            x = layer(x, m, None)"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn a_signature_not_found_names_every_place_searched() {
    let dir = tempfile::tempdir().unwrap();
    package(dir.path());
    fs::remove_file(dir.path().join("pkg/models/base/modeling_base.py")).unwrap();
    fs::write(dir.path().join("r.yaml"), GENERIC).unwrap();
    let out = regraft(
        &[
            "apply",
            "-r",
            "r.yaml",
            "pkg/models/qwen/modeling_qwen.py",
            "--diff",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let _guard = snapshots(module_path!());
    insta::assert_snapshot!("signature_not_found", text(&out.stderr));
}

/// The old shape, else the new one: `torch.cat` became `torch.concat` in some call sites.
const ANY: &str = r#"id: cat-dim
match:
  any:
    - "$OUT = torch.cat($PARTS, dim=$D)"
    - "$OUT = torch.concat($PARTS, dim=$D)"
    - "$OUT = torch.cat($PARTS, $D)"
action:
  replace: "$OUT = torch.cat($PARTS, dim=$D).contiguous()"
unless: "$X.contiguous()"
"#;

#[test]
fn match_alternatives_are_tried_in_order_and_share_what_all_bind() {
    let source = "a = torch.cat([x, y], dim=1)\nb = torch.concat([x, y], dim=-1)\nc = torch.cat((x, y), 0)\nd = torch.stack([x, y], dim=1)\n";
    let out = patch(&rules(ANY), &versions(&[]), "m.py", source)
        .unwrap_or_else(|e| panic!("{}", render(&e)));
    assert_eq!(
        out.output,
        "a = torch.cat([x, y], dim=1).contiguous()\nb = torch.cat([x, y], dim=-1).contiguous()\nc = torch.cat((x, y), dim=0).contiguous()\nd = torch.stack([x, y], dim=1)\n"
    );
    assert_eq!(round_trip(ANY).rules[0].patterns.len(), 3);
}

#[test]
fn a_template_may_use_only_what_every_alternative_binds() {
    let rule =
        "id: r\nmatch:\n  any: [\"f($X, $Y)\", \"f($X)\"]\naction: {replace: \"g($X, $Y)\"}\n";
    let message = crate::util::rule_error(rule);
    assert!(
        message.contains("$Y") || message.contains("`Y`"),
        "{message}"
    );
    let bad = "id: r\nmatch:\n  any: [\"f($X)\", \"f($X\"]\naction: {replace: \"g($X)\"}\n";
    let _guard = snapshots(module_path!());
    insta::assert_snapshot!("alternative_not_python", crate::util::rule_error(bad));
}

#[test]
fn ordered_patterns_match_keywords_only_in_their_order() {
    let rule = |ordered: &str| {
        format!(
            "id: r\nmatch: \"f(a=$A, b=$B)\"\nordered: {ordered}\naction: {{replace: \"g($A, $B)\"}}\nexpect: {{min: 0}}\n"
        )
    };
    let source = "f(a=1, b=2)\nf(b=3, a=4)\n";
    let unordered = patch(&rules(&rule("false")), &versions(&[]), "m.py", source).unwrap();
    assert_eq!(unordered.output, "g(1, 2)\ng(4, 3)\n");
    let ordered = patch(&rules(&rule("true")), &versions(&[]), "m.py", source).unwrap();
    assert_eq!(ordered.output, "g(1, 2)\nf(b=3, a=4)\n");
    assert!(round_trip(&rule("true")).rules[0].ordered);
    assert!(crate::util::rule_error(&rule("yes please")).contains("true or false"));
}

/// A generic rule that fires only where the callee takes `position_embeddings`, and only in
/// classes that do not compute them themselves.
const PROBED: &str = r#"id: pass-embeddings
inside:
  class:
    has: "self.$LIST = nn.ModuleList([$CLS($$$A) for $I in $R])"
  function: forward
  loop: "for $LAYER in self.$LIST"
match: "$OUT = $LAYER($$$ARGS)"
when:
  signature: {of: $CLS.forward, has: [position_embeddings], order: [hidden_states, position_embeddings]}
  scope: class
  lacks: "position_embeddings = self.rotary_emb($$$E)"
action:
  set_kwargs: {position_embeddings: "self.rope(hidden_states)"}
expect: {min: 0}
"#;

const PROBED_MODELS: &str = r#"class RopeLayer(nn.Module):
    def forward(self, hidden_states, position_embeddings=None):
        return hidden_states


class PlainLayer(nn.Module):
    def forward(self, hidden_states, mask=None):
        return hidden_states


class A(nn.Module):
    def __init__(self, config):
        self.layers = nn.ModuleList([RopeLayer(config) for _ in range(2)])

    def forward(self, hidden_states):
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        return hidden_states


class B(nn.Module):
    def __init__(self, config):
        self.layers = nn.ModuleList([PlainLayer(config) for _ in range(2)])

    def forward(self, hidden_states):
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        return hidden_states


class C(nn.Module):
    def __init__(self, config):
        self.layers = nn.ModuleList([RopeLayer(config) for _ in range(2)])

    def forward(self, hidden_states):
        position_embeddings = self.rotary_emb(hidden_states)
        for layer in self.layers:
            hidden_states = layer(hidden_states, position_embeddings=position_embeddings)
        return hidden_states
"#;

#[test]
fn signature_and_scoped_probes_decide_per_site() {
    let out = patch(&rules(PROBED), &versions(&[]), "m.py", PROBED_MODELS)
        .unwrap_or_else(|e| panic!("{}", render(&e)));
    // A's layer takes position_embeddings: patched. B's does not: left alone (guarded).
    // C computes its own: the scoped `lacks` keeps it out.
    assert_eq!(
        out.output.matches("self.rope(hidden_states)").count(),
        1,
        "{}",
        out.output
    );
    let report = &out.rules[0];
    assert_eq!(report.matches.len(), 2, "A and B match; C is out of scope");
    assert!(report.matches[1].guarded);
    round_trip(PROBED);
}

#[test]
fn probe_errors_are_precise() {
    let _guard = snapshots(module_path!());
    let unbound = PROBED.replace("of: $CLS.forward", "of: $KLASS.forward");
    insta::assert_snapshot!("probe_unbound", crate::util::rule_error(&unbound));
    let scope_alone = "id: r\nmatch: \"f($X)\"\nwhen: {scope: class}\naction: {delete: true}\n";
    insta::assert_snapshot!("probe_scope_alone", crate::util::rule_error(scope_alone));
    let no_of = "id: r\nmatch: \"f($X)\"\nwhen: {signature: {has: [a]}}\naction: {delete: true}\n";
    insta::assert_snapshot!("probe_no_of", crate::util::rule_error(no_of));
    // A callee that cannot be found is a refusal, never a guess.
    let missing = PROBED_MODELS.replace(
        "class RopeLayer(nn.Module):",
        "class OtherLayer(nn.Module):",
    );
    let err = patch(&rules(PROBED), &versions(&[]), "m.py", &missing).unwrap_err();
    assert!(
        render(&err).contains("no definition of `RopeLayer.forward`"),
        "{}",
        render(&err)
    );
}

const SEQUENCE_SOURCE: &str = "def forward(self, x):
    h = self.norm(x)
    # the residual
    h = self.attn(h)
    x = x + h
    return x
";

#[test]
fn a_sequence_matches_consecutive_statements_and_replace_spans_them() {
    let rule = "id: r\nmatch: |-\n  $H = self.norm($X)\n  $H = self.attn($H)\naction:\n  replace: |-\n    $H = self.attn(self.norm($X))\nexpect: 1\n";
    let out = patch(&rules(rule), &versions(&[]), "m.py", SEQUENCE_SOURCE)
        .unwrap_or_else(|e| panic!("{}", render(&e)));
    // The comment between the statements stays, above the replacement.
    assert_eq!(
        out.output,
        "def forward(self, x):\n    # the residual\n    h = self.attn(self.norm(x))\n    x = x + h\n    return x\n"
    );
    // Bindings are shared across the statements: `$H` must be the same name in both.
    let other = SEQUENCE_SOURCE.replace("h = self.attn(h)", "g = self.attn(h)");
    let err = patch(&rules(rule), &versions(&[]), "m.py", &other).unwrap_err();
    assert!(render(&err).contains("found 0"), "{}", render(&err));
}

#[test]
fn a_gap_lets_statements_stand_between_and_insertions_anchor_on_the_ends() {
    let after = "id: r\nmatch: |-\n  $H = self.norm($X)\n  $$$\n  return $X\naction:\n  insert_after: \"assert $X is not None\"\nexpect: 1\n";
    let out = patch(&rules(after), &versions(&[]), "m.py", SEQUENCE_SOURCE)
        .unwrap_or_else(|e| panic!("{}", render(&e)));
    assert!(
        out.output
            .ends_with("    return x\n    assert x is not None\n"),
        "{}",
        out.output
    );
    let before = after.replace("insert_after", "insert_before");
    let out = patch(&rules(&before), &versions(&[]), "m.py", SEQUENCE_SOURCE).unwrap();
    assert!(
        out.output
            .starts_with("def forward(self, x):\n    assert x is not None\n    h = self.norm(x)\n"),
        "{}",
        out.output
    );
}

#[test]
fn deleting_a_sequence_keeps_its_comments_and_never_empties_a_block() {
    let rule = "id: r\nmatch: |-\n  $H = self.norm($X)\n  $H = self.attn($H)\naction: {delete: true}\nexpect: 1\n";
    let out = patch(&rules(rule), &versions(&[]), "m.py", SEQUENCE_SOURCE).unwrap();
    assert_eq!(
        out.output,
        "def forward(self, x):\n    # the residual\n    x = x + h\n    return x\n"
    );
    let whole = "id: r\nmatch: |-\n  $H = self.norm($X)\n  $$$\n  return $X\naction: {delete: true}\nexpect: 1\n";
    let out = patch(&rules(whole), &versions(&[]), "m.py", SEQUENCE_SOURCE).unwrap();
    assert_eq!(
        out.output,
        "def forward(self, x):\n    # the residual\n    pass\n"
    );
}

#[test]
fn a_sequence_must_start_and_end_with_a_statement() {
    let _guard = snapshots(module_path!());
    let rule = "id: r\nmatch: |-\n  $$$\n  return $X\naction: {delete: true}\n";
    insta::assert_snapshot!("sequence_starts_with_gap", crate::util::rule_error(rule));
}

#[test]
fn absolute_imports_are_found_above_the_file() {
    let dir = tempfile::tempdir().unwrap();
    package(dir.path());
    let model = dir.path().join("pkg/models/qwen/modeling_qwen.py");
    let absolute = fs::read_to_string(&model).unwrap().replace(
        "from ..llama.modeling_llama import LlamaLayer as QwenLayer",
        "from pkg.models.llama.modeling_llama import LlamaLayer as QwenLayer",
    );
    fs::write(&model, absolute).unwrap();
    fs::write(dir.path().join("r.yaml"), GENERIC).unwrap();
    let out = regraft(
        &[
            "apply",
            "-r",
            "r.yaml",
            "pkg/models/qwen/modeling_qwen.py",
            "--diff",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("+            x = layer(x, m, None)"));
}

#[test]
fn a_sequence_rule_round_trips_through_both_syntaxes() {
    let rule = "id: r\nmatch: |-\n  $H = self.norm($X)\n  $$$\n  return $X\naction:\n  insert_after: \"assert $X is not None\"\nexpect: 1\n";
    round_trip(rule);
}

/// A layer list built in two branches of an `if` with different classes, or extended with
/// `.append(Other())`, may hold either class: the shipped generic rule converts neither call
/// (a refusal, a skip), where it used to convert against the first class it saw.
#[test]
fn a_layer_list_of_two_possible_classes_is_not_converted() {
    let model = |init: &str| {
        format!(
            "from torch import nn\n\n\nclass LayerA(nn.Module):\n    def forward(self, x, mask=None, bias=None):\n        return x\n\n\nclass LayerB(nn.Module):\n    def forward(self, x, bias=None, mask=None):\n        return x\n\n\nclass Model(nn.Module):\n    def __init__(self, config):\n        super().__init__()\n{init}\n    def forward(self, x, m, b):\n        for layer in self.layers:\n            x = layer(x, mask=m, bias=b)\n        return x\n"
        )
    };
    let branches = "        if config.flag:\n            self.layers = nn.ModuleList([LayerA(config) for _ in range(2)])\n        else:\n            self.layers = nn.ModuleList([LayerB(config) for _ in range(2)])\n";
    let appended = "        self.layers = nn.ModuleList([LayerA(config) for _ in range(2)])\n        self.layers.append(LayerB(config))\n";
    let single = "        self.layers = nn.ModuleList([LayerA(config) for _ in range(2)])\n";
    let root = crate::util::root();
    for (init, converted) in [(branches, false), (appended, false), (single, true)] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("models/toy/modeling_toy.py");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, model(init)).unwrap();
        let out = crate::util::regraft(
            &[
                "apply",
                "-r",
                root.join("rules").to_str().unwrap(),
                "--with",
                "transformers=4.57.6",
                "--diff",
                "models",
            ],
            dir.path(),
        );
        let stdout = crate::util::text(&out.stdout);
        assert_eq!(
            stdout.contains("+            x = layer(x, m, b)"),
            converted,
            "{init}\n{stdout}\n{}",
            crate::util::text(&out.stderr)
        );
    }
}

/// `files` entries written `!GLOB` leave files out whatever selected them; a list of only
/// exclusions selects every other file.
#[test]
fn files_can_exclude() {
    let source = "y = f(1)\n";
    let changed = |files: &str, path: &str| {
        let rule = format!(
            "id: r\nfiles: {files}\nmatch: 'f($X)'\naction: {{replace: 'g($X)'}}\nexpect: {{min: 0}}\n"
        );
        let set = crate::util::rules(&rule);
        let out = crate::util::patch(&set, &crate::util::versions(&[]), path, source).unwrap();
        out.output != source
    };
    let both = "['**/modeling_*.py', '!**/modeling_tf_*.py']";
    assert!(changed(both, "models/bert/modeling_bert.py"));
    assert!(!changed(both, "models/bert/modeling_tf_bert.py"));
    assert!(!changed(both, "models/bert/configuration_bert.py"));
    let only_out = "['!**/tests/**']";
    assert!(changed(only_out, "pkg/mod.py"));
    assert!(!changed(only_out, "pkg/tests/test_mod.py"));
}

/// Ids are per pack (rule file): two packs with the same id load together, each rule then named
/// `pack/id`, and a bare `after:` names its own pack's rule; within one pack an id is unique.
#[test]
fn two_packs_with_the_same_id_load_together() {
    let dir = tempfile::tempdir().unwrap();
    let packs = dir.path().join("packs");
    std::fs::create_dir(&packs).unwrap();
    std::fs::write(
        packs.join("alpha.yaml"),
        "id: r\nmatch: 'f($X)'\naction: {replace: 'g($X)'}\nexpect: 1\n---\nid: s\nafter: [r]\nmatch: 'g($X)'\naction: {replace: 'h($X)'}\nexpect: 1\n",
    )
    .unwrap();
    std::fs::write(
        packs.join("beta.yaml"),
        "id: r\nmatch: 'k($X)'\naction: {replace: 'm($X)'}\nexpect: 1\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("m.py"), "y = f(1)\nz = k(2)\n").unwrap();
    let out = crate::util::regraft(
        &[
            "apply",
            "--no-config",
            "-r",
            "packs",
            "m.py",
            "--format",
            "json",
        ],
        dir.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::util::text(&out.stderr)
    );
    let stdout = crate::util::text(&out.stdout);
    assert!(
        stdout.contains("\"alpha/r\"") && stdout.contains("\"beta/r\""),
        "{stdout}"
    );
    let diff = crate::util::regraft_ok(
        &["apply", "--no-config", "-r", "packs", "m.py", "--diff"],
        dir.path(),
    );
    assert!(
        diff.contains("+y = h(1)") && diff.contains("+z = m(2)"),
        "{diff}"
    );
    let lint = crate::util::regraft(&["lint", "--no-config", "-r", "packs"], dir.path());
    assert_eq!(
        lint.status.code(),
        Some(0),
        "{}",
        crate::util::text(&lint.stderr)
    );
    std::fs::write(
        packs.join("beta.yaml"),
        "id: r\nmatch: 'k($X)'\naction: {replace: 'm($X)'}\n---\nid: r\nmatch: 'q($X)'\naction: {replace: 'm($X)'}\n",
    )
    .unwrap();
    let twice = crate::util::regraft(&["lint", "--no-config", "-r", "packs"], dir.path());
    assert!(crate::util::text(&twice.stderr).contains("duplicate rule id `r`"));
}
