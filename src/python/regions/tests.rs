//! Tests of the parent module.

use super::*;

/// Every occurrence of `needle` as an anchor.
fn at<'a>(text: &str, needle: &str) -> Anchor<'a> {
    Anchor {
        offsets: text.match_indices(needle).map(|(i, _)| i).collect(),
        also: Vec::new(),
        assignment: None,
    }
}

/// The shape of an assignment pattern with punctuation `tokens` ending in `closes_with`.
fn shape(tokens: &str, closes_with: Option<u8>) -> AssignmentShape {
    AssignmentShape {
        punctuation: punctuation(tokens),
        closes_with,
    }
}

/// The regions of the assignment statements of `shape` in `text`, as texts.
fn assignment_texts(text: &str, shape: AssignmentShape) -> Vec<&str> {
    statement_regions(text, &[], &[shape])
        .expect("scannable")
        .into_iter()
        .map(|r| &text[r])
        .collect()
}

fn region_texts<'t>(text: &'t str, needle: &str) -> Vec<&'t str> {
    statement_regions(text, &[at(text, needle)], &[])
        .expect("scannable")
        .into_iter()
        .map(|r| &text[r])
        .collect()
}

#[test]
fn a_simple_statement_is_its_logical_line() {
    let text = "a = 1\nb = call(\n    x,  # ) not a bracket\n    \"str ( \",\n)\nc = 3\n";
    assert_eq!(
        region_texts(text, "call"),
        ["b = call(\n    x,  # ) not a bracket\n    \"str ( \",\n)\n"]
    );
}

#[test]
fn a_header_takes_its_first_statement_and_a_clause_the_whole_statement() {
    let text = "def f():\n    if key(x):\n        a = 1\n        b = 2\n\n    # note\n    elif y:\n        b = 2\n    else:\n        c = 3\n    d = 4\n";
    assert_eq!(
        region_texts(text, "key"),
        ["    if key(x):\n        a = 1\n"]
    );
    // From a clause, the statement up to it, which is the whole statement here.
    let text2 = text
        .replace("elif y", "elif key(y)")
        .replace("if key(x)", "if x");
    assert_eq!(
        region_texts(&text2, "key"),
        [
            "    if x:\n        a = 1\n        b = 2\n\n    # note\n    elif key(y):\n        b = 2\n    else:\n        c = 3\n"
        ]
    );
    // A nested header's first statement, past decorators; a `try` needs its clauses.
    let text3 = "class K(key):\n    @p\n    def g(self):\n        return 1\n    x = 2\n";
    assert_eq!(
        region_texts(text3, "key"),
        ["class K(key):\n    @p\n    def g(self):\n        return 1\n"]
    );
    let text4 = "try:\n    key()\nexcept E:\n    pass\nz = 1\n";
    assert_eq!(
        region_texts(text4, "try"),
        ["try:\n    key()\nexcept E:\n    pass\n"]
    );
}

#[test]
fn decorators_belong_to_their_definition() {
    let text = "x = 0\n@first\n@second(key)\ndef f():\n    return 1\n    return 2\ny = 2\n";
    assert_eq!(
        region_texts(text, "key"),
        ["@first\n@second(key)\ndef f():\n    return 1\n"]
    );
}

#[test]
fn strings_hide_brackets_comments_and_line_ends() {
    let statements = [
        "a = '''\nkey = (\n'''\n",
        "b = r'\\' key'\n",
        "c = f\"{d[\"k\"]:>{width}} key {{\"\n",
        "e = key\n",
    ];
    // Blank lines between the statements keep their regions apart.
    let text = statements.join("\n");
    assert_eq!(region_texts(&text, "key"), statements);
}

#[test]
fn assignments_are_found_without_anchors() {
    let text = concat!(
        "import x\n",
        "a = f(1)\n",
        "if a == b:\n",
        "    c[0] += 1\n",
        "\n",
        "    d: int = g(h=2)\n",
        "f(k=3)\n",
        "\n",
        "while (n := 1) >= 0: m = 4\n",
    );
    assert_eq!(
        assignment_texts(text, shape("=", None)),
        [
            "a = f(1)\n",
            "    d: int = g(h=2)\n",
            "while (n := 1) >= 0: m = 4\n"
        ]
    );
}

#[test]
fn an_assignment_pattern_ending_in_a_bracket_wants_lines_ending_in_it() {
    let text = concat!(
        "a = f(1)  # a comment after\n",
        "b = f(1)[0]\n",
        "c = f(1) + g\n",
        "d = f(\n    1,\n)\n",
        "e = x, f(1),\n",
        "g = f(1); h = 2\n",
        "i = f(1) \\\n    .j\n",
        "if k: m = f(1)\n",
    );
    assert_eq!(
        assignment_texts(text, shape("=()", Some(b')'))),
        [
            "a = f(1)  # a comment after\n",
            // Touching statements merge. A trailing comma is passed over by matching; `;`
            // splits statements.
            "d = f(\n    1,\n)\ne = x, f(1),\ng = f(1); h = 2\n",
            "if k: m = f(1)\n",
        ]
    );
}

#[test]
fn continuations_and_comments() {
    let text = "x = 1 + \\\n    key\n# key in a comment\ny = 2\n";
    assert_eq!(region_texts(text, "key"), ["x = 1 + \\\n    key\n"]);
}

#[test]
fn lines_tree_sitter_would_join_are_left_to_the_whole_parse() {
    for text in [
        "x = a.\ny = f(1)\n",
        "x = a and\ny = f(1)\n",
        "x = a\n.b\n",
        "x = a\nor b\n",
    ] {
        assert_eq!(
            statement_regions(text, &[at(text, "x")], &[]),
            None,
            "{text:?}"
        );
    }
    // Their valid neighbours are not.
    for text in [
        "from m import *\n",
        "x = 1,\n",
        "def f():\n    ...\n",
        "x = ...\n",
        "x = 'a.'\n",
        "x = a  # and\n",
    ] {
        assert!(
            statement_regions(text, &[at(text, "x")], &[]).is_some(),
            "{text:?}"
        );
    }
}

#[test]
fn a_text_may_start_with_an_equals_sign() {
    // Not Python, so left to the whole parse; but no panic.
    assert_eq!(
        statement_regions("=x\n", &[at("=x\n", "x")], &[shape("=", None)]),
        None
    );
}

#[test]
fn an_anchor_counts_only_on_lines_holding_the_other_literals() {
    let text = "a = self.mlp(h)\nb = mlp(h)\nc = [self,\n     mlp]\n";
    let anchor = Anchor {
        offsets: text.match_indices("mlp").map(|(i, _)| i).collect(),
        also: vec!["self"],
        assignment: None,
    };
    let regions: Vec<&str> = statement_regions(text, &[anchor], &[])
        .unwrap()
        .into_iter()
        .map(|r| &text[r])
        .collect();
    assert_eq!(regions, ["a = self.mlp(h)\n", "c = [self,\n     mlp]\n"]);
}

#[test]
fn deep_fstring_nesting_gives_up() {
    let mut text = String::from("x = ");
    for _ in 0..100 {
        text.push_str("f'{");
    }
    assert!(statement_regions(&text, &[at(&text, "x")], &[]).is_none());
}

#[test]
fn top_level_statements_are_whole_with_decorators_clauses_and_continued_lines() {
    let text = "import a\n\n@dec(\n  1)\nclass C:\n    x = 1\n# note\n    def f(self):\n        s = '''\nnot top\n'''\n\nif x:\n    pass\nelse:\n    pass\ny = (1,\n2)\n";
    let got: Vec<&str> = top_level_statements(text)
        .expect("scannable")
        .into_iter()
        .map(|r| &text[r])
        .collect();
    assert_eq!(
        got,
        [
            "import a\n",
            "@dec(\n  1)\nclass C:\n    x = 1\n# note\n    def f(self):\n        s = '''\nnot top\n'''\n",
            "if x:\n    pass\nelse:\n    pass\n",
            "y = (1,\n2)\n",
        ]
    );
    // Each parses alone, with the whole file's offsets, as the file's own statements.
    let statements = top_level_statements(text).expect("scannable");
    let tree = crate::python::parse_regions(text, &statements).expect("parses");
    assert_eq!(tree.root_node().named_child_count(), 4);
}

#[test]
fn a_top_level_definition_says_the_name_it_binds() {
    let text = "@dec(\n  1)\nclass C(B):\n    pass\nasync  def f():\n    pass\nx = 1\nif y:\n    def g(): pass\n";
    let names: Vec<Option<&str>> = top_level_definitions(text)
        .expect("scannable")
        .into_iter()
        .map(|s| s.defines.map(|r| &text[r]))
        .collect();
    assert_eq!(names, [Some("C"), Some("f"), None, None]);
}

#[test]
fn text_whose_indentation_cpython_measures_otherwise_is_not_scanned() {
    // After a form feed CPython counts columns from 0; a line opening with a backslash takes the
    // indentation of the line it continues onto; a byte-order mark is not code.
    for text in [
        "class A:\n    pass\n    \x0cclass B:\n        pass\n",
        "class A:\n    x = 1\n\\\n    y = 2\n",
        "\u{feff}@dec\nclass A:\n    pass\n",
    ] {
        assert_eq!(top_level_statements(text), None, "{text:?}");
    }
    // A form feed alone on its line (a page break) is blank, as to CPython.
    assert_eq!(
        top_level_statements("x = 1\n\x0c\ny = 2\n").map(|s| s.len()),
        Some(2)
    );
}
