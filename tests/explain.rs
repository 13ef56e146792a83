//! `regraft explain`: the rule as compiled, and with `--in` its matches and near misses.

use crate::util::{regraft_ok, root};

fn explain(args: &[&str]) -> String {
    regraft_ok(&[&["explain"], args].concat(), root())
}

#[test]
fn without_in_shows_the_rule_query_and_literals() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(explain(&["tests/fixtures/explain/use-cache.yaml"]));
}

#[test]
fn with_in_shows_matches_bindings_and_near_misses() {
    let _snapshots = crate::util::snapshots(module_path!());
    let out = explain(&[
        "tests/fixtures/explain/use-cache.yaml",
        "--in",
        "tests/fixtures/explain/modeling_demo.py",
        "--with",
        "transformers=4.50.3",
    ]);
    // Two kinds of near miss: a loop header and an argument. The call in `DemoEncoder` is in
    // another class than the rule's, beside candidates in `DemoDecoder.forward`: not shown.
    // (miette wraps long messages, so look for the parts that stay on one line.)
    assert!(!out.contains("DemoEncoder"), "{out}");
    assert!(out.contains("wants `layers`, found `blocks`"), "{out}");
    assert!(
        out.contains("argument 2 is positional, pattern wants keyword"),
        "{out}"
    );
    assert!(
        out.contains("version gate: transformers 4.50.3 does not satisfy >=4.52"),
        "{out}"
    );
    insta::assert_snapshot!(out);
}

#[test]
fn a_candidate_in_another_scope_is_shown_where_none_is_in_the_rules() {
    let dir = tempfile::tempdir().unwrap();
    let demo = std::fs::read_to_string(root().join("tests/fixtures/explain/modeling_demo.py"));
    let encoder_only = demo
        .unwrap()
        .split("\n\n\nclass DemoDecoder")
        .next()
        .unwrap()
        .to_string();
    let file = dir.path().join("modeling_demo.py");
    std::fs::write(&file, encoder_only + "\n").unwrap();
    let out = explain(&[
        "tests/fixtures/explain/use-cache.yaml",
        "--in",
        file.to_str().unwrap(),
        "--with",
        "transformers=4.57.6",
    ]);
    assert!(
        out.contains("inside `class DemoEncoder`, rule wants class"),
        "{out}"
    );
}

#[test]
fn a_loop_over_another_list_names_the_list_inside_a_call() {
    let dir = tempfile::tempdir().unwrap();
    let whisper = std::fs::read_to_string(root().join("examples/whisper/modeling_whisper.py"));
    let file = dir.path().join("modeling_whisper.py");
    std::fs::write(
        &file,
        whisper.unwrap().replace("self.layers", "self.blocks"),
    )
    .unwrap();
    let out = explain(&[
        "rules/whisper-decoder-layer-positional.yaml",
        "--in",
        file.to_str().unwrap(),
        "--with",
        "transformers=4.57.6",
    ]);
    let words = crate::util::words(&out);
    assert!(
        words.contains("argument 1: wants `layers`, found `blocks`"),
        "{out}"
    );
    // Not the count of arguments, which agrees, nor the encoder, another class.
    assert!(
        !words.contains("the call has 1") && !words.contains("WhisperEncoder"),
        "{out}"
    );
}

#[test]
fn explain_takes_a_rule_id_as_well_as_a_file() {
    let root = crate::util::root();
    let out = regraft_ok(&["explain", "layer-calls-positional"], root);
    assert!(out.starts_with("rule layer-calls-positional\n"));
    let typo = crate::util::regraft(&["explain", "layer-calls-positionl"], root);
    assert_eq!(typo.status.code(), Some(2));
    let words = crate::util::words(&crate::util::text(&typo.stderr));
    assert!(
        words.contains("did you mean `layer-calls-positional`?"),
        "{words}"
    );
}

#[test]
fn explain_shows_every_key_that_decides_where_a_rule_runs() {
    let root = crate::util::root();
    // The file's first rule runs `after` a rule in another file: explained all the same.
    let text = regraft_ok(&["explain", "rules/layer-checkpointing.yaml"], root);
    for line in [
        "  retired in:  transformers >=4.52 (fixed upstream)\n",
        "  group:       checkpointing-branch\n",
        "  when:        the file has `supports_gradient_checkpointing = True`\n",
        "  class binds: $LIST $CLS $A $I $R\n",
        "  where:       $CLS matches /(Decoder|Encoder)Layer$/\n",
    ] {
        assert!(text.contains(line), "{line}{text}");
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("r.yaml"),
        "id: r\nfamily: fix\nordered: true\nmatch: \"f(a=$A)\"\nwhen: {scope: class, lacks: \"g()\", signature: {of: f, has: [a]}}\naction: {replace: \"f($A)\"}\nexpect: 1\n",
    )
    .unwrap();
    let text = regraft_ok(&["explain", "r.yaml"], dir.path());
    for line in [
        "  family:      fix\n",
        "  ordered:     keyword order matters\n",
        "  when:        the enclosing class lacks `g()`\n",
        "  when:        `f` takes a\n",
    ] {
        assert!(text.contains(line), "{line}{text}");
    }
}

#[test]
fn near_misses_count_metavariables_name_the_keywords_and_skip_token_noise() {
    // Four arguments, all metavariables: the pattern wants 4, not "lists 0".
    let four = "id: r\nmatch: \"f($A, $B, $C, $D)\"\naction: {remove_kwargs: [x]}\n";
    let reasons = crate::util::near_misses(four, "f(1, k=2)\n");
    assert!(
        reasons
            .iter()
            .any(|r| r
                .contains("the pattern wants 4 arguments, the call has 2 (1 positional, `k=`)")),
        "{reasons:#?}"
    );
    let at_least = "id: r\nmatch: \"f($A, $B, $$$R)\"\naction: {remove_kwargs: [x]}\n";
    let reasons = crate::util::near_misses(at_least, "f(1)\n");
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("the pattern wants at least 2 arguments, the call has 1")),
        "{reasons:#?}"
    );
    // A missing keyword names the keywords the call has.
    let keyword =
        "id: r\nmatch: \"sdpa($$$A, dropout_p=$P)\"\naction: {remove_kwargs: [dropout_p]}\n";
    let reasons = crate::util::near_misses(keyword, "sdpa(q, k, v, attn_mask=m, scale=s)\n");
    assert!(
        reasons.iter().any(|r| r.contains(
            "no keyword `dropout_p` (the call has: 3 positional, `attn_mask=`, `scale=`)"
        )),
        "{reasons:#?}"
    );
    // `x = 1` against `x: int = 1`: the assignment's form differs, not "wants a =".
    let assign = "id: r\nmatch: \"x = 1\"\naction: {replace: \"x = 2\"}\n";
    let reasons = crate::util::near_misses(assign, "x: int = 1\n");
    assert!(
        reasons.iter().all(|r| !r.contains("wants a =")),
        "{reasons:#?}"
    );
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("this assignment has another form than the pattern's")),
        "{reasons:#?}"
    );
}

#[test]
fn explain_in_a_folder_explains_the_files_each_rule_selects() {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    std::fs::create_dir_all(&models).unwrap();
    std::fs::write(models.join("__init__.py"), "f(1)\n").unwrap();
    std::fs::write(models.join("modeling_a.py"), "f(1)\nf(2)\n").unwrap();
    std::fs::write(
        dir.path().join("r.yaml"),
        "- id: modeling\n  files: [\"**/modeling_*.py\"]\n  match: \"f($X)\"\n  action: {replace: \"g($X)\"}\n\
         - id: nowhere\n  files: [\"**/tokenization_*.py\"]\n  match: \"f($X)\"\n  action: {replace: \"g($X)\"}\n",
    )
    .unwrap();
    let stdout = crate::util::regraft_ok(&["explain", "r.yaml", "--in", "models"], dir.path());
    // The first rule: its one file, not `__init__.py` (which a folder used to stand for).
    assert!(
        stdout.contains("in models/modeling_a.py:\n  2 matches"),
        "{stdout}"
    );
    assert!(!stdout.contains("__init__.py"), "{stdout}");
    // The second: said to select nothing there.
    assert!(
        stdout.contains("in models: no file there is selected by `files` (**/tokenization_*.py)"),
        "{stdout}"
    );
}

#[test]
fn explain_reads_a_lone_cr_file_as_apply_does() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.py"), "x = 1\ry = g(x)\r").unwrap();
    std::fs::write(
        dir.path().join("r.yaml"),
        "id: r\nmatch: \"g($X)\"\naction: {replace: \"h($X)\"}\n",
    )
    .unwrap();
    let out = regraft_ok(&["explain", "r.yaml", "--in", "t.py"], dir.path());
    assert!(out.contains("1 match\n    at 2:5\n"), "{out}");
}

#[test]
fn with_a_metavariable_callee_only_calls_of_the_pattern_s_shape_are_near_misses() {
    let rule = "id: r\ninside: {class: Decoder}\nmatch: \"$OUT = $LAYER(h, mask=$M)\"\naction: {remove_kwargs: [mask]}\n";
    let source = "class Decoder:\n    def forward(self, h, m):\n        return h\n\n\nclass Other:\n    def forward(self, h, m):\n        z = print(\"x\")\n        n = len(h)\n        w = self.layer(h, mask=m)\n        return w\n\n\nclass Third:\n    def run(self):\n        z = print(\"x\")\n";
    let reasons = crate::util::near_misses(rule, source);
    assert_eq!(
        reasons.len(),
        1,
        "only `w = self.layer(h, mask=m)`, not print or len, nor anything in Third: {reasons:#?}"
    );
    assert!(reasons[0].contains("Other"), "{reasons:#?}");
}

/// A statement run's near misses say which statement of the run fails, or that the block ends.
#[test]
fn a_run_near_miss_names_the_statement_that_fails() {
    let rule = "id: r\nmatch: |\n  a = $X\n  b = $X\naction: {replace: \"d = $X\"}\n";
    let misses = |source: &str| crate::util::near_misses(rule, source);
    assert_eq!(
        misses("def f():\n    a = 1\n    c = 0\n"),
        ["near miss for rule `r`: statement 2 of the run: wants `b`, found `c`"]
    );
    assert_eq!(
        misses("def f():\n    a = 1\n    b = 2\n"),
        ["near miss for rule `r`: statement 2 of the run: `$X` is `2` here, but was bound to `1`"]
    );
    assert_eq!(
        misses("def f():\n    a = 1\n"),
        ["near miss for rule `r`: the block ends here; the run wants statement 2 next"]
    );
    let optional = "id: r\nmatch: |\n  a = $X\n  log($X)  # optional\n  b = $X\naction: {replace: \"d = $X\"}\n";
    assert_eq!(
        crate::util::near_misses(optional, "def f():\n    a = 1\n    c = 0\n").len(),
        1
    );
}
