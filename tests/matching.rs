//! Findings of the matching oracle (`tests/python/oracles/matching.py`): where regraft's
//! matches differed from an independent matcher over CPython's `ast`, each fixed here with
//! its exact outcome.

use crate::util::{patch, patched, render, rules, versions};

#[test]
fn a_bare_tuple_pattern_finds_bare_tuples() {
    // Was: no match anywhere (tree-sitter reads the pattern as a statement of two
    // expressions, no tuple node).
    let out = patched(
        "id: swap\nmatch: \"$A, $B\"\naction: {replace: \"[$A, $B]\"}\nexpect: 3\n",
        "def f(a, c):\n    x = a, c\n    for i in a, c:\n        pass\n    return a, c\n",
    );
    assert_eq!(
        out,
        "def f(a, c):\n    x = [a, c]\n    for i in [a, c]:\n        pass\n    return [a, c]\n"
    );
}

#[test]
fn an_expression_pattern_finds_it_in_annotations() {
    // Was: `list[int]` in an annotation is tree-sitter's `generic_type`, `int | None` its
    // `union_type`, and neither was found by `Optional[$T]`-style patterns.
    let source = "from typing import Optional, cast\ndef f(x: Optional[int] = None) -> Optional[str]:\n    y: Optional[a.B] = cast(Optional[int], x)\n    z: int | None = 1\n    return y\n";
    let out = patched(
        "id: pep604\nmatch: \"Optional[$T]\"\naction: {replace: \"$T | None\"}\nexpect: 4\n",
        source,
    );
    assert_eq!(
        out,
        "from typing import Optional, cast\ndef f(x: int | None = None) -> str | None:\n    y: a.B | None = cast(int | None, x)\n    z: int | None = 1\n    return y\n"
    );
    let out = patched(
        "id: back\nmatch: \"$T | None\"\naction: {replace: \"Optional[$T]\"}\nexpect: 1\n",
        "from typing import Optional\ndef f():\n    z: int | None = 1\n",
    );
    assert_eq!(
        out,
        "from typing import Optional\ndef f():\n    z: Optional[int] = 1\n"
    );
}

#[test]
fn sites_tree_sitter_reads_otherwise_than_cpython_are_refused() {
    // Was: `$N := $V` bound `$V` to `a` in `n := a if b else c` and the edit wrapped `a`
    // alone; `$A if $B else $C` bound `$C` to `c as w` in a `with` item.
    let source = "def f(a, b, c):\n    p = (n := a or b)\n    q = (n := a if b else c)\n    with a if b else c as w:\n        pass\n";
    let walrus = "id: w\nmatch: \"$N := $V\"\nwhere: {$V: {not_regex: \"^g\\\\(\"}}\naction: {replace: \"$N := g($V)\"}\nprovides: [g]\n";
    let error = patch(&rules(walrus), &versions(&[]), "m.py", source).unwrap_err();
    let rendered = render(&error);
    assert!(rendered.contains("otherwise than CPython"), "{rendered}");
    assert!(rendered.contains("m.py:3:10"), "{rendered}");
    let warned = format!("{walrus}on_refuse: warn\n");
    assert_eq!(
        patched(&warned, source),
        source.replace("(n := a or b)", "(n := g(a or b))"),
        "the site read alike is patched, the misread one left alone"
    );
    let conditional =
        "id: c\nmatch: \"$A if $B else $C\"\naction: {replace: \"h($A, $B, $C)\"}\nprovides: [h]\n";
    let rendered = render(&patch(&rules(conditional), &versions(&[]), "m.py", source).unwrap_err());
    assert!(rendered.contains("a if b else c as w"), "{rendered}");
}

#[test]
fn a_tuple_is_found_whichever_kind_tree_sitter_gives_it() {
    // Was: in a function body tree-sitter reads the value of `y = (*a, *a), b` as a target
    // (`pattern_list` of a `tuple_pattern`) and `$X, b` found it only at module level.
    let source = "def f(a, b):\n    y = (*a, *a), b\n    (i, j) = b\n    return (a, a), b\n";
    let out = patched(
        "id: t\nmatch: \"$X, b\"\naction: {replace: \"[$X, b]\"}\nexpect: 2\n",
        source,
    );
    assert_eq!(
        out,
        "def f(a, b):\n    y = [(*a, *a), b]\n    (i, j) = b\n    return [(a, a), b]\n"
    );
    let out = patched(
        "id: t\nmatch: \"($A, $B)\"\naction: {replace: \"[$A, $B]\"}\nexpect: 2\n",
        "def f(a, b):\n    (i, j) = b\n    return (a, b)\n",
    );
    assert_eq!(out, "def f(a, b):\n    [i, j] = b\n    return [a, b]\n");
}

#[test]
fn await_before_a_power_is_refused() {
    // Was: `await $X` bound `$X` to `a ** b` in `await a ** b`, which CPython reads as
    // `(await a) ** b`.
    let source = "async def f(a, b):\n    return await a ** b, await a + b\n";
    let yaml = "id: a\nmatch: \"await $X\"\naction: {replace: \"await g($X)\"}\nprovides: [g]\nwhere: {$X: {not_regex: \"^g\"}}\non_refuse: warn\n";
    assert_eq!(
        patched(yaml, source),
        "async def f(a, b):\n    return await a ** b, await g(a) + b\n"
    );
}
