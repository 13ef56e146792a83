//! Differential against CPython itself: whatever regraft writes, CPython parses. tree-sitter
//! accepts some code CPython rejects, so regraft checks results with a CPython-faithful parser
//! too, and what CPython's compiler rejects beyond its grammar; this test holds both checks to
//! CPython's own `compile()`, in one batched process.

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;

use crate::properties::{module, rule, rule_count};
use crate::util::{patch, python_json, rules, versions};

/// The indexes of `sources` CPython rejects, with its message.
fn rejected_by_cpython(sources: &[String]) -> Vec<(usize, String)> {
    const CHECK: &str = r#"
import ast, json, sys
bad = []
for i, source in enumerate(json.load(sys.stdin)):
    try:
        compile(source, "<patched>", "exec", dont_inherit=True)
    except (SyntaxError, RecursionError) as e:
        bad.append([i, f"{type(e).__name__}: {e}"])
print(json.dumps(bad))
"#;
    python_json(CHECK, &sources)
}

#[test]
fn cpython_parses_every_output_of_every_action() {
    let cases: usize = std::env::var("REGRAFT_CPYTHON_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let mut runner = TestRunner::deterministic();
    let env = versions(&[]);
    let mut outputs = Vec::new();
    for _ in 0..cases {
        let source = module().new_tree(&mut runner).unwrap().current();
        for which in 0..rule_count() {
            if let Ok(patched) = patch(&rule(which), &env, "m.py", &source)
                && patched.output != source
            {
                outputs.push(patched.output);
            }
        }
    }
    assert!(outputs.len() > cases, "too few outputs to mean anything");
    let bad = rejected_by_cpython(&outputs);
    assert!(
        bad.is_empty(),
        "CPython rejects {} of {} outputs; the first ({}):\n{}",
        bad.len(),
        outputs.len(),
        bad[0].1,
        outputs[bad[0].0]
    );
}

/// Templates tree-sitter reads but CPython rejects: each is refused, nothing written.
#[test]
fn templates_cpython_rejects_are_refused() {
    let source = "def run(x, y):\n    data = wrap(x)\n    return f(x, y)\n";
    let cases = [
        ("f($X, $Y)", "f(a=$X, $Y)"),
        ("f($X, $Y)", "del f($X)"),
        ("return f($X, $Y)", "print \"x\", $X"),
        ("data = wrap($X)", "data := wrap($X)"),
        ("return f($X, $Y)", "def g(a=1, b):\n    return $X"),
        // Rejected by CPython's compiler, not its grammar.
        ("f($X, $Y)", "f($X, k=$Y, k=$X)"),
        ("data = wrap($X)", "*data = wrap($X)"),
        ("f($X, $Y)", "def h(a, a):\n    return $X"),
        ("data = wrap($X)", "a, *b, *c = wrap($X)"),
    ];
    for (pattern, template) in cases {
        let yaml = format!("id: bad\nmatch: {pattern:?}\naction: {{replace: {template:?}}}\n");
        let outcome = patch(&rules(&yaml), &versions(&[]), "m.py", source);
        match outcome {
            Err(e) => assert_eq!(e.kind(), "unparseable-result", "{template}: {e}"),
            Ok(p) => panic!("{template} was accepted:\n{}", p.output),
        }
    }
    let bad = rejected_by_cpython(&cases.map(|(_, t)| {
        let t = t.replace("$X", "x").replace("$Y", "y");
        // As the edit puts it: in a function, where `return` is allowed.
        format!(
            "def run(x, y):\n{}\n",
            t.lines()
                .map(|l| format!("    {l}"))
                .collect::<Vec<_>>()
                .join("\n")
        )
    }));
    assert_eq!(
        bad.len(),
        cases.len(),
        "every template above is one CPython rejects"
    );
}

/// `global` and `nonlocal` in every place CPython's symbol table judges: regraft's checker
/// and CPython's `compile()` must agree on each snippet, accepted or rejected.
#[test]
fn global_and_nonlocal_are_judged_as_cpython_judges_them() {
    let snippets: Vec<String> = [
        "def f(p):\n    global p\n",
        "def f(p):\n    nonlocal p\n",
        "def f():\n    x = 1\n    global x\n",
        "def f():\n    print(x)\n    global x\n",
        "def f():\n    x: int = 1\n    global x\n",
        "def f():\n    global x\n    x: int = 1\n",
        "def f():\n    global x\n    nonlocal x\n",
        "nonlocal x\n",
        "def f():\n    nonlocal x\n",
        "x = 1\ndef f():\n    nonlocal x\n",
        "def o():\n    global x\n    def f():\n        nonlocal x\n",
        "class C:\n    x = 1\n    def f(self):\n        nonlocal x\n",
        "def o():\n    y = [x for x in ()]\n    def f():\n        nonlocal x\n",
        // Accepted:
        "def f():\n    global x\n    x = 1\n",
        "def f():\n    global x\n    print(x)\n",
        "global x\nx = 1\n",
        "def o():\n    x = 1\n    def f():\n        nonlocal x\n        x = 2\n",
        "def o():\n    def f():\n        nonlocal x\n    x = 1\n",
        "def o(x):\n    class C:\n        def f(self):\n            nonlocal x\n",
        "def o():\n    x = 1\n    def m():\n        nonlocal x\n        def f():\n            nonlocal x\n",
        "class C:\n    global x\n    x = 1\n",
        "def f():\n    global x, y\n    del x\n",
        "def f():\n    def g():\n        pass\n    global h\n",
        "def f():\n    import os\n    global sys\n",
        "def f():\n    y = lambda x: x\n    global x\n",
        "def f():\n    [x for x in ()]\n    global x\n",
        "def o():\n    x = 1\n    def f():\n        print(x)\n        nonlocal x\n",
        "def f():\n    for x in ():\n        pass\n    global x\n",
        "def f():\n    try:\n        pass\n    except E as x:\n        pass\n    global x\n",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let rejected: Vec<usize> = rejected_by_cpython(&snippets)
        .into_iter()
        .map(|(i, _)| i)
        .collect();
    for (i, snippet) in snippets.iter().enumerate() {
        let ours = regraft::python::cpython::errors(snippet);
        assert_eq!(
            !ours.is_empty(),
            rejected.contains(&i),
            "regraft and CPython disagree on:\n{snippet}\nregraft: {ours:?}"
        );
    }
    assert!(
        rejected.len() >= 12,
        "the list holds the cases CPython rejects"
    );
}
