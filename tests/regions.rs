//! The statement-region scan agrees with tree-sitter: around any offset, a parse of only the
//! regions holds the same innermost statement, with the same subtree up to the first block
//! after the offset (all a match there can reach), as a parse of the whole file; and every
//! region of a valid file parses cleanly (no fallback to a whole parse).
//! With `REGRAFT_REGION_TREE=DIR`, every `*.py` below DIR is checked too (e.g. transformers).

use std::fs;
use std::path::{Path, PathBuf};

use regraft::python;
use regraft::python::regions::{Anchor, AssignmentShape, punctuation, statement_regions};
use tree_sitter::Node;

/// The deepest node holding `offset` that is a statement (a child of a module or a block).
fn innermost_statement(root: Node<'_>, offset: usize) -> Option<Node<'_>> {
    let mut found = None;
    let mut node = root;
    while let Some(child) = node
        .children(&mut node.walk())
        .find(|c| c.start_byte() <= offset && offset < c.end_byte())
    {
        if matches!(node.kind(), "module" | "block") && child.kind() != "comment" {
            found = Some(child);
        }
        node = child;
    }
    found
}

/// A statement's shape up to `end`: every node below it but comments, by kind, start, number
/// of children and, for tokens, end. Two liberties of a region parse that no match (which
/// never holds a block) can see are left out: tree-sitter hangs a comment that follows a
/// region (outside it) on the region's last block, stretching the blocks around it; and a
/// later region indented deeper than the end of an earlier one joins that one's last block.
fn structure(statement: Node<'_>, end: usize) -> Vec<(u16, usize, usize, Option<usize>)> {
    let mut nodes = Vec::new();
    let mut cursor = statement.walk();
    let mut stack = vec![statement];
    while let Some(node) = stack.pop() {
        let children: Vec<Node<'_>> = node
            .children(&mut cursor)
            .filter(|c| c.kind() != "comment" && c.start_byte() < end)
            .collect();
        let token_end = children.is_empty().then(|| node.end_byte());
        nodes.push((node.kind_id(), node.start_byte(), children.len(), token_end));
        stack.extend(children.into_iter().rev());
    }
    nodes
}

/// Where the part of `statement` a match at `offset` could lie in ends: at the first block
/// that starts after it (a compound statement's body holds anchors of its own), else at the
/// statement's end.
fn header_end(statement: Node<'_>, offset: usize) -> usize {
    let mut end = statement.end_byte();
    let mut stack = vec![statement];
    while let Some(node) = stack.pop() {
        if node.kind() == "block" && node.start_byte() > offset {
            end = end.min(node.start_byte());
            continue;
        }
        stack.extend(node.children(&mut node.walk()));
    }
    end
}

/// Offsets of every named leaf (identifiers, numbers, string parts, …).
fn leaf_offsets(root: Node<'_>) -> Vec<usize> {
    let mut out = Vec::new();
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if node.child_count() == 0 && node.is_named() && node.kind() != "comment" {
            out.push(node.start_byte());
        }
        if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return out;
            }
        }
    }
}

/// Checks the offsets in groups of `group`: each group's regions parsed together.
fn check(path: &str, text: &str, stride: usize, group: usize) -> usize {
    let whole = python::parse(text);
    if whole.root_node().has_error() {
        return 0;
    }
    let offsets: Vec<usize> = leaf_offsets(whole.root_node())
        .into_iter()
        .step_by(stride)
        .collect();
    for chunk in offsets.chunks(group) {
        let regions = statement_regions(text, &[Anchor::at(chunk.to_vec())], &[])
            .unwrap_or_else(|| panic!("{path}: the scan gave up on a valid file"));
        let tree = python::parse_regions(text, &regions).unwrap_or_else(|| {
            panic!("{path}: regions {regions:?} around {chunk:?} do not parse cleanly")
        });
        for &offset in chunk {
            let Some(expected) = innermost_statement(whole.root_node(), offset) else {
                continue;
            };
            let end = header_end(expected, offset);
            let got = innermost_statement(tree.root_node(), offset).map(|n| structure(n, end));
            let expected = structure(expected, end);
            if got.as_ref() != Some(&expected) {
                let got = got.unwrap_or_default();
                let at = (0..expected.len().max(got.len()))
                    .find(|&i| expected.get(i) != got.get(i))
                    .unwrap_or(0);
                let byte = expected.get(at).or(got.get(at)).map_or(offset, |n| n.1);
                panic!(
                    "{path}: the statement around byte {offset} differs at node {at}: whole \
                     parse {:?}, regions {:?}, text {:?}",
                    expected.get(at),
                    got.get(at),
                    &text[byte..(byte + 60).min(text.len())]
                );
            }
        }
    }
    offsets.len()
}

/// Checks the assignment scan: every statement of the whole parse that assigns with `=` (and,
/// given `closes_with`, ends with that bracket but for trailing commas, as any match of a
/// pattern ending in it does) is in the regions, with the same shape.
fn check_assignments(path: &str, text: &str, closes_with: Option<u8>) -> usize {
    let whole = python::parse(text);
    if whole.root_node().has_error() {
        return 0;
    }
    let shape = AssignmentShape {
        punctuation: punctuation("="),
        closes_with,
    };
    let regions = statement_regions(text, &[], &[shape])
        .unwrap_or_else(|| panic!("{path}: the scan gave up on a valid file"));
    let tree = python::parse_regions(text, &regions)
        .unwrap_or_else(|| panic!("{path}: the assignment regions do not parse cleanly"));
    let mut checked = 0;
    let mut cursor = whole.root_node().walk();
    loop {
        let node = cursor.node();
        // Assignments with `=` (not bare annotations such as `x: int`).
        let assigns = |n: Node<'_>| {
            n.kind() == "assignment" && n.children(&mut n.walk()).any(|c| c.kind() == "=")
        };
        let ends_as_wanted = || {
            closes_with.is_none_or(|b| {
                text[node.byte_range()]
                    .trim_end_matches(|c: char| c == ',' || c.is_whitespace())
                    .ends_with(char::from(b))
            })
        };
        if node.kind() == "expression_statement"
            && node.named_child(0).is_some_and(assigns)
            && ends_as_wanted()
        {
            let end = node.end_byte();
            // A one-line compound statement holding the assignment comes whole.
            let shape =
                |root| innermost_statement(root, node.start_byte()).map(|n| structure(n, end));
            assert_eq!(
                shape(tree.root_node()),
                shape(whole.root_node()),
                "{path}: the assignment at byte {} ({:?})",
                node.start_byte(),
                &text[node.byte_range()].lines().next()
            );
            checked += 1;
        }
        if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return checked;
            }
        }
    }
}

fn fixture() -> String {
    fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/regions/layout.py"),
    )
    .unwrap()
}

#[test]
fn each_statement_alone_parses_as_in_the_whole_file() {
    let text = fixture();
    let checked = check("layout.py", &text, 1, 1);
    assert!(checked > 150, "{checked}");
}

#[test]
fn many_regions_parse_together_as_in_the_whole_file() {
    let text = fixture();
    for group in [2, 3, 7, 1000] {
        check("layout.py", &text, 1, group);
    }
}

#[test]
fn every_assignment_is_found_by_the_assignment_scan() {
    let text = fixture();
    let checked = check_assignments("layout.py", &text, None);
    assert!(checked >= 15, "{checked}");
    check_assignments("layout-crlf.py", &text.replace('\n', "\r\n"), None);
    // Those ending in a bracket, for a pattern ending in one.
    for (end, at_least) in [(b')', 8), (b']', 1)] {
        let checked = check_assignments("layout.py", &text, Some(end));
        assert!(checked >= at_least, "{} {checked}", char::from(end));
        let crlf = text.replace('\n', "\r\n");
        assert_eq!(
            check_assignments("layout-crlf.py", &crlf, Some(end)),
            checked
        );
    }
}

#[test]
fn windows_line_ends_change_nothing() {
    let text = fixture().replace('\n', "\r\n");
    check("layout-crlf.py", &text, 1, 1);
    check("layout-crlf.py", &text, 1, 5);
}

#[test]
fn the_fixture_statements_are_not_the_whole_file() {
    // The regions around one call are that call's statement: a scan that took whole files
    // would pass the checks above while saving nothing.
    let text = fixture();
    let at = text.find("out = decoder_layer(hidden_states)").unwrap();
    let regions = statement_regions(&text, &[Anchor::at(vec![at])], &[]).unwrap();
    assert_eq!(
        regions.iter().map(|r| &text[r.clone()]).collect::<Vec<_>>(),
        ["            out = decoder_layer(hidden_states)\n"]
    );
}

#[test]
fn a_tree_from_the_environment() {
    let Ok(dir) = std::env::var("REGRAFT_REGION_TREE") else {
        return;
    };
    let mut stack = vec![PathBuf::from(dir)];
    let (mut files, mut offsets, mut assignments) = (0, 0, 0);
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "py")
                && let Ok(text) = fs::read_to_string(&path)
            {
                let name = path.display().to_string();
                offsets += check(&name, &text, 41, 8);
                assignments += check_assignments(&name, &text, None);
                check_assignments(&name, &text, Some(b')'));
                files += 1;
            }
        }
    }
    eprintln!("checked {offsets} offsets and {assignments} assignments in {files} files");
}

/// The named case of reliability round 5: an assignment pattern in the one-line body of a
/// clause after an indented block was missed on the statement-local path, exit 0, while the
/// same rule scoped to the function (a whole parse) patched it.
#[test]
fn one_line_bodies_of_continuation_clauses_are_matched_on_both_paths() {
    use crate::util::{regraft, text};
    let source = "def f(a):\n    try:\n        x = 1\n    except ValueError: y = g(5, a)\n    finally: y = g(7, a)\n    if a:\n        pass\n    elif a: y = g(2, a)\n    else: y = g(3, a)\n    for i in a:\n        pass\n    else: y = g(4, a)\n    while a:\n        pass\n    else: y = g(6, a)\n    if a: pass\n    else: y = g(8, a)\n    try: y = g(1, a)\n    except* E: y = g(9, a)\n    return y\n";
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("t.py"), source).unwrap();
    let mut outputs = Vec::new();
    for scope in ["", "inside: {function: f}\n"] {
        fs::write(
            dir.path().join("r.yaml"),
            format!("id: swap\n{scope}match: '$Y = g($S, $A)'\naction:\n  replace: '$Y = h($A, $S)'\nexpect: 9\n"),
        )
        .unwrap();
        let out = regraft(&["apply", "--diff", "-r", "r.yaml", "t.py"], dir.path());
        assert_eq!(out.status.code(), Some(0), "{scope}{}", text(&out.stderr));
        let diff = text(&out.stdout);
        assert_eq!(diff.matches("= h(a, ").count(), 9, "{scope}{diff}");
        outputs.push(diff);
    }
    assert_eq!(outputs[0], outputs[1]);
}
