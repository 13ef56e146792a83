//! `imports` and `provides`: a rule's edits bring in what they read, once, beside the file's
//! imports, never shadowing another binding; names the runtime provides pass the name check.

use std::fs;

use crate::util::{regraft, text};

const FLOAT: &str = "id: fp32\nimports: [\"import torch\", \"from functools import partial as _partial\"]\nmatch: $X.float()\naction: {replace: \"_partial($X.to, torch.float32)()\"}\n";

fn run(rule: &str, source: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("r.yaml"), rule).unwrap();
    fs::write(dir.path().join("m.py"), source).unwrap();
    let out = regraft(
        &[&["apply", "--no-config", "-r", "r.yaml"], args, &["m.py"]].concat(),
        dir.path(),
    );
    let written = fs::read_to_string(dir.path().join("m.py")).unwrap();
    (out.status.code(), written, text(&out.stderr))
}

#[test]
fn imports_are_added_once_after_the_docstring_future_and_imports() {
    let source = "\"\"\"Doc.\"\"\"\nfrom __future__ import annotations\nimport os\n\n\ndef f(x, y):\n    return x.float(), y.float()\n";
    let (code, written, stderr) = run(FLOAT, source, &["--write"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        written,
        "\"\"\"Doc.\"\"\"\nfrom __future__ import annotations\nimport os\nimport torch\nfrom functools import partial as _partial\n\n\ndef f(x, y):\n    return _partial(x.to, torch.float32)(), _partial(y.to, torch.float32)()\n"
    );
    // Applied: `--check` finds nothing to do, and a second write changes nothing.
    let (code, again, stderr) = run(FLOAT, &written, &["--write"]);
    assert_eq!(
        (code, again.as_str()),
        (Some(0), written.as_str()),
        "{stderr}"
    );
    // An import already there (the same binding) is not repeated.
    let has = "import torch\n\ndef f(x):\n    return x.float()\n";
    let (_, written, _) = run(FLOAT, has, &["--write"]);
    assert_eq!(written.matches("import torch").count(), 1, "{written}");
}

#[test]
fn an_import_that_would_shadow_another_binding_is_refused() {
    let source = "torch = None\n\ndef f(x):\n    return x.float()\n";
    let (code, written, stderr) = run(FLOAT, source, &["--write"]);
    assert_eq!(code, Some(3), "{stderr}");
    assert_eq!(written, source, "nothing written");
    assert!(
        stderr.contains("rule `fp32` needs `import torch`"),
        "{stderr}"
    );
    assert!(stderr.contains("`torch` is bound here"), "{stderr}");
}

#[test]
fn without_the_import_the_name_check_refuses_and_provides_names_pass() {
    let bare = "id: fp32\nmatch: $X.float()\naction: {replace: \"$X.to(torch.float32)\"}\n";
    let source = "def f(x):\n    return x.float()\n";
    let (code, _, stderr) = run(bare, source, &["--diff"]);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(stderr.contains("reads `torch`"), "{stderr}");
    let provided = "id: fp32\nprovides: [_patcher_cast]\nmatch: $X.float()\naction: {replace: \"_patcher_cast($X)\"}\n";
    let (code, _, stderr) = run(provided, source, &["--diff"]);
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn a_bad_import_is_a_rule_error_at_its_place_and_fmt_keeps_both_keys() {
    let dir = tempfile::tempdir().unwrap();
    for (bad, says) in [
        ("from torch import *", "binds names no one can list"),
        (
            "from __future__ import annotations",
            "changes how the whole file compiles",
        ),
        ("x = 1", "not an import statement"),
    ] {
        let rule =
            format!("id: r\nimports: [\"{bad}\"]\nmatch: f($X)\naction: {{replace: g($X)}}\n");
        fs::write(dir.path().join("r.yaml"), rule).unwrap();
        let out = regraft(&["lint", "r.yaml"], dir.path());
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(
            text(&out.stderr).contains(says),
            "{bad}: {}",
            text(&out.stderr)
        );
    }
    let rule = "id: r\nimports: [\"import torch\"]\nprovides: [helper]\nmatch: f($X)\naction: {replace: \"g($X)\"}\n";
    fs::write(dir.path().join("r.yaml"), rule).unwrap();
    let out = regraft(&["fmt", "--to", "dsl", "r.yaml"], dir.path());
    let dsl = text(&out.stdout);
    assert!(
        dsl.contains("imports") && dsl.contains("import torch"),
        "{dsl}"
    );
    assert!(dsl.contains("provides") && dsl.contains("helper"), "{dsl}");
}
