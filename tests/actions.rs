//! Each action on a small target, as a snapshot of the patched text.

use crate::util::{patch, patched, render, rules, versions};

const TARGET: &str = r#"class Block(nn.Module):
    def forward(self, x, mask=None):
        out = self.attn(
            x,
            mask,
            output_attentions=True,  # debug only
            use_cache=False,
        )
        y = self.mlp(out, output_attentions=True)
        return self.norm(y)
"#;

fn apply(rule: &str) -> String {
    let rules = rules(rule);
    let out = patch(&rules, &versions(&[]), "block.py", TARGET)
        .unwrap_or_else(|e| panic!("{}", render(&e)));
    out.output
}

#[test]
fn remove_kwargs_leaves_no_dangling_comma() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(apply(
        "id: drop\nmatch: \"$OUT = $F($$$A)\"\naction:\n  remove_kwargs: [output_attentions]\nexpect: 2\n"
    ));
}

#[test]
fn set_kwargs_replaces_or_appends() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(apply(
        "id: set\ninside: {function: forward}\nmatch: \"out = self.attn($$$A)\"\naction:\n  set_kwargs: {use_cache: \"True\", position_ids: \"None\"}\n"
    ));
}

#[test]
fn replace_fills_metavariables_and_indents_following_lines() {
    let _snapshots = crate::util::snapshots(module_path!());
    insta::assert_snapshot!(apply(
        "id: wrap\nmatch: \"$Y = self.mlp($$$A)\"\naction:\n  replace: |-\n    if self.training:\n        $Y = checkpoint(self.mlp, $$$A)\n    else:\n        $Y = self.mlp.forward($$$A)\nexpect: 1\n"
    ));
}

#[test]
fn a_yaml_list_holds_several_rules_and_both_apply() {
    let out = apply(
        "- id: one\n  match: \"$OUT = self.mlp($$$A)\"\n  action: {remove_kwargs: [output_attentions]}\n- id: two\n  match: \"self.norm($X)\"\n  action: {replace: \"self.final_norm($X)\"}\n",
    );
    assert!(out.contains("y = self.mlp(out)\n"), "{out}");
    assert!(out.contains("return self.final_norm(y)\n"), "{out}");
}

#[test]
fn class_and_function_regexes_select_scopes() {
    let miss = "id: r\ninside: {class: {regex: \"Dec.*\"}}\nmatch: \"self.norm($X)\"\naction: {replace: \"$X\"}\n";
    let rules_miss = rules(miss);
    let out = patch(&rules_miss, &versions(&[]), "block.py", TARGET).unwrap();
    assert_eq!(out.output, TARGET);
    let hit = miss.replace("Dec.*", "Bl(o|a)ck");
    assert!(apply(&hit).contains("return y\n"));
}

#[test]
fn deletions_that_empty_a_block_leave_pass() {
    let source = "def f(q, k):\n    if q is not None:\n        q = q.contiguous()\n        k = k.contiguous()\n    return q, k\n";
    let rule = "id: r\nmatch: \"$X = $X.contiguous()\"\naction: {delete: true}\nexpect: 2\n";
    assert_eq!(
        patched(rule, source),
        "def f(q, k):\n    if q is not None:\n        pass\n    return q, k\n"
    );
}

#[test]
fn inserted_code_with_comments_is_recognised_as_already_there() {
    let source = "def f(q, k):\n    q, k = rope(q, k)  # Ignore copy\n    return q, k\n";
    let rule = "id: r\nmatch: \"$Q, $K = rope($Q, $K)\"\naction:\n  insert_after: |-\n    # keep the kernels contiguous\n    q = q.contiguous()  # why\nexpect: 1\n";
    let once = patched(rule, source);
    assert_eq!(
        once,
        "def f(q, k):\n    q, k = rope(q, k)  # Ignore copy\n    # keep the kernels contiguous\n    q = q.contiguous()  # why\n    return q, k\n",
        "the statement keeps its trailing comment, the insertion goes below it"
    );
    assert_eq!(
        patched(rule, &once),
        once,
        "already applied, comments and all"
    );
    // The same code commented differently, or not at all, is there too.
    let plain = "def f(q, k):\n    q, k = rope(q, k)\n    q = q.contiguous()\n    return q, k\n";
    assert_eq!(patched(rule, plain), plain);
}

#[test]
fn body_insertions_with_comments_are_idempotent() {
    let source = "class C:\n    def __init__(self):\n        super().__init__()\n        self.x = 1  # first\n";
    for action in [
        "append_body: \"# flag\\nself.gradient_checkpointing = False  # off\"",
        "prepend_body: {code: \"self.y = 2  # set early\", after_super: true}",
    ] {
        let rule = format!(
            "id: r\nmatch: \"def __init__($$$P): $$$B\"\naction: {{{action}}}\nexpect: 1\n"
        );
        let once = patched(&rule, source);
        assert_ne!(once, source, "{action}");
        assert_eq!(patched(&rule, &once), once, "{action}");
        assert!(once.contains("self.x = 1  # first"), "{once}");
    }
}

#[test]
fn comments_on_deleted_code_stay() {
    let source = "def f(x):\n    y = g(x)  # needed on CUDA\n    z = h(\n        x,  # the input\n    )\n    return y\n";
    let rule = "id: r\nmatch: \"$V = $F(x)\"\naction: {delete: true}\nexpect: 2\n";
    assert_eq!(
        patched(rule, source),
        "def f(x):\n    # needed on CUDA\n    # the input\n    return y\n"
    );
    let call = "f(\n    a,\n    scale=1.0,  # why\n    b,\n)\n";
    let rule = "id: r\nmatch: \"f($$$A)\"\naction: {remove_kwargs: [scale]}\nexpect: 1\n";
    assert_eq!(patched(rule, call), "f(\n    a,\n    # why\n    b,\n)\n");
    let last = "f(\n    a,\n    scale=1.0,  # why\n)\n";
    let out = patched(rule, last);
    assert!(out.contains("# why"), "{out}");
    assert_eq!(patched(rule, &out), out);
}

#[test]
fn nested_matches_with_disjoint_edits_both_apply() {
    let source = "y = sdpa(sdpa(q, k, scale=2.0), k, scale=1.0)\n";
    let rule = "id: r\nmatch: \"sdpa($$$A)\"\naction: {remove_kwargs: [scale]}\nexpect: 2\n";
    assert_eq!(patched(rule, source), "y = sdpa(sdpa(q, k), k)\n");
}

#[test]
fn a_decorator_can_be_deleted_and_another_added_to_the_same_method() {
    let source = "class C:\n    @torch.compile\n    def f(self):\n        return 1\n";
    let rules_yaml = "- id: drop\n  match: \"@torch.compile\"\n  action: {delete: true}\n  expect: 1\n- id: add\n  match: \"def f($$$P): $$$B\"\n  action: {add_decorator: torch._dynamo.disable}\n  expect: 1\n";
    assert_eq!(
        patched(rules_yaml, source),
        "class C:\n    @torch._dynamo.disable\n    def f(self):\n        return 1\n"
    );
}

#[test]
fn a_guard_that_hands_a_site_to_another_rule_reports_guarded_not_redundant() {
    let status = |rule: &str, source: &str| {
        let out = patch(&rules(rule), &versions(&[]), "m.py", source).unwrap();
        serde_json::to_value(&out.rules[0].status).unwrap()
    };
    let handed_over = "id: r\nmatch: \"y = f($$$A)\"\nunless: \"f($$$, fast=$_, $$$)\"\naction: {remove_kwargs: [debug]}\nexpect: 1\n";
    assert_eq!(
        status(handed_over, "y = f(x, fast=True, debug=1)\n"),
        "guarded"
    );
    // The guard recognises the rule's own output: the patch is in place already.
    let own = "id: r\nmatch: \"y = $F($$$A)\"\nunless: \"checkpoint($$$)\"\naction: {replace: \"y = checkpoint($F, $$$A)\"}\nexpect: 1\n";
    assert_eq!(status(own, "y = checkpoint(f, x)\n"), "redundant");
}

#[test]
fn a_def_template_keeps_the_parameter_layout_and_never_drops_an_annotation() {
    let source =
        "class C:\n    def f(\n        self,\n        x,\n        y=1,\n    ):\n        return x\n";
    let rule = "id: r\nmatch: \"def f($$$P): $$$B\"\naction:\n  replace: |-\n    def g($$$P):\n        $$$B\nexpect: 1\n";
    assert_eq!(
        patched(rule, source),
        "class C:\n    def g(\n        self,\n        x,\n        y=1,\n    ):\n        return x\n"
    );
    let annotated = "def f(x) -> int:\n    return x\n";
    let refusal = patch(&rules(rule), &versions(&[]), "m.py", annotated).unwrap_err();
    assert!(refusal.to_string().contains("`-> int`"), "{refusal}");
    let carried = "id: r\nmatch: \"def f($$$P) -> $R: $$$B\"\naction:\n  replace: |-\n    def g($$$P) -> $R:\n        $$$B\nexpect: 1\n";
    assert_eq!(
        patched(carried, annotated),
        "def g(x) -> int:\n    return x\n"
    );
}

#[test]
fn a_decorator_is_inside_the_function_it_decorates() {
    let source = "class Block:\n    @torch.compile(mode=\"max\")\n    def forward(self, x):\n        return x\n\n    @torch.compile(mode=\"max\")\n    def other(self, x):\n        return x\n";
    let rule = "id: r\ninside: {class: Block, function: forward}\nmatch: \"@torch.compile($$$A)\"\naction: {delete: true}\nexpect: 1\n";
    assert_eq!(
        patched(rule, source),
        "class Block:\n    def forward(self, x):\n        return x\n\n    @torch.compile(mode=\"max\")\n    def other(self, x):\n        return x\n"
    );
}

#[test]
fn a_decorator_over_a_def_is_a_decorated_definition_pattern() {
    // `@dec` over `def` must match the decorated definition as a whole: it used to compile to
    // the decorator alone, silently dropping the def (and its metavariables).
    let source = "class C:\n    def f(\n        self,\n    ):\n        return x\n";
    let rule = "id: r\nmatch: \"def f($$$P): $$$B\"\nnot_inside: \"@torch.no_grad()\\ndef f($$$Q): $$$C\"\naction:\n  replace: |-\n    @torch.no_grad()\n    def f($$$P):\n        $$$B\nexpect: 1\n";
    let once = patched(rule, source);
    assert_eq!(
        once,
        "class C:\n    @torch.no_grad()\n    def f(\n        self,\n    ):\n        return x\n"
    );
    assert_eq!(
        patched(rule, &once),
        once,
        "the guard recognises the decorated def"
    );
}

#[test]
fn set_kwargs_puts_a_new_keyword_beside_another() {
    let source = "y = f(x, a=1, b=2)\n";
    let run = |value: &str| {
        let rule = format!(
            "id: r\nmatch: \"f($$$A)\"\naction: {{set_kwargs: {{c: {value}}}}}\nexpect: 1\n"
        );
        patched(&rule, source)
    };
    assert_eq!(run("\"3\""), "y = f(x, a=1, b=2, c=3)\n");
    assert_eq!(run("{value: \"3\", after: a}"), "y = f(x, a=1, c=3, b=2)\n");
    assert_eq!(
        run("{value: \"3\", before: a}"),
        "y = f(x, c=3, a=1, b=2)\n"
    );
    assert_eq!(
        run("{value: \"3\", after: z}"),
        "y = f(x, a=1, b=2, c=3)\n",
        "absent anchor: last"
    );
    // An existing keyword keeps its place.
    assert_eq!(run("{value: \"3\", after: b}").matches("c=3").count(), 1);
    let both = "id: r\nmatch: \"f($$$A)\"\naction: {set_kwargs: {c: {value: \"3\", after: a, before: b}}}\n";
    assert!(crate::util::rule_error(both).contains("not both"));
}

#[test]
fn deleting_a_statement_that_shares_its_line_takes_its_semicolon() {
    let rule = "id: d\nmatch: \"f()\"\naction: {delete: true}\n";
    for (before, after) in [
        ("a; f(); b\n", "a; b\n"),
        ("a; f()\n", "a\n"),
        ("f(); a\n", "a\n"),
        ("a ;  f()  ;  b  # c\n", "a ;  b  # c\n"),
        ("if x: f(); g()\n", "if x: g()\n"),
    ] {
        assert_eq!(patched(rule, before), after, "{before:?}");
    }
}

#[test]
fn rename_renames_every_spelling_python_reads_as_the_name() {
    // `ﬁle` (with the ligature U+FB01) is the identifier `file` to Python (NFKC): leaving it
    // would leave a NameError behind.
    let rule = "id: r\nmatch: \"def f(): $$$B\"\naction: {rename: {from: file, to: path}}\n";
    let source = "def f():\n    \u{FB01}le = 1\n    return file\n";
    assert_eq!(
        patched(rule, source),
        "def f():\n    path = 1\n    return path\n"
    );
}

/// `replace: {of, by}` at `source`, and the output of a second run (a fixed point).
fn replace_between(rule: &str, source: &str) -> Result<String, String> {
    let set = rules(rule);
    let out = patch(&set, &versions(&[]), "m.py", source).map_err(|e| render(&e))?;
    let again = patch(&set, &versions(&[]), "m.py", &out.output).map_err(|e| render(&e))?;
    assert_eq!(again.output, out.output, "not a fixed point");
    Ok(out.output)
}

#[test]
fn replace_of_a_capture_rewrites_the_code_between_its_anchors_only() {
    let rule = "id: r\nmatch: 'self.attn($H, $$$MID, output_attentions=$O)'\naction: {replace: {of: $$$MID, by: 'attention_mask=mask'}}\nexpect: 1\n";
    // A one-per-line call keeps its layout; the comments on replaced lines go above the
    // statement (none is left on the new code), others stay where they are.
    let source = "def f(self, h, mask, pos):\n    out = self.attn(\n        h,  # hidden\n        pos,  # positions\n        None,  # cache\n        output_attentions=False,\n    )\n";
    assert_eq!(
        replace_between(rule, source).unwrap(),
        "def f(self, h, mask, pos):\n    # positions\n    # cache\n    out = self.attn(\n        h,  # hidden\n        attention_mask=mask,\n        output_attentions=False,\n    )\n"
    );
    assert_eq!(
        replace_between(
            rule,
            "out = self.attn(h, pos, None, output_attentions=False)\n"
        )
        .unwrap(),
        "out = self.attn(h, attention_mask=mask, output_attentions=False)\n"
    );
    // Nothing between the anchors: refused, saying so (no guess where the code would go).
    let e = replace_between(rule, "out = self.attn(h, output_attentions=False)\n").unwrap_err();
    assert!(e.contains("bound nothing here"), "{e}");
    // One capture, with the other captures usable in `by`.
    let one = "id: r\nmatch: 'F.dropout($X, p=$P, training=$T)'\naction: {replace: {of: $T, by: 'self.training and $P > 0'}}\n";
    assert_eq!(
        replace_between(one, "y = F.dropout(x, p=0.1, training=False)\n").unwrap(),
        "y = F.dropout(x, p=0.1, training=self.training and 0.1 > 0)\n"
    );
    for (bad, says) in [
        ("{of: MID, by: x}", "names one metavariable"),
        ("{of: $$$MID}", "by"),
        ("{of: $$$MID, by: x, at: y}", "at"),
    ] {
        let e = crate::util::rule_error(&format!(
            "id: r\nmatch: 'f($$$MID)'\naction: {{replace: {bad}}}\n"
        ));
        assert!(e.contains(says), "{bad}: {e}");
    }
    let unbound = crate::util::rule_error(
        "id: r\nmatch: 'f($$$MID)'\naction: {replace: {of: $$$X, by: y}}\n",
    );
    assert!(unbound.contains("X"), "{unbound}");
}
