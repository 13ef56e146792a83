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
    let explained = text(&regraft(&["explain", "r.yaml"], dir.path()).stdout);
    assert!(
        explained.contains("imports:     import torch"),
        "{explained}"
    );
    assert!(explained.contains("provides:    helper"), "{explained}");
}

/// The shapes a hostile reading found: a docstring after an opening comment, concatenated or
/// in parentheses stays first; an import that may not run first (under `if`, after the edit,
/// deleted) does not count; module-level bindings of every form and nearer bindings where the
/// edit reads the name are refused; an edit in the header is refused.
#[test]
fn imports_hold_against_every_shape_of_module() {
    let kept = [
        (
            "# -*- coding: utf-8 -*-\n\"\"\"doc\"\"\"\nz = y.float()\n",
            "\"\"\"doc\"\"\"\nimport torch\n",
        ),
        (
            "\"doc\" \"more\"\nz = y.float()\n",
            "\"doc\" \"more\"\nimport torch\n",
        ),
        (
            "(\n\"\"\"doc\"\"\"\n)\nz = y.float()\n",
            ")\nimport torch\n",
        ),
        (
            "import typing\nif typing.TYPE_CHECKING:\n    import torch\nz = y.float()\n",
            "import typing\nimport torch\n",
        ),
        ("z = y.float()\nimport torch\n", "import torch\nz = y.to("),
    ];
    let rule = "id: r\nimports: [\"import torch\"]\nmatch: $X.float()\naction: {replace: \"$X.to(torch.float32)\"}\n";
    for (source, holds) in kept {
        let (code, written, stderr) = run(rule, source, &["--write"]);
        assert_eq!(code, Some(0), "{source}: {stderr}");
        assert!(written.contains(holds), "{source} gave:\n{written}");
    }
    for source in [
        "for torch in []:\n    pass\nz = y.float()\n",
        "with open('x') as torch:\n    pass\nz = y.float()\n",
        "(torch := 3)\nz = y.float()\n",
        "def f():\n    global torch\n    torch = 3\nz = y.float()\n",
        "import torch\ndel torch\nz = y.float()\n",
        "class C:\n    torch = 1\n    z = y.float()\n",
        "def f(torch):\n    return y.float()\n",
        "def f(ys):\n    return [torch.float() for torch in ys]\n",
        "match v:\n    case torch:\n        pass\nz = y.float()\n",
        "match v:\n    case {\"k\": [torch, *_]}:\n        pass\nz = y.float()\n",
        "type torch = int\nz = y.float()\n",
    ] {
        let (code, written, stderr) = run(rule, source, &["--write"]);
        assert_eq!(code, Some(3), "{source}:\n{written}\n{stderr}");
        assert_eq!(written, source);
    }
    let header = "id: r\nimports: [\"import torch\"]\nmatch: import numpy\naction: {replace: \"import numpy as np; torch.x\"}\n";
    let (code, _, stderr) = run(header, "import numpy\na = 1\n", &["--write"]);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains("an edit stands in m.py's header"),
        "{stderr}"
    );
}

/// A rename whose comprehension binds the new name, beside a read of the module's old name:
/// the name check judges each read in its own scope (it judged one read per name).
#[test]
fn a_read_outside_the_comprehension_that_binds_the_new_name_is_refused() {
    let rule = "id: r\nmatch: \"def f($$$P): $$$B\"\naction: {rename: {from: x, to: y}}\n";
    let source = "x = 5\ndef f():\n    return [x for x in range(3)] + [x]\n";
    let (code, written, stderr) = run(rule, source, &["--write"]);
    assert_eq!(code, Some(3), "{stderr}");
    assert_eq!(written, source);
    assert!(stderr.contains("the edit reads `y`"), "{stderr}");
}
