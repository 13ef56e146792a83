use serde::Deserialize;

use super::format;

/// Every document of `text` as values.
fn values(text: &str) -> Vec<serde_yaml::Value> {
    serde_yaml::Deserializer::from_str(text)
        .map(|d| serde_yaml::Value::deserialize(d).unwrap())
        .collect()
}

/// `text` laid out, having checked that the result reads as the same values and is laid out
/// already.
fn laid_out(text: &str) -> String {
    let out = format(text).unwrap_or_else(|reason| panic!("declined: {reason}\n{text}"));
    assert_eq!(values(&out), values(text), "{out}");
    assert_eq!(format(&out).unwrap(), out, "not a fixed point");
    out
}

#[test]
fn a_list_of_rules_keeps_its_shape_order_quoting_and_comments() {
    let text = "\n\n# header   \n\n# first\n- match:   \"f($X)\"     # the call\n  id: a\n  \
                imports: [\"import torch\"]\n  action:\n      # why\n      replace: >-\n          \
                g($X,\n            y)\n  tests:\n      -   name: one\n          before: |\n              \
                f(1)\n\n              f(2)\n          # after\n\n\n\n# second\n-   id: b\n    \
                description: A long\n      sentence.\n    match: 'f($X)'\n    where:\n        \
                X: { kind: [integer, identifier] }\n    action: {replace:   'h($X)'}\n# end\n";
    assert_eq!(
        laid_out(text),
        "# header\n\n# first\n- match: \"f($X)\"     # the call\n  id: a\n  imports: \
         [\"import torch\"]\n  action:\n    # why\n    replace: >-\n      g($X,\n        y)\n  \
         tests:\n    - name: one\n      before: |\n        f(1)\n\n        f(2)\n      # after\n\n\
         # second\n- id: b\n  description: A long\n    sentence.\n  match: 'f($X)'\n  where:\n    \
         X: {kind: [integer, identifier]}\n  action: {replace: 'h($X)'}\n# end\n"
    );
}

#[test]
fn documents_keep_their_markers_and_the_comments_around_them() {
    let text = "# top\nid: a\nmatch: f($X)\n# end of a\n---   # b follows\n# about b\nid: b\n\
                match: g($X)\n...\n";
    assert_eq!(laid_out(text), text);
}

#[test]
fn a_list_under_a_key_keeps_its_dashes_where_they_were() {
    let text = "a:\n- x\n- y\nb:\n    - x\n    - - n\n      - m\nc:\nd: {}\n";
    assert_eq!(
        laid_out(text),
        "a:\n- x\n- y\nb:\n  - x\n  - - n\n    - m\nc:\nd: {}\n"
    );
}

#[test]
fn a_comment_after_a_flow_collection_stays_on_its_line() {
    let text = "- id: a\n  action: {replace: \"g($X)\"}   # g\n  files: [a, b]  # two\n";
    assert_eq!(laid_out(text), text);
}

#[test]
fn comments_stay_in_the_block_they_were_indented_into() {
    let text = "inside:\n  class: X\n  # still inside\n# above match\nmatch: y\n";
    assert_eq!(laid_out(text), text);
}

#[test]
fn a_flow_collection_over_several_lines_keeps_its_lines() {
    let text = "- id: a\n  files: [\n      \"a.py\",  # first\n      \"b.py\",\n    ]\n";
    assert_eq!(
        laid_out(text),
        "- id: a\n  files: [\n      \"a.py\",  # first\n      \"b.py\",\n    ]\n"
    );
    // A flow collection whose items are not all plain values stays as written.
    assert_eq!(laid_out("a: [b: c, d]\n"), "a: [b: c, d]\n");
}

#[test]
fn a_block_scalar_keeps_its_content_to_the_last_space() {
    let text = "a: |\n    x  \n      y\n\n    z\nb: |-\n  \nc: 1\n";
    assert_eq!(laid_out(text), "a: |\n  x  \n    y\n\n  z\nb: |-\n\nc: 1\n");
}

#[test]
fn line_ends_and_trailing_space_are_layout() {
    assert_eq!(
        laid_out("a: x  \r\nb: |\r\n  y\r\nc: 1"),
        "a: x\nb: |\n  y\nc: 1\n"
    );
}

#[test]
fn what_it_cannot_lay_out_as_written_is_declined_with_the_reason() {
    for (text, reason) in [
        ("base: &b {x: 1}\nother: *b\n", "anchor"),
        ("? a\n: b\n", "`?`"),
        ("a: |+\n  x\n\nb: 1\n", "`+`"),
        ("a: |2\n   x\n", "indentation indicator"),
        ("-   # why\n  id: a\n", "comment"),
        ("a: !!map {x: 1}\n", "tag"),
        ("%YAML 1.2\n---\na: 1\n", "directive"),
    ] {
        let declined = format(text).expect_err(text);
        assert!(declined.contains(reason), "{text}: {declined}");
    }
}

#[test]
fn aliases_and_anchored_or_tagged_scalars_are_kept() {
    let text = "a: &x one\nb: *x\nc: !!str 5\n";
    assert_eq!(laid_out(text), text);
}
