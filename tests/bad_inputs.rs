//! The bad-input catalogue: every folder in `tests/bad_inputs/` is a case with its files, the
//! arguments to run (`args`), the expected exit code (`exit`), and a snapshot of what regraft
//! says on stderr. Some inputs are too large to keep and are generated here.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::regraft;

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0"))
}

/// Builds the inputs a case folder cannot hold.
fn generate(name: &str, dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    match name {
        "19-deep-nesting" => {
            let depth = 20_000;
            let text = format!(
                "x = {}1{}\nf(1, a=2)\n",
                "(".repeat(depth),
                ")".repeat(depth)
            );
            fs::write(dir.join("deep.py"), text).unwrap();
        }
        // A 1 MB scalar aliased 3,000 times: 3 GB once serde_yaml expands it.
        "47-yaml-large-alias-repeated" => {
            let mut text = format!(
                "id: bomb\ndescription: &a {}\nfiles:\n",
                "x".repeat(1 << 20)
            );
            text.push_str(&"  - *a\n".repeat(3_000));
            text.push_str("match: f($X)\naction: {remove_kwargs: [a]}\n");
            fs::write(dir.join("r.yaml"), text).unwrap();
        }
        // 20,000 nested flow lists: both YAML parsers take time quadratic in the depth.
        "48-yaml-deep-flow-nesting" => {
            let text = format!(
                "id: deep\nfiles: {}{}\nmatch: f($X)\naction: {{remove_kwargs: [a]}}\n",
                "[".repeat(20_000),
                "]".repeat(20_000)
            );
            fs::write(dir.join("r.yaml"), text).unwrap();
        }
        // tree-sitter gives up on it with "a bracket left open"; CPython's word is the limit.
        "49-three-thousand-nested-blocks" => {
            let mut text = String::new();
            for depth in 0..3_000 {
                text.push_str(&format!("{}if x:\n", " ".repeat(depth)));
            }
            text.push_str(&format!("{}f(1)\n", " ".repeat(3_000)));
            fs::write(dir.join("deep.py"), text).unwrap();
        }
        "20-fifty-thousand-arguments" => {
            let args: Vec<String> = (0..50_000).map(|i| format!("k{i}={i}")).collect();
            fs::write(dir.join("wide.py"), format!("f({})\n", args.join(", "))).unwrap();
        }
        "24-read-only-file-write" => {
            fs::set_permissions(dir.join("t.py"), fs::Permissions::from_mode(0o444)).unwrap();
        }
        "25-symlink-loop" => {
            std::os::unix::fs::symlink("..", dir.join("src/loop")).unwrap();
        }
        _ => {}
    }
}

/// Checks a case makes beyond its exit code and message.
fn check(name: &str, dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let read = |f: &str| fs::read(dir.join(f)).unwrap();
    match name {
        "18-target-syntax-error"
        | "36-unparseable-result"
        | "38-mixed-line-ends-target"
        | "40-duplicate-keyword-result"
        | "41-starred-target-result"
        | "42-too-many-nested-blocks"
        | "43-template-name-never-imported" => {
            let original = fs::read(case_dir(name).join("t.py")).unwrap();
            assert_eq!(
                read("t.py"),
                original,
                "{name}: the target must be left untouched"
            );
        }
        "21-crlf-target" => assert_eq!(
            read("t.py"),
            b"x = 1\r\nf(1, a=2)\r\ng(1)\r\nh(2)\r\ny = 2\r\n"
        ),
        // CPython reads a lone `\r` as a line end: the inserted lines end the same way.
        "37-cr-only-target" => {
            assert_eq!(read("t.py"), b"x = 1\rf(1, a=2)\rg(1)\rh(2)\ry = 2\r");
        }
        // A form feed resets the column count: the inserted lines take the indent after it.
        "39-form-feed-before-indent" => assert_eq!(
            read("t.py"),
            b"def k():\n\x0c    f(1, a=2)\n    g(1)\n    h(2)\n    return 1\n"
        ),
        "22-bom-target" => assert_eq!(read("t.py"), b"\xef\xbb\xbfx = 1\nf(1)\n"),
        "23-tabs-target" => assert_eq!(read("t.py"), b"if x:\n\tg(1)\n\tf(1, a=2)\n"),
        "24-read-only-file-write" => {
            assert_eq!(read("t.py"), b"f(1)\n");
            let mode = fs::metadata(dir.join("t.py")).unwrap().permissions().mode();
            assert_eq!(
                mode & 0o777,
                0o444,
                "the write keeps the file's permissions"
            );
        }
        _ => {}
    }
    let leftovers: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".regraft-")
        })
        .collect();
    assert!(
        leftovers.is_empty(),
        "{name}: temporary files left: {leftovers:?}"
    );
}

fn case_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/bad_inputs")
        .join(name)
}

#[test]
fn every_bad_input_gets_its_exit_code_and_message() {
    let _snapshots = crate::util::snapshots(module_path!());
    let mut names: Vec<String> =
        fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_inputs"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
    names.sort();
    assert!(names.len() >= 30, "the catalogue has {} cases", names.len());
    for name in &names {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path().join("case");
        copy_dir(&case_dir(name), &dir);
        generate(name, &dir);
        let args = fs::read_to_string(dir.join("args")).unwrap();
        let mut expected: i32 = fs::read_to_string(dir.join("exit"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        if name == "24-read-only-file-write" && !is_root() {
            expected = 2;
        }
        let out = regraft(&args.split_whitespace().collect::<Vec<_>>(), &dir);
        let stderr =
            String::from_utf8_lossy(&out.stderr).replace(&dir.display().to_string(), "<case>");
        assert_eq!(out.status.code(), Some(expected), "{name}:\n{stderr}");
        assert!(!stderr.contains("panicked"), "{name} panicked:\n{stderr}");
        if expected != 0 || name == "24-read-only-file-write" && !is_root() {
            assert!(!stderr.trim().is_empty(), "{name}: a failure must say why");
        }
        if expected != 2 || name != "24-read-only-file-write" {
            check(name, &dir);
        }
        insta::assert_snapshot!(name.as_str(), stderr);
    }
}
