//! What a hostile reading of the newest rewrite kinds found (alternatives with their own
//! actions, `replace: {of, by}`, `at`, `derive_class`), each kept refused or right.

use crate::util::{patch, render, rule_error, rules, versions, words};

fn run(rule: &str, source: &str) -> Result<String, String> {
    let set = rules(rule);
    patch(&set, &versions(&[]), "m.py", source)
        .map(|p| p.output)
        .map_err(|e| words(&render(&e)))
}

#[test]
fn a_run_a_keyword_anchor_was_taken_out_of_is_not_written_back() {
    // `$$$MID` holds `x` and `z=2` around `out=1`: its text would carry `out=1` along.
    for action in [
        "{replace: 'g($H, $$$MID, o=$O)'}",
        "{replace: {of: $$$MID, by: 'q=0'}}",
    ] {
        let rule = format!("id: r\nmatch: 'f($H, $$$MID, out=$O)'\naction: {action}\nexpect: 1\n");
        let e = run(&rule, "f(h, x, out=1, z=2)\n").unwrap_err();
        assert!(e.contains("on both sides of a keyword"), "{action}: {e}");
        // Contiguous, it is written back.
        assert!(run(&rule, "f(h, x, z=2, out=1)\n").is_ok(), "{action}");
    }
}

#[test]
fn what_replaces_a_capture_stands_there_as_the_capture_did() {
    let of = |pattern: &str, by: &str| {
        format!("id: r\nmatch: '{pattern}'\naction: {{replace: {{of: $X, by: '{by}'}}}}\n")
    };
    assert_eq!(
        run(&of("y = $X * 2", "a + b"), "y = c * 2\n").unwrap(),
        "y = (a + b) * 2\n"
    );
    assert_eq!(
        run(&of("y = $X ** 2", "-a"), "y = c ** 2\n").unwrap(),
        "y = (-a) ** 2\n"
    );
    assert_eq!(
        run(&of("log(f\"{$X}\")", "y := 7"), "log(f\"{x}\")\n").unwrap(),
        "log(f\"{(y := 7)}\")\n"
    );
    // One element stays one element, one argument one argument: two are refused.
    for (pattern, source) in [("xs = [$X, 0]", "xs = [c, 0]\n"), ("g($X, 0)", "g(c, 0)\n")] {
        let e = run(&of(pattern, "a, b"), source).unwrap_err();
        assert!(e.contains("not one expression"), "{pattern}: {e}");
    }
    assert_eq!(
        run(&of("xs = [$X, 0]", "(a, b)"), "xs = [c, 0]\n").unwrap(),
        "xs = [(a, b), 0]\n"
    );
    // A template's capture in an f-string field is parenthesized as CPython needs it too.
    let field = "id: r\nmatch: 'log($X)'\naction: {replace: 'log(f\"{$X}\")'}\n";
    assert_eq!(
        run(field, "log(y := 7)\n").unwrap(),
        "log(f\"{(y := 7)}\")\n"
    );
    // Where any expression may stand, no parentheses are added.
    assert_eq!(
        run(&of("g(k=$X)", "a and b"), "g(k=c)\n").unwrap(),
        "g(k=a and b)\n"
    );
    let e = run(&of("y = $X * 2", "a) or (b"), "y = c * 2\n").unwrap_err();
    assert!(e.contains("not one expression"), "{e}");
    // A capture bound by a loop around the match is not the match's to edit.
    let outside = "id: r\ninside: {loop: 'for $L in self.layers'}\nmatch: 'x = $L(x)'\naction: {replace: {of: $L, by: blocks}}\n";
    let e = run(
        outside,
        "def f(self, x):\n    for l in self.layers:\n        x = l(x)\n",
    )
    .unwrap_err();
    assert!(e.contains("bound outside the match"), "{e}");
}

#[test]
fn a_string_in_a_template_keeps_its_value() {
    let rule = "id: r\nmatch: 'x = f($A)'\naction:\n  replace:\n    of: $A\n    by: |\n      \"\"\"doc\n      more\"\"\"\n";
    let out = run(
        rule,
        "class C:\n    def m(self):\n        x = f(\n            3\n        )\n",
    )
    .unwrap();
    assert!(out.contains("\"\"\"doc\nmore\"\"\""), "{out}");
    let whole =
        "id: r\nmatch: 'x = f($A)'\naction:\n  replace: |\n    x = f(\"\"\"a\n    b\"\"\")\n";
    let out = run(whole, "def m():\n    x = f(1)\n").unwrap();
    assert!(out.contains("f(\"\"\"a\nb\"\"\")"), "{out}");
}

#[test]
fn a_pin_cannot_carry_edits_in_its_alternatives() {
    let rule = "id: r\nmatch:\n  any:\n    - {match: 'foo($X)', action: {replace: 'baz($X)'}}\n    - 'qux($X)'\naction: {check: {}}\n";
    assert!(words(&rule_error(rule)).contains("a `check` rule edits nothing"));
}

#[test]
fn at_holds_for_the_patch_already_in_place_and_past_a_semicolon() {
    let top = "id: r\nmatch: 'setup($X)'\nat: top_level\naction: {replace: 'setup2($X)'}\nexpect: 1\nprovides: [setup, setup2]\n";
    // A nested call of the output's shape is no patch of a top-level rule: drift.
    assert!(run(top, "def f():\n    setup2(3)\n").is_err());
    assert!(
        run(top, "setup2(3)\n").is_ok(),
        "already applied at top level"
    );
    let last = "id: r\nmatch: 'mark($X)'\nat: last\naction: {replace: 'done($X)'}\nexpect: 1\nprovides: [mark, done]\n";
    assert_eq!(
        run(last, "def f():\n    mark(1);\n").unwrap(),
        "def f():\n    done(1);\n"
    );
    let r#where = "id: r\nmatch: 'old($X)'\nwhere: {$X: {regex: '^1$'}}\naction: {replace: 'new($X)'}\nexpect: 1\nprovides: [old, new]\n";
    assert!(
        run(r#where, "new(2)\n").is_err(),
        "a shape the `where` would refuse is no patch"
    );
}

const DERIVE: &str = "id: d\ninside: {class: Base}\nmatch: 'def __init__($$$P): $$$B'\naction:\n  derive_class:\n    name: 'My${class}'\n    parameters: 'extra: int = -1'\nexpect: 1\n";

#[test]
fn derive_class_refuses_what_would_not_forward_as_written() {
    // `(self, $A)`: the first of two `__init__`s alone matches (the second is the one that runs).
    let first = DERIVE.replace("def __init__($$$P)", "def __init__(self, $A)");
    let twice = "class Base:\n    def __init__(self, a):\n        pass\n    def __init__(self, a, b):\n        pass\n";
    assert!(
        run(&first, twice)
            .unwrap_err()
            .contains("binds `__init__` more than once")
    );
    for (source, says) in [
        (
            "class Base:\n    def __init__(self, super=1):\n        pass\n",
            "would hide the `super`",
        ),
        (
            "class Base:\n    def __init__(*args, **kwargs):\n        pass\n",
            "no positional first parameter",
        ),
        (
            "class Base:\n    def __init__(self, *, __y=2):\n        pass\n",
            "is private",
        ),
        (
            "def other(self, a, b):\n    pass\nclass Base:\n    def __init__(self, a):\n        pass\n    __init__ = other\n",
            "binds `__init__` more than once",
        ),
        (
            "@add_cfg\nclass Base:\n    def __init__(self, a):\n        pass\n",
            "may replace or wrap",
        ),
        (
            "class Base:\n    def __init__(self, a):\n        pass\nBase = wrap(Base)\n",
            "binds `Base` again",
        ),
        (
            "T = str\nclass Base:\n    T = int\n    def __init__(self, a: T):\n        pass\n",
            "which the class body binds",
        ),
        (
            "class Base[T]:\n    def __init__(self, a: T):\n        pass\n",
            "type parameters",
        ),
        (
            "if X:\n    class Base:\n        def __init__(self, a):\n            pass\n",
            "defined at module level",
        ),
    ] {
        let e = run(DERIVE, source).unwrap_err();
        assert!(e.contains(says), "{source}\n{e}");
    }
    let named = |name: &str| DERIVE.replace("My${class}", name);
    let plain = "class Base:\n    def __init__(self, a):\n        pass\n";
    assert!(
        run(&named("list"), plain)
            .unwrap_err()
            .contains("names a builtin")
    );
    let global = format!("{plain}def f():\n    global MyBase\n    MyBase = 1\n");
    assert!(
        run(DERIVE, &global)
            .unwrap_err()
            .contains("names a builtin or a global")
    );
    let yields = DERIVE.replace(
        "    parameters: 'extra: int = -1'\n",
        "    after_super: 'yield self'\n",
    );
    assert!(
        run(&yields, plain)
            .unwrap_err()
            .contains("yields or awaits")
    );
    let e = words(&rule_error(
        &DERIVE.replace("extra: int = -1", "x=(yield from ())"),
    ));
    assert!(e.contains("yields or awaits"), "{e}");
}

#[test]
fn derive_class_copies_the_docstring_and_the_return_annotation_as_python_reads_them() {
    let out = run(DERIVE, "class Base:\n    (\"doc one \"\n     \"doc two\")\n\n    def __init__(self, a) -> None:\n        pass\n").unwrap();
    assert!(
        out.contains("class MyBase(Base):\n    (\"doc one \"\n     \"doc two\")\n"),
        "{out}"
    );
    assert!(out.contains("extra: int = -1) -> None:"), "{out}");
    // An f-string is no docstring: its side effects are not run a second time.
    let out = run(DERIVE, "class Base:\n    f\"\"\"{COUNT.append(1)}\"\"\"\n    def __init__(self, a):\n        pass\n").unwrap();
    assert_eq!(out.matches("COUNT.append").count(), 1, "{out}");
}

#[test]
fn what_a_rule_says_about_itself_is_precise() {
    // A capture standing twice: `of` would rewrite one of its places.
    let twice = rule_error("id: r\nmatch: 'foo($X, $X)'\naction: {replace: {of: $X, by: y}}\n");
    assert!(words(&twice).contains("stands twice in `match`"), "{twice}");
    // A rule overlapping itself is not "two rules".
    let nested = "id: r\nmatch:\n  any:\n    - match: |\n        x = $A\n        y = $B\n      action: {replace: 'xy = ($A, $B)'}\n    - match: 'y = $B'\n      action: {replace: 'y = wrap($B)'}\nprovides: [wrap]\n";
    let e = run(nested, "x = 1\ny = 2\n").unwrap_err();
    assert!(e.contains("two matches of rule `r`"), "{e}");
    // A name some alternatives bind is said to be that, not "bound by no pattern".
    let some =
        rule_error("id: r\nmatch:\n  any: ['f($A, $B)', 'g($A)']\naction: {replace: 'h($B)'}\n");
    assert!(
        words(&some).contains("bound by only some alternatives"),
        "{some}"
    );
    // `explain` says where a site must stand.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.yaml"),
        "id: a\nmatch: 'return $X'\nat: last\n",
    )
    .unwrap();
    let out = crate::util::regraft(&["explain", "a.yaml"], dir.path());
    assert!(
        crate::util::text(&out.stdout).contains("at:          last"),
        "{}",
        crate::util::text(&out.stdout)
    );
}

#[test]
fn a_multi_line_replacement_in_a_crlf_file_is_its_own_fixed_point() {
    let rule = "id: r\nmatch: 'x = f($A)'\naction:\n  replace:\n    of: $A\n    by: |\n      g(\n          1,\n      )\nexpect: 1\n";
    let out = run(
        rule,
        "class C:\r\n    def m(self):\r\n        x = f(\r\n            3\r\n        )\r\n",
    )
    .unwrap();
    assert!(out.contains("g(\r\n"), "{out:?}");
    assert_eq!(
        out.replace("\r\n", "").matches('\n').count(),
        0,
        "no bare line feed: {out:?}"
    );
}
