//! `edit_string`: a regex on a string literal's value, written back in its own quotes.

use crate::util::{patch, render, rules, versions, words};

fn run(rule: &str, source: &str) -> Result<String, String> {
    let set = rules(rule);
    match patch(&set, &versions(&[]), "m.py", source) {
        Ok(out) => {
            let again = patch(&set, &versions(&[]), "m.py", &out.output).unwrap();
            assert_eq!(again.output, out.output, "not a fixed point");
            Ok(out.output)
        }
        Err(e) => Err(words(&render(&e))),
    }
}

#[test]
fn a_docstring_line_is_rewritten_in_its_own_quotes() {
    let rule = "id: r\nmatch: |\n  def forward($$$P):\n      $DOC\n      $$$B\naction: {edit_string: {of: $DOC, regex: '(?m)^(\\s*)Args:$', by: '${1}Arguments:'}}\n";
    let source = "def forward(x):\n    \"\"\"Run.\n\n    Args:\n        x: it's \\\"x\\\"\n    \"\"\"\n    return x\n";
    assert_eq!(
        run(rule, source).unwrap(),
        "def forward(x):\n    \"\"\"Run.\n\n    Arguments:\n        x: it's \"x\"\n    \"\"\"\n    return x\n",
        "escapes elsewhere in the string are written in one way: the value is what counts"
    );
}

#[test]
fn a_value_is_what_python_reads_and_is_quoted_back() {
    let rule = "id: r\nmatch: 'attn_implementation = $S'\naction: {edit_string: {of: $S, regex: '^eager$', by: \"it's sdpa\"}}\n";
    assert_eq!(
        run(rule, "attn_implementation = 'eager'\n").unwrap(),
        "attn_implementation = 'it\\'s sdpa'\n"
    );
    // Groups of the regex, not metavariables, in `by`.
    let rule = "id: r\nmatch: 'warn($S)'\naction: {edit_string: {of: $S, regex: '(\\w+)` is deprecated', by: '${1}` is removed'}}\n";
    assert_eq!(
        run(rule, "warn(\"`foo` is deprecated\")\n").unwrap(),
        "warn(\"`foo` is removed\")\n"
    );
}

#[test]
fn what_cannot_be_rewritten_is_refused_at_the_string() {
    let rule = |of: &str| {
        format!(
            "id: r\nmatch: 'warn($S)'\naction: {{edit_string: {{of: {of}, regex: 'a', by: 'b'}}}}\n"
        )
    };
    for (source, says) in [
        ("warn(f\"a{x}\")\n", "not text whose value can be rewritten"),
        ("warn(b\"a\")\n", "not text whose value can be rewritten"),
        ("warn(\"a\" \"c\")\n", "edits one string literal"),
        ("warn(x)\n", "edits one string literal"),
    ] {
        let e = run(&rule("$S"), source).unwrap_err();
        assert!(e.contains(says), "{source}: {e}");
    }
    let raw = "id: r\nmatch: 'warn($S)'\naction: {edit_string: {of: $S, regex: 'a', by: '\"'}}\n";
    let e = run(raw, "warn(r\"a\")\n").unwrap_err();
    assert!(e.contains("cannot be written as a raw"), "{e}");
    let bad = crate::util::rule_error(
        "id: r\nmatch: 'warn($S)'\naction: {edit_string: {of: $S, regex: '(', by: 'b'}}\n",
    );
    assert!(words(&bad).contains("not a regex"), "{bad}");
}

#[test]
fn comments_are_stripped_and_strings_kept() {
    let rule = "id: r\nmatch: 'def f($$$P): $$$B'\naction: {strip_comments: true}\n";
    let source = "def f(a,  # the a\n      b):\n    # why\n    x = a  # note\n    s = \"# not a comment\"\n    return x  # type: int\n\n\n# after\n";
    assert_eq!(
        run(rule, source).unwrap(),
        "def f(a,\n      b):\n    x = a\n    s = \"# not a comment\"\n    return x\n\n\n# after\n"
    );
    let keep =
        "id: r\nmatch: 'def f($$$P): $$$B'\naction: {strip_comments: {keep: '^# (type|noqa)'}}\n";
    assert_eq!(
        run(keep, "def f(a):\n    # why\n    return a  # type: int\n").unwrap(),
        "def f(a):\n    return a  # type: int\n"
    );
    let crlf = "def f(a):\r\n    # why\r\n    return a  # b\r\n";
    assert_eq!(run(rule, crlf).unwrap(), "def f(a):\r\n    return a\r\n");
}

#[test]
fn what_a_hostile_reading_found_in_edit_string() {
    // A CRLF file's docstring: its line breaks are `\n` to Python, and stay CRLF.
    let doc = "id: r\nmatch: |\n  def f():\n      $DOC\n      $$$B\naction: {edit_string: {of: $DOC, regex: 'old', by: 'new'}}\n";
    assert_eq!(
        run(doc, "def f():\r\n    \"\"\"Summary old.\r\n\r\n    Details.\r\n    \"\"\"\r\n    return 1\r\n").unwrap(),
        "def f():\r\n    \"\"\"Summary new.\r\n\r\n    Details.\r\n    \"\"\"\r\n    return 1\r\n"
    );
    // One of several literals side by side is not a value of its own.
    let piece = "id: r\nmatch: '$S'\nwhere: {S: {kind: string}}\naction: {edit_string: {regex: '^old$', by: 'new'}}\n";
    let e = run(piece, "z = \"old\" \"x\"\n").unwrap_err();
    assert!(e.contains("one of several written side by side"), "{e}");
    // A group the regex does not have is an error where the rule is read.
    let error = crate::util::rule_error(
        "id: r\nmatch: 'warn($S)'\naction: {edit_string: {of: $S, regex: 'X', by: 'cost $5'}}\n",
    );
    assert!(words(&error).contains("`$5` names no group"), "{error}");
    let escaped =
        "id: r\nmatch: 'warn($S)'\naction: {edit_string: {of: $S, regex: 'X', by: 'cost $$5'}}\n";
    assert_eq!(
        run(escaped, "warn(\"X\")\n").unwrap(),
        "warn(\"cost $5\")\n"
    );
}

#[test]
fn dropped_comments_go_when_a_block_becomes_pass() {
    let rule = "id: r\nmatch: 'foo($$$A)'\naction: {delete: {keep_comments: false}}\n";
    assert_eq!(
        run(rule, "def f():\n    foo(1)  # why\n").unwrap(),
        "def f():\n    pass\n"
    );
}
