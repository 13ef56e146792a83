//! `add_parameter` and `remove_parameter`: where each kind goes, the list's layout kept, and
//! the refusals that keep meaning (a body reading the name, `*args` shifted, a use left).

use crate::util::{patch, render, rules, versions, words};

fn run(action: &str, source: &str) -> Result<String, String> {
    let rule = format!("id: r\nmatch: 'def f($$$P): $$$B'\naction: {action}\n");
    let set = rules(&rule);
    match patch(&set, &versions(&[]), "m.py", source) {
        Ok(out) => {
            let again = patch(&set, &versions(&[]), "m.py", &out.output).unwrap();
            assert_eq!(again.output, out.output, "not a fixed point");
            Ok(out.output)
        }
        Err(e) => Err(words(&render(&e))),
    }
}

fn ok(action: &str, source: &str) -> String {
    run(action, source).unwrap_or_else(|e| panic!("{e}"))
}

const ADD: &str = "{add_parameter: {name: scale, default: '1.0'}}";
const KW: &str = "{add_parameter: {name: flag, default: 'False', keyword_only: true}}";

#[test]
fn a_parameter_is_added_where_its_kind_goes() {
    assert_eq!(
        ok(ADD, "def f(self, x, y=1, *, z, **kw):\n    return x\n"),
        "def f(self, x, y=1, scale=1.0, *, z, **kw):\n    return x\n"
    );
    assert_eq!(
        ok(ADD, "def f(self, x, **kw):\n    return x\n"),
        "def f(self, x, scale=1.0, **kw):\n    return x\n"
    );
    assert_eq!(
        ok(ADD, "def f():\n    return 1\n"),
        "def f(scale=1.0):\n    return 1\n"
    );
    assert_eq!(
        ok(KW, "def f(self, x, **kw):\n    return x\n"),
        "def f(self, x, *, flag=False, **kw):\n    return x\n"
    );
    assert_eq!(
        ok(KW, "def f(a, *args, b):\n    return a\n"),
        "def f(a, *args, b, flag=False):\n    return a\n"
    );
    assert_eq!(
        ok(
            "{add_parameter: {name: x, annotation: int, keyword_only: true}}",
            "def f():\n    return 1\n"
        ),
        "def f(*, x: int):\n    return 1\n"
    );
}

#[test]
fn a_list_written_one_per_line_stays_so() {
    let source =
        "def f(\n    self,\n    hidden_states,\n    mask=None,\n):\n    return hidden_states\n";
    assert_eq!(
        ok(ADD, source),
        "def f(\n    self,\n    hidden_states,\n    mask=None,\n    scale=1.0,\n):\n    return hidden_states\n"
    );
    let source = "def f(\n    self,\n    mask=None,\n    **kwargs\n):\n    return mask\n";
    assert_eq!(
        ok(ADD, source),
        "def f(\n    self,\n    mask=None,\n    scale=1.0,\n    **kwargs\n):\n    return mask\n"
    );
}

#[test]
fn adding_refuses_what_would_change_meaning() {
    let e = run(ADD, "def f(a, *args):\n    return args\n").unwrap_err();
    assert!(e.contains("would take the first value it receives"), "{e}");
    let e = run(ADD, "scale = 2\ndef f(a):\n    return a * scale\n").unwrap_err();
    assert!(e.contains("the body already reads `scale`"), "{e}");
    let e = run(ADD, "def f(a, scale=2.0):\n    return a\n").unwrap_err();
    assert!(e.contains("already has `scale=2.0`"), "{e}");
    // An attribute or a keyword of that spelling is no use of the name.
    assert_eq!(
        ok(ADD, "def f(a):\n    return g(a.scale, scale=a)\n"),
        "def f(a, scale=1.0):\n    return g(a.scale, scale=a)\n"
    );
    // A positional without a default would break every caller.
    let error = crate::util::rule_error(
        "id: r\nmatch: 'def f($$$P): $$$B'\naction: {add_parameter: {name: x}}\n",
    );
    assert!(words(&error).contains("`keyword_only: true`"), "{error}");
}

#[test]
fn a_parameter_the_body_does_not_use_is_removed() {
    let remove = "{remove_parameter: unused}";
    for (source, expected) in [
        (
            "def f(self, x, unused=None, **kw):\n    return x\n",
            "def f(self, x, **kw):\n    return x\n",
        ),
        (
            "def f(a, unused):\n    return a\n",
            "def f(a):\n    return a\n",
        ),
        (
            "def f(unused, a):\n    return a\n",
            "def f(a):\n    return a\n",
        ),
        (
            "def f(a, *, unused):\n    return a\n",
            "def f(a):\n    return a\n",
        ),
        (
            "def f(a, *, unused, b):\n    return a + b\n",
            "def f(a, *, b):\n    return a + b\n",
        ),
        (
            "def f(unused, /, a):\n    return a\n",
            "def f(a):\n    return a\n",
        ),
        (
            "def f(\n    a,\n    unused,\n):\n    return a\n",
            "def f(\n    a,\n):\n    return a\n",
        ),
        ("def f(a):\n    return a\n", "def f(a):\n    return a\n"),
    ] {
        assert_eq!(ok(remove, source), expected, "{source}");
    }
    let e = run(remove, "def f(a, unused=None):\n    return unused or a\n").unwrap_err();
    assert!(e.contains("the body uses `unused`"), "{e}");
}

#[test]
fn a_comment_stays_with_its_parameter() {
    let source = "def f(\n    self,\n    mask=None,  # the mask\n):\n    return mask\n";
    assert_eq!(
        ok(ADD, source),
        "def f(\n    self,\n    mask=None,  # the mask\n    scale=1.0,\n):\n    return mask\n"
    );
}

#[test]
fn annotated_variadics_are_variadics() {
    let e = run(ADD, "def f(a, *args: str):\n    return a\n").unwrap_err();
    assert!(e.contains("would take the first value it receives"), "{e}");
    assert_eq!(
        ok(ADD, "def f(a, **kw: int):\n    return a\n"),
        "def f(a, scale=1.0, **kw: int):\n    return a\n"
    );
    assert_eq!(
        ok(KW, "def f(a, *args: str, k=1, **kw):\n    return a\n"),
        "def f(a, *args: str, k=1, flag=False, **kw):\n    return a\n"
    );
    assert_eq!(
        ok(KW, "def f(a, *, k: int, **kw: int):\n    return a\n"),
        "def f(a, *, k: int, flag=False, **kw: int):\n    return a\n"
    );
}

#[test]
fn crlf_lists_stay_crlf() {
    let source = "def f(\r\n    a,\r\n    b,\r\n):\r\n    return a\r\n";
    assert_eq!(
        ok(ADD, source),
        "def f(\r\n    a,\r\n    b,\r\n    scale=1.0,\r\n):\r\n    return a\r\n"
    );
}

#[test]
fn a_declaration_is_one_parameter_of_its_kind() {
    for action in [
        "{add_parameter: {name: scale, default: '1, c=2'}}",
        "{add_parameter: {name: scale, annotation: 'int = 3, d: int', default: '1'}}",
        "{add_parameter: {name: scale, default: ''}}",
        "{add_parameter: {name: scale, default: 'yield'}}",
    ] {
        let e = run(action, "def f(a):\n    return a\n").unwrap_err();
        assert!(e.contains("is not one parameter"), "{action}: {e}");
    }
    for name in ["class", "None"] {
        let rule = format!(
            "id: r\nmatch: 'def f($$$P): $$$B'\naction: {{add_parameter: {{name: {name}, default: '1'}}}}\n"
        );
        let error = words(&crate::util::rule_error(&rule));
        assert!(error.contains("not a name a parameter can have"), "{error}");
    }
}

#[test]
fn a_parameter_of_another_kind_is_not_applied() {
    let e = run(KW, "def f(a, flag=False):\n    return a\n").unwrap_err();
    assert!(e.contains("as a positional-or-keyword parameter"), "{e}");
    let e = run(ADD, "def f(a, scale=1.0, /):\n    return a\n").unwrap_err();
    assert!(e.contains("as a positional-only parameter"), "{e}");
    let e = run(ADD, "def f(a, *args, scale=1.0):\n    return a\n").unwrap_err();
    assert!(e.contains("as a keyword-only parameter"), "{e}");
}

#[test]
fn hidden_uses_of_the_variables_are_refused() {
    for body in [
        "return locals()",
        "return vars()",
        "return eval('b')",
        "return sys._getframe().f_locals",
    ] {
        let source = format!("def f(a, b):\n    {body}\n");
        let e = run("{remove_parameter: b}", &source).unwrap_err();
        assert!(
            e.contains("sees the function's variables by name"),
            "{body}: {e}"
        );
        let e = run(ADD, &source).unwrap_err();
        assert!(
            e.contains("sees the function's variables by name"),
            "{body}: {e}"
        );
    }
    let source = "class C(B):\n    def f(self, *a):\n        return super().f()\n";
    let rule = "id: r\nmatch: 'def f($$$P): $$$B'\naction: {remove_parameter: self}\n";
    let set = rules(rule);
    let e = words(&render(
        &patch(&set, &versions(&[]), "m.py", source).unwrap_err(),
    ));
    assert!(
        e.contains("`super()` without arguments reads the first parameter"),
        "{e}"
    );
}

#[test]
fn comments_and_trailing_commas_survive_a_removal() {
    let remove = "{remove_parameter: b}";
    for (source, expected) in [
        (
            "def f(\n    a,  # A\n    b,  # B\n    c,\n):\n    return a + c\n",
            "def f(\n    a,  # A\n    c,\n):\n    return a + c\n",
        ),
        (
            "def f(\n    a,  # A\n    b,  # B\n):\n    return a\n",
            "def f(\n    a,  # A\n):\n    return a\n",
        ),
        ("def f(b,):\n    return 1\n", "def f():\n    return 1\n"),
    ] {
        assert_eq!(ok(remove, source), expected, "{source}");
    }
    // Added after a last parameter with a comment and no trailing comma.
    assert_eq!(
        ok(
            ADD,
            "def f(\n    a,  # the a\n    b  # the b\n):\n    return a\n"
        ),
        "def f(\n    a,  # the a\n    b,  # the b\n    scale=1.0\n):\n    return a\n"
    );
    // A list on one line with a comment before its bracket stays on that line.
    assert_eq!(
        ok(ADD, "def f(a, b  # trailing\n      ):\n    return a\n"),
        "def f(a, b, scale=1.0  # trailing\n      ):\n    return a\n"
    );
}
