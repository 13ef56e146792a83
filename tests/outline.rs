//! `outline`: a function's body lifted into a module-level function, the original left as one
//! forwarding call; what cannot be forwarded exactly is refused.

use crate::util::{patch, render, rule_error, rules, versions};

fn apply(rule: &str, source: &str) -> String {
    let set = rules(rule);
    let out =
        patch(&set, &versions(&[]), "m.py", source).unwrap_or_else(|e| panic!("{}", render(&e)));
    let again = patch(&set, &versions(&[]), "m.py", &out.output)
        .unwrap_or_else(|e| panic!("{}", render(&e)));
    assert_eq!(again.output, out.output, "a second run changed the output");
    out.output
}

fn refusal(rule: &str, source: &str) -> String {
    match patch(&rules(rule), &versions(&[]), "m.py", source) {
        Ok(out) => panic!("applied:\n{}", out.output),
        Err(e) => render(&e),
    }
}

const ATTENTION: &str = r#"import torch
from torch import nn


class Attention(nn.Module):
    @deprecate_kwarg("past_key_value")
    def forward(self, hidden, /, mask=None, *extra, cache: int = 0, **kwargs) -> torch.Tensor:
        """Attend."""
        # scores first
        scores = torch.matmul(hidden, hidden.T)
        note = """kept
  as written"""
        return scores + mask  # masked


class After:
    pass
"#;

const RULE: &str = "id: ol\ninside: {class: Attention}\nmatch: \"def forward($$$P): $$$B\"\naction:\n  outline: {decorators: [\"torch.compile(dynamic=True)\"]}\nexpect: 1\n";

#[test]
fn a_method_is_outlined_before_its_class_and_forwards_every_parameter_by_kind() {
    let _snapshots = crate::util::snapshots(module_path!());
    let mut source = ATTENTION.to_string();
    source = source.replace("@deprecate_kwarg(\"past_key_value\")\n    ", "");
    insta::assert_snapshot!(apply(RULE, &source));
}

#[test]
fn names_come_from_the_class_the_function_and_captures() {
    let source =
        "class A:\n    def f(self, x):\n        return x\n\n\ndef g(a, *, k=1):\n    return a\n";
    let out = apply(
        "id: ol\nmatch: \"def $F($$$P): $$$B\"\naction: {outline: \"impl_${F}\"}\n",
        source,
    );
    assert!(out.contains("        return impl_f(self, x)\n"), "{out}");
    assert!(
        out.contains("def impl_f(self, x):\n    return x\n"),
        "{out}"
    );
    assert!(out.contains("    return impl_g(a, k=k)\n"), "{out}");
    // The default name: `Class_method`, and for a function `name_outlined`.
    let out = apply(
        "id: ol\nmatch: \"def $F($$$P): $$$B\"\naction: {outline: true}\n",
        source,
    );
    assert!(out.contains("return A_f(self, x)"), "{out}");
    assert!(out.contains("return g_outlined(a, k=k)"), "{out}");
}

#[test]
fn two_methods_of_one_class_follow_it_in_order() {
    let source = "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n\n\nx = 1\n";
    let out = apply(
        "id: ol\nmatch: \"def $F(self): $$$B\"\naction: {outline: true}\n",
        source,
    );
    let f = out.find("def A_f(self)").expect(&out);
    let g = out.find("def A_g(self)").expect(&out);
    let x = out.find("x = 1").expect(&out);
    assert!(f < g && g < x, "{out}");
}

#[test]
fn what_cannot_be_forwarded_exactly_is_refused() {
    let _snapshots = crate::util::snapshots(module_path!());
    let rule = "id: ol\nmatch: \"def $F($$$P): $$$B\"\naction: {outline: true}\n";
    let cases = [
        (
            "bare-super",
            "class A(B):\n    def f(self):\n        return super().f()\n",
        ),
        (
            "class-cell",
            "class A:\n    def f(self):\n        return __class__\n",
        ),
        (
            "private-name",
            "class A:\n    def f(self):\n        return self.__x\n",
        ),
        (
            "nested",
            "def outer():\n    y = 1\n    class A:\n        def f(self):\n            return y\n    return A\n",
        ),
        (
            "name-clash",
            "A_f = None\n\n\nclass A:\n    def f(self):\n        return 1\n",
        ),
    ];
    for (name, source) in cases {
        insta::assert_snapshot!(format!("refused-{name}"), refusal(rule, source));
    }
    let rule = "id: ol\nmatch: \"async def $F($$$P): $$$B\"\naction: {outline: true}\n";
    let source = "class A:\n    async def f(self):\n        return 1\n";
    insta::assert_snapshot!("refused-async", refusal(rule, source));
}

#[test]
fn bad_arguments_are_rule_errors() {
    let _snapshots = crate::util::snapshots(module_path!());
    let base = "id: ol\nmatch: \"def f($$$P): $$$B\"\naction:\n  outline: ";
    for (name, args) in [
        ("not-a-name", "\"${def}-x\""),
        ("unknown-reference", "{name: \"${klass}_x\"}"),
        ("decorator-with-at", "{decorators: [\"@torch.compile\"]}"),
        ("unknown-key", "{nam: x}"),
    ] {
        insta::assert_snapshot!(
            format!("rule-{name}"),
            rule_error(&format!("{base}{args}\n"))
        );
    }
}

#[test]
fn a_capture_that_is_no_name_is_refused_at_the_site() {
    let source = "def f(x):\n    return x\n";
    let rule = "id: ol\nmatch: \"def f($A): $$$B\"\naction: {outline: \"${A}_impl\"}\n";
    assert_eq!(apply(rule, source).matches("def x_impl(x)").count(), 1);
    let rule = "id: ol\nmatch: \"def f($$$A): $$$B\"\naction: {outline: \"${B}_impl\"}\n";
    let error = refusal(rule, source);
    assert!(error.contains("made from `${B}_impl`"), "{error}");
}

#[test]
fn after_places_the_outline_below_a_named_definition() {
    let source = "def f(x):\n    return helper(x)\n\n\ndef helper(x):\n    return x\n";
    let out = apply(
        "id: ol\nmatch: \"def f($$$P): $$$B\"\naction: {outline: {name: f_impl, after: helper}}\n",
        source,
    );
    assert!(
        out.ends_with("def helper(x):\n    return x\n\n\ndef f_impl(x):\n    return helper(x)\n"),
        "{out}"
    );
}

/// `after:` past code that runs at import — a default or an annotation that calls, or the
/// class statement itself — is refused: the outline would not exist yet when it runs.
#[test]
fn after_past_code_that_runs_at_import_is_refused() {
    let cases = [
        (
            "class A:\n    def f(self):\n        return 1\n\n\ndef g(x=A().f()):\n    return x\n",
            "g",
        ),
        (
            "class A:\n    def f(self):\n        return 1\n\n\ndef g(x: A().f()):\n    return x\n",
            "g",
        ),
        (
            "class A:\n    def f(self):\n        return 1\n\n    x = f(None)\n",
            "A",
        ),
    ];
    for (source, after) in cases {
        let rule = format!(
            "id: o\nmatch: \"def f($$$P): $$$B\"\ninside: {{class: A}}\naction: {{outline: {{name: helper, after: {after}}}}}\n"
        );
        let out = refusal(&rule, source);
        assert!(out.contains("runs code at import"), "{source}\n{out}");
    }
}
