//! Runs of statements between anchors (`$$$STMTS` in a statement sequence), and the comments
//! a `replace` keeps.

use crate::util::{patch, render, rules, versions};

fn apply(rule: &str, source: &str) -> String {
    let set = rules(rule);
    let out =
        patch(&set, &versions(&[]), "m.py", source).unwrap_or_else(|e| panic!("{}", render(&e)));
    let again = patch(&set, &versions(&[]), "m.py", &out.output)
        .unwrap_or_else(|e| panic!("{}", render(&e)));
    assert_eq!(again.output, out.output, "a second run changed the output");
    out.output
}

const LONG: &str = "def f(q, k):
    q = q.float()
    # upcast for stability
    k = k.float()

    if k is None:
        k = q
    scores = q @ k
    return scores


def g(q):
    q = q.float()
    return q
";

const RUN: &str = "q = q.float()\n  $$$MID\n  return $R";

#[test]
fn a_run_between_anchors_is_replaced_whole_with_its_comments_kept() {
    let rule = format!(
        "id: seq\nmatch: |\n  {RUN}\naction:\n  replace: |\n    q = q.half()\n    $$$MID\n    return $R.float()\n"
    );
    let out = apply(&rule, LONG);
    assert_eq!(
        out,
        "def f(q, k):
    # upcast for stability
    q = q.half()
    k = k.float()

    if k is None:
        k = q
    scores = q @ k
    return scores.float()


def g(q):
    q = q.half()
    return q.float()
",
        "the comment between the anchors stays (above), the run keeps its layout, an empty \
         run leaves no blank line, and the template's final line break adds none"
    );
}

#[test]
fn a_run_is_bounded_by_its_block() {
    // `return` stands in the function's block; the run cannot end inside the `if`.
    let rule = "id: seq\nmatch: |\n  q = q.float()\n  $$$MID\n  k = q\naction: {delete: true}\nexpect: 0\n";
    assert_eq!(apply(rule, LONG), LONG);
}

#[test]
fn delete_and_insertions_act_on_the_whole_run() {
    let run = "q = q.float()\n  $$$MID\n  scores = q @ k";
    let deleted = apply(
        &format!("id: d\nmatch: |\n  {run}\naction: {{delete: true}}\n"),
        LONG,
    );
    assert!(
        deleted.starts_with("def f(q, k):\n    # upcast for stability\n    return scores\n"),
        "{deleted}"
    );
    let inserted = apply(
        &format!(
            "- id: a\n  match: |\n    {}\n  action: {{insert_after: \"scores = scores.float()\"}}\n- id: b\n  match: |\n    {}\n  action: {{insert_before: \"assert q is not None\"}}\n",
            run.replace("\n  ", "\n    "),
            run.replace("\n  ", "\n    ")
        ),
        LONG,
    );
    assert!(
        inserted.contains("    assert q is not None\n    q = q.float()\n"),
        "{inserted}"
    );
    assert!(
        inserted.contains("    scores = q @ k\n    scores = scores.float()\n    return scores\n"),
        "{inserted}"
    );
}

#[test]
fn a_replaced_expression_keeps_the_comments_its_template_drops() {
    let source = "def f(x):\n    y = g(\n        x,\n        debug=True,  # remove once fixed upstream\n    )\n    return y\n";
    let out = apply(
        "id: r\nmatch: \"g($X, debug=$D)\"\naction: {replace: \"g($X)\"}\n",
        source,
    );
    assert_eq!(
        out,
        "def f(x):\n    # remove once fixed upstream\n    y = g(x)\n    return y\n"
    );
    // A comment inside a capture the template writes back goes with it; one beside an
    // argument the template rewrites is kept above, once.
    let source = "y = g(\n    x,  # the input\n    debug=True,\n)\n";
    let out = apply(
        "id: r\nmatch: \"g($$$A, debug=$D)\"\naction: {replace: \"h($$$A)\"}\n",
        source,
    );
    assert_eq!(out, "# the input\ny = h(x)\n");
    let source = "y = g(\n    [x,  # the input\n     1],\n    debug=True,\n)\n";
    let out = apply(
        "id: r\nmatch: \"g($A, debug=$D)\"\naction: {replace: \"h($A)\"}\n",
        source,
    );
    assert_eq!(out.matches("# the input").count(), 1, "{out}");
    assert!(out.starts_with("y = h([x,  # the input"), "{out}");
}

#[test]
fn a_replacement_written_with_comments_is_recognised_as_applied() {
    let rule = "id: up\nmatch: \"$Y = $X.softmax($D)\"\naction:\n  replace: |-\n    # fp16 softmax overflows\n    $Y = $X.float().softmax($D).to($X.dtype)  # regraft: upcast\nexpect: 1\n";
    let source = "def f(x):\n    y = x.softmax(-1)\n    return y\n";
    let set = rules(rule);
    let out = patch(&set, &versions(&[]), "m.py", source).unwrap();
    assert_eq!(
        out.output,
        "def f(x):\n    # fp16 softmax overflows\n    y = x.float().softmax(-1).to(x.dtype)  # regraft: upcast\n    return y\n"
    );
    // `--check` after `--write`: the commented shape counts as the patch in place.
    let again = patch(&set, &versions(&[]), "m.py", &out.output)
        .unwrap_or_else(|e| panic!("{}", render(&e)));
    assert_eq!(again.output, out.output);
    // The shape found in place of the pattern: what `apply --check` reports "already applied".
    let status = serde_json::to_value(&again.rules[0]).unwrap()["status"].clone();
    assert_eq!(status, "redundant");
}

/// The fused cross-entropy shapes: the upcast line comes and goes between releases. One rule
/// with the line marked `# optional` rewrites both, and only what it matched.
const CROSS_ENTROPY: &str = "id: fused-ce
match: |
  logits = self.lm_head($H)
  logits = logits.float()  # optional
  loss = self.loss_function($$$A)
action:
  replace: |
    loss = fused_linear_cross_entropy(self.lm_head, $H, $$$A)
    logits = None
provides: [fused_linear_cross_entropy]
";

#[test]
fn an_optional_statement_may_or_may_not_stand_in_the_run() {
    let with = "def forward(self, h, labels):\n    logits = self.lm_head(h)\n    logits = logits.float()\n    loss = self.loss_function(logits, labels)\n    return loss\n";
    let without = "def forward(self, h, labels):\n    logits = self.lm_head(h)\n    loss = self.loss_function(logits, labels)\n    return loss\n";
    let expected = "def forward(self, h, labels):\n    loss = fused_linear_cross_entropy(self.lm_head, h, logits, labels)\n    logits = None\n    return loss\n";
    assert_eq!(apply(CROSS_ENTROPY, with), expected);
    assert_eq!(apply(CROSS_ENTROPY, without), expected);
    // Another statement where the optional one stands is no match.
    let other = "def forward(self, h, labels):\n    logits = self.lm_head(h)\n    logits = logits.half()\n    loss = self.loss_function(logits, labels)\n    return loss\n";
    let set = rules(&format!("{CROSS_ENTROPY}expect: {{min: 0}}\n"));
    let out = patch(&set, &versions(&[]), "m.py", other).unwrap();
    assert_eq!(out.output, other);
}

#[test]
fn optional_statements_are_tried_present_first_and_bind_only_what_every_variant_binds() {
    // Present first: with the statement there, the run takes it.
    let rule = "id: r\nmatch: |\n  a = 1\n  b = $X  # optional\n  c = 3\naction:\n  replace: |\n    abc = 0\n";
    assert_eq!(apply(rule, "a = 1\nb = 2\nc = 3\n"), "abc = 0\n");
    assert_eq!(apply(rule, "a = 1\nc = 3\n"), "abc = 0\n");
    // A template may not use what only the optional statement binds.
    let uses = "id: r\nmatch: |\n  a = 1\n  b = $X  # optional\n  c = 3\naction:\n  replace: \"abc = $X\"\n";
    let error = crate::util::rule_error(uses);
    assert!(error.contains("$X"), "{error}");
}

#[test]
fn optional_marks_that_leave_no_valid_sequence_are_errors_at_the_statement() {
    for (pattern, says) in [
        (
            "a = 1  # optional\\nb = 2",
            "first statement cannot be optional",
        ),
        ("a = 1\\n$$$  # optional\\nb = 2", "cannot be optional"),
        ("a = 1\\n$$$\\nb = 2  # optional", "would leave `$$$` last"),
        (
            "a = 1\\nif a:  # optional\\n  x = 1\\nb = 2",
            "marks a statement of a sequence",
        ),
        (
            "a = 1\\nif a:\\n  x = 1  # optional\\n  y = 2\\nb = 2",
            "marks a statement of a sequence",
        ),
        ("a = 1  # optional", "marks a statement of a sequence"),
    ] {
        let rule = format!("id: r\nmatch: \"{pattern}\"\naction: {{delete: true}}\n");
        let error = crate::util::words(&crate::util::rule_error(&rule));
        assert!(error.contains(says), "{pattern}: {error}");
    }
}

/// A run is found at its first statement: a rarer literal in a later statement (`a` is in
/// two places here, `s` in one) must not narrow the search to where no run starts.
#[test]
fn a_run_is_found_whatever_statement_holds_its_rarest_literal() {
    let rule = "id: r\nmatch: |\n  a = $X\n  s = \"ha\"\n  b = $X\naction: {replace: \"d = $X\"}\nexpect: 1\n";
    assert_eq!(apply(rule, "a = 2\ns = \"ha\"\nb = 2\n"), "d = 2\n");
    let optional = "id: r\nmatch: |\n  a = $X\n  log(\"optional\")  # optional\n  b = $X\naction: {replace: \"d = $X\"}\nexpect: 1\n";
    assert_eq!(
        apply(optional, "a = 2\nlog(\"optional\")\nb = 2\n"),
        "d = 2\n"
    );
    assert_eq!(apply(optional, "a = 2\nb = 2\n"), "d = 2\n");
}

#[test]
fn a_delete_keeps_the_comments_it_removes_unless_told_not_to() {
    let source = "def f(a):\n    x = 1  # why x\n    # about y\n    y = 2\n    return a\n";
    let keep = "id: r\nmatch: |\n  x = 1\n  y = 2\naction: {delete: true}\n";
    assert_eq!(
        apply(keep, source),
        "def f(a):\n    # why x\n    # about y\n    return a\n"
    );
    let drop = "id: r\nmatch: |\n  x = 1\n  y = 2\naction: {delete: {keep_comments: false}}\n";
    assert_eq!(apply(drop, source), "def f(a):\n    return a\n");
    let only = "def f():\n    # gone too\n    x = 1\n";
    let drop_one = "id: r\nmatch: 'x = 1'\naction: {delete: {keep_comments: false}}\n";
    assert_eq!(
        apply(drop_one, only),
        "def f():\n    # gone too\n    pass\n"
    );
}
