//! The house keeps its shape: every module imports only from floors below its own (or from
//! within its own room), no source file grows past 600 lines and no function past 80.

use std::fs;
use std::path::{Path, PathBuf};

use crate::util::root;

/// The floors, lowest first; a room (a top-level module of `src/`) may import from rooms on
/// lower floors only. `actions` sits below `compile`, which reads each action's facts.
const FLOORS: &[&[&str]] = &[
    &["source", "edit", "prefilter", "progress"],
    &["python", "targets", "modules", "fetch", "write", "config"],
    &["rules"],
    &["versions", "pattern", "reach"],
    &["actions"],
    &["compile"],
    &["engine"],
    &["error"],
    &["lint", "testing", "matrix"],
    &["report", "lsp"],
    &["cli"],
    // The Python module's `regraft` console script runs the command line.
    &["pyapi"],
];

fn floor_of(room: &str) -> Option<usize> {
    FLOORS.iter().position(|rooms| rooms.contains(&room))
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The room a source file belongs to: its top-level module under `src/`.
fn room(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative.components().next().unwrap().as_os_str();
    first.to_string_lossy().trim_end_matches(".rs").to_string()
}

/// A source file's code: its unit tests and comment lines left out.
fn code_of(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or(text);
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The rooms a file's code names through `crate::` paths (in `use` lines, braces and inline
/// paths alike, comment lines and unit tests aside); `crate::Error` is the `error` room's
/// re-export.
fn imported_rooms(text: &str) -> Vec<String> {
    let code = code_of(text);
    let mut rooms = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            group[..end].split(',').collect()
        } else {
            vec![rest]
        };
        for name in names {
            let name = name.trim();
            let end = name
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(name.len());
            let room = match &name[..end] {
                "Error" => "error",
                other => other,
            };
            if !room.is_empty() {
                rooms.push(room.to_string());
            }
        }
    }
    rooms
}

#[test]
fn every_import_goes_down_a_floor() {
    let src = root().join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut wrong = Vec::new();
    for file in &files {
        let own = room(&src, file);
        // Unit tests may drive their code through the floors above it.
        let is_tests = file.file_name().is_some_and(|n| n == "tests.rs");
        if own == "lib" || own == "main" || is_tests {
            continue;
        }
        let own_floor =
            floor_of(&own).unwrap_or_else(|| panic!("{own} is on no floor: add it to FLOORS"));
        for imported in imported_rooms(&fs::read_to_string(file).unwrap()) {
            if imported == own {
                continue;
            }
            let floor = floor_of(&imported).unwrap_or_else(|| {
                panic!("{}: `crate::{imported}` is on no floor", file.display())
            });
            if floor >= own_floor {
                wrong.push(format!(
                    "{} (floor {own_floor}) imports crate::{imported} (floor {floor})",
                    file.strip_prefix(root()).unwrap().display()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports that go up or sideways:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_import_reader_sees_every_form() {
    let text = "use crate::{edit::Edit, rules::model};\n/// see crate::cli\nlet x = crate::engine::run();\nuse crate::Error;";
    assert_eq!(imported_rooms(text), ["edit", "rules", "engine", "error"]);
}

#[test]
fn no_source_file_over_600_lines_and_no_function_over_80() {
    let src = root().join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut wrong = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let name = file.strip_prefix(root()).unwrap().display().to_string();
        if lines.len() > 600 {
            wrong.push(format!("{name}: {} lines", lines.len()));
        }
        for (start, length) in functions(&lines) {
            if length > 80 {
                wrong.push(format!(
                    "{name}:{}: a function of {length} lines",
                    start + 1
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "too long:\n{}", wrong.join("\n"));
}

/// Where each function with a body starts and how many lines it spans, from its `fn` line to
/// the closing brace at the same indentation (the layout rustfmt gives).
fn functions(lines: &[&str]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let signature = [
            "fn ",
            "pub fn ",
            "pub(crate) fn ",
            "pub(super) fn ",
            "const fn ",
        ]
        .iter()
        .any(|p| trimmed.starts_with(p));
        if !signature || trimmed.ends_with(';') {
            continue;
        }
        let close = format!("{indent}}}");
        if let Some(end) = lines[i + 1..].iter().position(|l| *l == close) {
            out.push((i, end + 2));
        }
    }
    out
}

/// The module path of a source file under `src/` (`engine::step`; `engine` for its `mod.rs`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts
        .last()
        .is_some_and(|p| p == "mod" || p == "lib" || p == "main")
    {
        parts.pop();
    }
    parts
}

/// The modules of `known` that a file's code (comments and unit tests aside) names through
/// `crate::`, `super::` and `self::` paths, braces included; each path is read to the longest
/// prefix that is a module.
fn imported_modules(text: &str, own: &[String], known: &[Vec<String>]) -> Vec<Vec<String>> {
    let code = code_of(text);
    let is_name = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    for (at, _) in code.match_indices("::") {
        let head_start = code[..at].rfind(|c: char| !is_name(c)).map_or(0, |i| i + 1);
        let head = &code[head_start..at];
        let before = &code[..head_start];
        // Only the first segment of a path: `super::super::x` is read from its first `super`.
        if before.ends_with("::") || !matches!(head, "crate" | "super" | "self") {
            continue;
        }
        let mut base: Vec<String> = match head {
            "crate" => Vec::new(),
            _ => own.to_vec(),
        };
        let mut rest = &code[at + 2..];
        while let Some(r) = rest.strip_prefix("super::") {
            base.pop();
            rest = r;
        }
        if head == "super" {
            base.pop();
        }
        let tails: Vec<&str> = match rest.strip_prefix('{') {
            Some(group) => group[..group.find('}').unwrap_or(group.len())]
                .split(',')
                .collect(),
            None => vec![rest],
        };
        for tail in tails {
            let end = tail
                .trim()
                .find(|c: char| !(is_name(c) || c == ':'))
                .unwrap_or(tail.trim().len());
            let mut path = base.clone();
            path.extend(
                tail.trim()[..end]
                    .split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
            );
            while !path.is_empty() && !known.contains(&path) {
                path.pop();
            }
            // A module may always name its parents (their items) and its children.
            if !path.is_empty() && !own.starts_with(&path) && !path.starts_with(own) {
                out.push(path);
            }
        }
    }
    out
}

#[test]
fn no_two_modules_import_each_other() {
    let src = root().join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let modules: Vec<Vec<String>> = files.iter().map(|f| module_of(&src, f)).collect();
    let edges: Vec<Vec<usize>> = files
        .iter()
        .zip(&modules)
        .map(|(file, own)| {
            let text = fs::read_to_string(file).unwrap();
            let mut to: Vec<usize> = imported_modules(&text, own, &modules)
                .iter()
                .filter_map(|m| modules.iter().position(|k| k == m))
                .collect();
            to.sort_unstable();
            to.dedup();
            to
        })
        .collect();
    // A circle exists where a module reaches itself again.
    let mut circles = Vec::new();
    for start in 0..modules.len() {
        let mut seen = vec![false; modules.len()];
        let mut stack: Vec<(usize, Vec<usize>)> = vec![(start, vec![start])];
        while let Some((at, path)) = stack.pop() {
            for &next in &edges[at] {
                if next == start {
                    let names: Vec<String> = path.iter().map(|&i| modules[i].join("::")).collect();
                    circles.push(format!(
                        "{} -> {}",
                        names.join(" -> "),
                        modules[start].join("::")
                    ));
                } else if !seen[next] {
                    seen[next] = true;
                    let mut longer = path.clone();
                    longer.push(next);
                    stack.push((next, longer));
                }
            }
        }
    }
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_module_reader_follows_super_and_braces() {
    let known: Vec<Vec<String>> = ["engine", "engine::step", "engine::verify", "edit"]
        .iter()
        .map(|m| m.split("::").map(str::to_string).collect())
        .collect();
    let own = &known[1];
    let text = "use super::verify::{apply};\nuse super::{Engine, verify};\nuse crate::edit::Edit;\n// super::nothing\n";
    let found = imported_modules(text, own, &known);
    let names: Vec<String> = found.iter().map(|m| m.join("::")).collect();
    assert_eq!(names, ["engine::verify", "engine::verify", "edit"]);
}
