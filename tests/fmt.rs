//! `regraft fmt`: a rule file round-trips as its author wrote it (a list stays a list, keys
//! keep their order, comments their place, only the layout is normalised), every shipped rule
//! file is a fixed point, `--canonical` writes the canonical form, and whatever fmt writes
//! reads as the very rules the file held.

use std::fs;
use std::path::{Path, PathBuf};

use regraft::rules::model::Rule;
use regraft::rules::{self, Syntax, write};

use crate::util::{regraft, render, root, text};

/// Every rule file shipped, under `rules/` and `examples/`.
fn shipped() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["rules", "examples"] {
        files.extend(rules::rule_files(&root().join(dir)).unwrap());
    }
    assert!(files.len() >= 8, "{files:?}");
    files
}

fn load(path: &Path) -> Vec<Rule> {
    rules::load_file(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_shipped_rule_file_is_a_fixed_point_of_fmt_as_written() {
    for path in shipped() {
        let original = fs::read_to_string(&path).unwrap();
        if Syntax::of(&path) == Some(Syntax::Yaml) {
            // Laid out as written, not written anew by the canonical fallback.
            assert_eq!(
                write::layout::format(&original).as_deref(),
                Ok(original.as_str()),
                "{}",
                path.display()
            );
        }
    }
    let out = regraft(&["fmt", "--check", "--diff", "rules", "examples"], root());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "no file fell back to the canonical form: {}",
        text(&out.stderr)
    );
}

#[test]
fn what_fmt_writes_reads_as_the_same_rules_in_either_mode() {
    let every_key = root().join("tests/fixtures/every-key.yaml");
    for path in shipped().into_iter().chain([every_key]) {
        let rules = load(&path);
        let syntax = Syntax::of(&path).unwrap();
        let name = path.display().to_string();
        let mut outputs = vec![
            ("--canonical", write::render_in_place(&rules, syntax)),
            (
                "the fallback",
                write::render_in_author_order(&rules, syntax),
            ),
        ];
        if syntax == Syntax::Yaml {
            let original = fs::read_to_string(&path).unwrap();
            outputs.push(("as written", write::layout::format(&original).unwrap()));
        }
        for (mode, output) in outputs {
            let read = rules::load_text(&name, &output, syntax)
                .unwrap_or_else(|e| panic!("{mode}: {name}: {}\n{output}", render(&e)));
            assert_eq!(read, rules, "{mode}: {name}\n{output}");
        }
    }
    // The command itself, in both modes, on a copy of every shipped file: what it writes (or
    // leaves, refusing to drop a comment) reads as the rules it read.
    for mode in [&["fmt"][..], &["fmt", "--canonical"]] {
        let dir = tempfile::tempdir().unwrap();
        let copies: Vec<(PathBuf, Vec<Rule>)> = shipped()
            .iter()
            .enumerate()
            .map(|(i, path)| {
                let name = format!("{i}-{}", path.file_name().unwrap().to_string_lossy());
                fs::copy(path, dir.path().join(&name)).unwrap();
                (dir.path().join(name), load(path))
            })
            .collect();
        let out = regraft(&[mode, &["."]].concat(), dir.path());
        assert!(
            matches!(out.status.code(), Some(0 | 2)),
            "{mode:?}: {}",
            text(&out.stderr)
        );
        for (copy, rules) in copies {
            assert_eq!(load(&copy), rules, "{mode:?}: {}", copy.display());
        }
    }
}

/// The shape of a hand-written file survives: the list, the author's key order, quoting,
/// flow style, comments above and after keys; indentation, spacing and blank lines are
/// normalised. `--canonical` writes one document per rule, keys in schema order.
#[test]
fn a_hand_written_list_keeps_its_shape_key_order_and_comments() {
    let dir = tempfile::tempdir().unwrap();
    let written = "# two rules\n- match:   \"f($X)\"   # the call\n  id: a\n  imports: [\"import torch\"]\n  action:\n      # why\n      replace: \"g($X)\"   \n\n\n-   id: b\n    match: h($X)\n    action: {delete:   true}\n";
    fs::write(dir.path().join("r.yaml"), written).unwrap();
    let check = regraft(&["fmt", "--check", "r.yaml"], dir.path());
    assert_eq!(check.status.code(), Some(1));
    assert_eq!(
        fs::read_to_string(dir.path().join("r.yaml")).unwrap(),
        written
    );
    let out = regraft(&["fmt", "r.yaml"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    assert_eq!(
        fs::read_to_string(dir.path().join("r.yaml")).unwrap(),
        "# two rules\n- match: \"f($X)\"   # the call\n  id: a\n  imports: [\"import torch\"]\n  action:\n    # why\n    replace: \"g($X)\"\n\n- id: b\n  match: h($X)\n  action: {delete: true}\n"
    );
    let again = regraft(&["fmt", "--check", "r.yaml"], dir.path());
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stdout));
    let canonical = regraft(
        &["fmt", "--canonical", "--check", "--diff", "r.yaml"],
        dir.path(),
    );
    assert_eq!(canonical.status.code(), Some(1));
    let diff = text(&canonical.stdout);
    assert!(
        diff.contains("+id: a\n") && diff.contains("+---\n") && diff.contains("+id: b\n"),
        "{diff}"
    );
}

/// A DSL file keeps its statements in the author's order; `--canonical` puts them in schema
/// order.
#[test]
fn a_dsl_file_keeps_the_order_of_its_statements() {
    let dir = tempfile::tempdir().unwrap();
    let written = "# lead\nrule a\n  match `f($X)`\n  replace `g($X)`\n  # the files\n  files [\"a.py\"]\n  description \"why\"\n";
    fs::write(dir.path().join("r.graft"), written).unwrap();
    let out = regraft(&["fmt", "r.graft"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        fs::read_to_string(dir.path().join("r.graft")).unwrap(),
        "# lead\nrule a\n  match `f($X)`\n  replace `g($X)`\n  # the files\n  files [a.py]\n  description \"why\"\n",
        "the DSL's own spelling (quotes only where needed), the author's order"
    );
    let out = regraft(&["fmt", "--canonical", "r.graft"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        fs::read_to_string(dir.path().join("r.graft")).unwrap(),
        "# lead\nrule a\n  description \"why\"\n  # the files\n  files [a.py]\n  match `f($X)`\n  replace `g($X)`\n"
    );
}

/// What the layout writer does not lay out as written (here an anchor on a mapping) is written
/// in the canonical form, saying why, and reads as the same rules.
#[test]
fn a_file_fmt_cannot_keep_as_written_is_written_canonically_saying_why() {
    let dir = tempfile::tempdir().unwrap();
    let written = "- id: a\n  match: f($X)\n  action: &fix {replace: g($X)}\n- id: b\n  match: h($X)\n  action: *fix\n";
    fs::write(dir.path().join("r.yaml"), written).unwrap();
    let before = load(&dir.path().join("r.yaml"));
    let out = regraft(&["fmt", "r.yaml"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("fmt cannot keep this file as written (an anchor"),
        "{}",
        text(&out.stderr)
    );
    let after = fs::read_to_string(dir.path().join("r.yaml")).unwrap();
    assert!(after.contains("---\n"), "{after}");
    assert_eq!(load(&dir.path().join("r.yaml")), before, "{after}");
}

/// A file that does not load is reported, and the other files are still formatted; under
/// `--rule-errors summary` (the pre-commit hook's) the report is one line.
#[test]
fn a_file_that_does_not_load_is_reported_and_the_others_formatted() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("rules")).unwrap();
    let broken = "id: r\nmach: \"f($X)\"\naction: {replace: \"g($X)\"}\n";
    fs::write(dir.path().join("rules/a.yaml"), broken).unwrap();
    fs::write(
        dir.path().join("rules/b.yaml"),
        "id:   s\nmatch: \"f($X)\"\naction: {replace: \"g($X)\"}\n",
    )
    .unwrap();
    let out = regraft(
        &["fmt", "--check", "--rule-errors", "summary", "rules"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "error: rules/a.yaml does not load: not formatted (`regraft lint rules/a.yaml` shows why)\n"
    );
    assert_eq!(text(&out.stdout), "would reformat rules/b.yaml\n");
    let out = regraft(&["fmt", "rules"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("unknown key `mach`"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("rules/b.yaml")).unwrap(),
        "id: s\nmatch: \"f($X)\"\naction: {replace: \"g($X)\"}\n"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("rules/a.yaml")).unwrap(),
        broken
    );
}
