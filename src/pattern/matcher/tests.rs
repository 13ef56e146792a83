//! Tests of the parent module.

use super::*;
use crate::pattern::Pattern;
use crate::python::parse;

fn first_match(pattern: &str, source: &str) -> Option<Vec<(String, String)>> {
    let p = Pattern::compile(pattern).unwrap();
    let tree = parse(source);
    let matcher = Matcher::new(source);
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        let mut b = Bindings::default();
        if matcher.matches(&p.root, node, &mut b) {
            return Some(
                b.named()
                    .map(|(n, c)| (n.to_string(), c.text(source).to_string()))
                    .collect(),
            );
        }
        let mut cursor = node.walk();
        let children: Vec<_> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    None
}

#[test]
fn binds_single_and_sequence_metavariables() {
    let got = first_match("$OUT = $F($$$ARGS)", "y = g(a, b=1)\n").unwrap();
    assert_eq!(
        got,
        [
            ("OUT".into(), "y".into()),
            ("F".into(), "g".into()),
            ("ARGS".into(), "a, b=1".into())
        ]
    );
}

#[test]
fn keywords_match_in_any_order() {
    assert!(first_match("f($$$, use_cache=$V, $$$)", "f(x, use_cache=u, z=2)\n").is_some());
    assert!(first_match("f($$$, use_cache=$V, $$$)", "f(x, z=2)\n").is_none());
    assert!(first_match("f(b=$B, a=$A)", "f(a=1, b=2)\n").is_some());
    assert!(first_match("f(a=$A)", "f(a=1, b=2)\n").is_none());
}

#[test]
fn repeated_metavariables_must_bind_equal_text() {
    assert!(first_match("$X = $X + 1", "a = a + 1\n").is_some());
    assert!(first_match("$X = $X + 1", "a = b + 1\n").is_none());
}

#[test]
fn operators_and_comments() {
    assert!(first_match("$A + $B", "x = a - b\n").is_none());
    assert!(first_match("f($A, $B)", "f(a,  # note\n  b,)\n").is_some());
}
