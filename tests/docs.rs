//! The documentation site: its generated pages are up to date, every example in it loads, and
//! the guides' worked examples do what they say (`<!-- doc-test: NAME rule|before PATH|after -->`
//! before a fenced block: the rule applied to the `before` block gives the `after` block).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::util::{regraft, root, text};

/// Every Markdown page of the site's source, with its text.
fn pages() -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root().join("docs/src")];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                let text = fs::read_to_string(&path).unwrap();
                out.push((path, text));
            }
        }
    }
    out.sort();
    out
}

/// The fenced blocks of a page: (info string, body, the `doc-test` marker just above it).
fn blocks(page: &str) -> Vec<(String, String, Option<String>)> {
    let mut out = Vec::new();
    let mut lines = page.lines().peekable();
    let mut marker = None;
    while let Some(line) = lines.next() {
        if let Some(m) = line
            .strip_prefix("<!-- doc-test: ")
            .and_then(|m| m.strip_suffix(" -->"))
        {
            marker = Some(m.to_string());
            continue;
        }
        let Some(info) = line.strip_prefix("```") else {
            if !line.trim().is_empty() {
                marker = None;
            }
            continue;
        };
        let mut body = String::new();
        for inner in lines.by_ref() {
            if inner.starts_with("```") {
                break;
            }
            body.push_str(inner);
            body.push('\n');
        }
        out.push((info.trim().to_string(), body, marker.take()));
    }
    out
}

#[test]
fn the_generated_pages_are_up_to_date() {
    let out = regraft(&["docs", "--check"], root());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// A rule file of `example`: each document given an id and a pattern where it has none.
fn as_rules(example: &str) -> String {
    let docs: Vec<String> = example
        .split("\n---\n")
        .enumerate()
        .map(|(i, doc)| {
            let mut doc = doc.trim_end().to_string();
            if !doc.lines().any(|l| l.starts_with("id:")) {
                doc = format!("id: example-{i}\n{doc}");
            }
            if !doc.lines().any(|l| l.starts_with("match:")) {
                doc.push_str("\nmatch: \"f($X)\"");
            }
            doc + "\n"
        })
        .collect();
    docs.join("---\n")
}

fn lint_clean(rules: &str, what: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("example.yaml");
    fs::write(&file, rules).unwrap();
    let out = regraft(&["lint", "-r", file.to_str().unwrap()], dir.path());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{what} does not load:\n{rules}\n{}",
        text(&out.stderr)
    );
}

#[test]
fn every_reference_example_loads() {
    for entry in regraft::rules::reference::entries() {
        lint_clean(
            &as_rules(&entry.example),
            &format!("the example of `{}`", entry.name()),
        );
    }
}

#[test]
fn every_rule_in_the_site_loads() {
    let mut seen = 0;
    for (path, page) in pages() {
        for (info, body, _) in blocks(&page) {
            // A rule shown in part (`...`) is not one to load.
            let whole = !body.lines().any(|l| l.trim() == "...");
            if info == "yaml" && whole && body.lines().any(|l| l.starts_with("id:")) {
                lint_clean(&as_rules(&body), &format!("a rule in {}", path.display()));
                seen += 1;
            }
        }
    }
    assert!(seen >= 8, "only {seen} rules found in the site");
}

/// One worked example: its rule, its input and where it lies, its output.
#[derive(Default)]
struct Worked {
    rule: Option<String>,
    before: Option<(String, String)>,
    after: Option<String>,
}

#[test]
fn the_guides_worked_examples_give_what_they_show() {
    let mut worked: BTreeMap<String, Worked> = BTreeMap::new();
    for (path, page) in pages() {
        for (_, body, marker) in blocks(&page) {
            let Some(marker) = marker else { continue };
            let mut words = marker.split_whitespace();
            let (name, role) = (words.next().unwrap(), words.next().unwrap_or(""));
            let w = worked
                .entry(format!("{}: {name}", path.display()))
                .or_default();
            match role {
                "rule" => w.rule = Some(body),
                "before" => w.before = Some((words.next().expect("a path").into(), body)),
                "after" => w.after = Some(body),
                other => panic!("{}: unknown doc-test role `{other}`", path.display()),
            }
        }
    }
    assert!(worked.len() >= 2, "the guides lost their worked examples");
    for (name, w) in worked {
        let (Some(rule), Some((at, before)), Some(after)) = (w.rule, w.before, w.after) else {
            panic!("{name}: a doc-test needs a rule, a before and an after block");
        };
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join(&at);
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        fs::write(&target, &before).unwrap();
        fs::write(dir.path().join("rule.yaml"), &rule).unwrap();
        let out = regraft(&["apply", "-q", "-r", "rule.yaml", &at], dir.path());
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        assert_eq!(
            text(&out.stdout),
            after,
            "{name}: the output differs from the page's"
        );
    }
}

#[test]
fn the_readme_links_only_to_what_exists() {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        readme.split_whitespace().count() < 1200,
        "the README is a front door: the manual is docs/"
    );
    for link in readme.split("](").skip(1) {
        let target = link.split(')').next().unwrap();
        if target.starts_with("http") || target.starts_with('#') {
            continue;
        }
        let file = target.split('#').next().unwrap();
        assert!(
            Path::new(root()).join(file).exists(),
            "README links to {target}, which is not there"
        );
    }
}
