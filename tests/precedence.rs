//! Templates are precedence-safe: a capture placed where the template's operators would bind
//! into it is parenthesised. Differential against CPython: for generated expressions and
//! templates, `ast.dump` of what regraft writes equals that of the template with the capture
//! in parentheses, which is what the template means.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

use crate::util::{patch, python_json, render, rules, versions};

/// An operand: parenthesised unless atomic, so every generated expression is valid Python and
/// its own top-level operator is what meets the template's.
fn operand(e: String) -> String {
    if e.contains(' ') || e.starts_with('-') {
        format!("({e})")
    } else {
        e
    }
}

fn expression() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        Just("a".to_string()),
        Just("f(x)".to_string()),
        Just("b.c".to_string()),
        Just("3".to_string()),
        Just("[1, 2]".to_string()),
    ];
    let inner = atom.prop_recursive(2, 8, 2, |inner| {
        let op = prop::sample::select(vec![
            "+", "-", "*", "/", "**", "%", "@", "|", "&", "<<", "and", "or", "<", "==", "is not",
            "in",
        ]);
        prop_oneof![
            (inner.clone(), inner.clone(), op).prop_map(|(l, r, op)| format!(
                "{} {op} {}",
                operand(l),
                operand(r)
            )),
            (inner.clone(), inner.clone(), inner.clone()).prop_map(|(a, c, b)| format!(
                "{} if {} else {}",
                operand(a),
                operand(c),
                operand(b)
            )),
            inner.clone().prop_map(|e| format!("not {}", operand(e))),
            inner.prop_map(|e| format!("-{}", operand(e))),
        ]
    });
    prop_oneof![
        4 => inner.clone(),
        1 => inner.prop_map(|e| format!("lambda: {}", operand(e))),
    ]
}

const TEMPLATES: &[&str] = &[
    "loss * $X",
    "$X * loss",
    "-$X",
    "$X ** 2",
    "2 ** $X",
    "not $X",
    "$X.attr",
    "$X[0]",
    "g($X)",
    "$X if cond else other",
    "first if $X else other",
    "[$X, 1]",
    "$X + 1",
    "$X and z",
    "z or $X",
    "$X < 3",
    "$X",
    "await_(lambda: $X)",
];

#[test]
fn captures_keep_their_meaning_wherever_a_template_puts_them() {
    let mut runner = TestRunner::deterministic();
    let strategy = expression();
    let mut payload = Vec::new();
    let cases: usize = std::env::var("REGRAFT_PRECEDENCE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(240);
    for i in 0..cases {
        let x = strategy.new_tree(&mut runner).unwrap().current();
        let template = TEMPLATES[i % TEMPLATES.len()];
        let rule = format!(
            "id: p\nmatch: \"y = $X\"\naction: {{replace: {:?}}}\nexpect: 1\n",
            format!("z = {template}")
        );
        // The template's own names (`g`, `cond`, ...) come from a star import, as a name an
        // edit introduces must come from somewhere.
        let source = format!("from lib import *\ny = {x}\n");
        let out = patch(&rules(&rule), &versions(&[]), "m.py", &source)
            .unwrap_or_else(|e| panic!("{x} in {template}: {}", render(&e)));
        let intended = format!(
            "from lib import *\nz = {}\n",
            template.replace("$X", &format!("({x})"))
        );
        payload.push(serde_json::json!([out.output, intended, x, template]));
    }
    const CHECK: &str = r#"
import ast, json, sys
bad = []
for produced, intended, x, template in json.load(sys.stdin):
    if ast.dump(ast.parse(produced)) != ast.dump(ast.parse(intended)):
        bad.append([x, template, produced])
print(json.dumps(bad))
"#;
    let bad: Vec<(String, String, String)> = python_json(CHECK, &payload);
    assert!(
        bad.is_empty(),
        "{} of {} change meaning; the first: {:?}",
        bad.len(),
        payload.len(),
        bad[0]
    );
}

#[test]
fn a_conditional_capture_is_parenthesised_and_an_atom_is_not() {
    let rule = "id: p\nmatch: \"y = $X\"\naction: {replace: \"z = loss * $X\"}\nexpect: 1\n";
    let run = |source: &str| {
        patch(&rules(rule), &versions(&[]), "m.py", source)
            .unwrap()
            .output
    };
    assert_eq!(run("y = a if c else b\n"), "z = loss * (a if c else b)\n");
    assert_eq!(run("y = f(a)\n"), "z = loss * f(a)\n");
    assert_eq!(
        run("y = a * b\n"),
        "z = loss * (a * b)\n",
        "a * b would bind as (loss * a) * b"
    );
}

#[test]
fn a_dictionary_in_an_f_string_field_stays_a_dictionary() {
    // `f'{{a: b}}'` is the text `{a: b}`, not a dictionary: the capture is parenthesised.
    let rule = "id: p\nmatch: \"CALL($X)\"\naction: {replace: \"s = f'{$X}'\"}\nexpect: 1\n";
    let out = patch(&rules(rule), &versions(&[]), "m.py", "CALL({a: b})\n")
        .unwrap_or_else(|e| panic!("{}", render(&e)));
    assert_eq!(out.output, "s = f'{({a: b})}'\n");
}

#[test]
fn a_starred_or_keyword_capture_next_to_an_operator_is_refused_not_rebound() {
    // `*a * k` is `*(a * k)`, `k=a * m` is `k=(a * m)`: written bare they would read as valid
    // code that means something else.
    for (source, by) in [
        ("CALL(*a)\n", "$X * MARK"),
        ("CALL(*a)\n", "$X.real"),
        ("CALL(k=a)\n", "$X * MARK"),
        ("CALL(**a)\n", "$X + MARK"),
    ] {
        for action in [
            format!("{{replace: {{of: $X, by: \"{by}\"}}}}"),
            format!("{{replace: \"NEW({by})\"}}"),
        ] {
            let rule = format!("id: p\nmatch: \"CALL($X)\"\naction: {action}\nexpect: 1\n");
            if let Ok(out) = patch(&rules(&rule), &versions(&[]), "m.py", source) {
                panic!("{source:?} with {action} was written:\n{}", out.output);
            }
        }
    }
    // As an element, the capture is whole: written as it is.
    let rule = "id: p\nmatch: \"CALL($X)\"\naction: {replace: \"NEW([$X, MARK])\"}\nexpect: 1\n";
    let out = patch(&rules(rule), &versions(&[]), "m.py", "CALL(*a)\n").unwrap();
    assert_eq!(out.output, "NEW([*a, MARK])\n");
}

#[test]
fn a_generator_that_is_a_call_s_only_argument_is_its_argument() {
    // tree-sitter makes `x for x in b` the call's argument list itself (the parentheses are
    // shared): `CALL($X)` still matches it, and a rewrite of `$X` keeps the call's own.
    let source = "CALL(x for x in b)\ng(CALL(y for y in c), 2)\nCALL((z for z in d), 1)\n";
    let of = "id: p\nmatch: \"CALL($X)\"\naction: {replace: {of: $X, by: \"sorted($X)\"}}\nwhere: {$X: {not_regex: sorted}}\nexpect: {min: 0}\n";
    let out = patch(&rules(of), &versions(&[]), "m.py", source)
        .unwrap_or_else(|e| panic!("{}", render(&e)));
    assert_eq!(
        out.output,
        "CALL(sorted((x for x in b)))\ng(CALL(sorted((y for y in c))), 2)\nCALL((z for z in d), 1)\n"
    );
    let whole = "id: p\nmatch: \"CALL($$$A)\"\naction: {replace: \"NEW($$$A)\"}\nexpect: 2\n";
    let out = patch(
        &rules(whole),
        &versions(&[]),
        "m.py",
        "CALL(x for x in b)\nCALL()\n",
    )
    .unwrap_or_else(|e| panic!("{}", render(&e)));
    assert_eq!(out.output, "NEW((x for x in b))\nNEW()\n");
}

#[test]
fn what_the_attack_on_rewrites_found_stays_fixed() {
    let run = |rule: &str, source: &str| patch(&rules(rule), &versions(&[]), "m.py", source);
    // A keyword capture written alone would be an assignment (`r = k=v` binds `k`).
    let alone = "id: p\nmatch: \"g($X)\"\naction: {replace: \"$X\"}\nexpect: {min: 0}\n";
    assert!(run(alone, "r = g(k=v)\n").is_err());
    assert!(run(alone, "g(k=v)\n").is_err());
    // A walrus in a nested format-spec field is read as `q` formatted by `= 1` unparenthesized.
    let spec = "id: p\nmatch: \"g($X)\"\naction: {replace: \"f'{y:{$X}}'\"}\nexpect: 1\n";
    assert_eq!(
        run(spec, "r = g(q := 1)\n").unwrap().output,
        "r = f'{y:{(q := 1)}}'\n"
    );
    // A run of one argument is a run: `$$$A, k=1` writes arguments, not a tuple.
    let more = "id: p\nmatch: \"CALL($$$A)\"\naction: {replace: {of: $$$A, by: \"$$$A, extra=1\"}}\nwhere: {$A: {not_regex: extra}}\nexpect: {min: 0}\n";
    assert_eq!(
        run(more, "CALL(x for x in y)\nCALL(a)\nCALL(a, b)\n")
            .unwrap()
            .output,
        "CALL((x for x in y), extra=1)\nCALL(a, extra=1)\nCALL(a, b, extra=1)\n"
    );
    // A keyword after a bare generator needs its parentheses: refused, not skipped in silence.
    let set = "id: p\nmatch: \"CALL($$$A)\"\naction: {set_kwargs: {k: \"1\"}}\nexpect: {min: 0}\n";
    let error = render(&run(set, "CALL(x for x in y)\nCALL(a)\n").unwrap_err());
    assert!(
        error.contains("a keyword cannot follow a generator"),
        "{error}"
    );
    assert_eq!(
        run(set, "CALL((x for x in y))\n").unwrap().output,
        "CALL((x for x in y), k=1)\n"
    );
}
