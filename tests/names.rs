//! The name check judges bindings CPython takes away: a module-level `del` unbinds a name for
//! every function that runs after the import, and `except … as e` unbinds `e` when its clause
//! ends. Each verdict is checked against CPython itself: where regraft lets an edit through,
//! running the output finds the name; where it refuses, the same output, forced, fails with
//! `NameError`.

use crate::util::{patch, render, rules, versions};

/// Runs `text` then `call` in CPython; whether that raised `NameError` (its subclass
/// `UnboundLocalError` included).
fn name_error_in_cpython(text: &str, call: &str) -> bool {
    let script = format!(
        "import sys\nns = {{}}\ntry:\n    exec(compile(sys.stdin.read(), 'm.py', 'exec'), ns)\n    exec({call:?}, ns)\nexcept NameError:\n    print('NameError')\n"
    );
    let mut child = std::process::Command::new("python3")
        .args(["-c", &script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "CPython failed otherwise");
    String::from_utf8_lossy(&out.stdout).contains("NameError")
}

const READ_TMP: &str = "id: r\nmatch: 'return 1'\naction: {replace: 'return _tmp'}\n";

#[test]
fn a_name_the_module_deletes_is_unbound_for_functions_that_run_later() {
    let cases = [
        // (source, refused)
        (
            "_tmp = 5\nLIMIT = _tmp * 2\ndel _tmp\n\ndef f():\n    return 1\n",
            true,
        ),
        (
            "_tmp = 5\nLIMIT = _tmp * 2\ndel LIMIT, _tmp\n\ndef f():\n    return 1\n",
            true,
        ),
        (
            "_tmp = 5\nLIMIT = _tmp * 2\n\ndef f():\n    return 1\n",
            false,
        ),
        // Bound again after the `del`.
        (
            "_tmp = 5\ndel _tmp\n_tmp = 6\n\ndef f():\n    return 1\n",
            false,
        ),
        (
            "_tmp = 5\ndel _tmp\nfrom os import sep as _tmp\n\ndef f():\n    return 1\n",
            false,
        ),
        // A `del` that may not run leaves the name possibly bound: not refused.
        (
            "import os\n_tmp = 5\nif os.sep == '?':\n    del _tmp\n\ndef f():\n    return 1\n",
            false,
        ),
        // A function that declares it global may bind it again.
        (
            "_tmp = 5\ndel _tmp\n\ndef g():\n    global _tmp\n    _tmp = 1\n\ndef f():\n    g()\n    return 1\n",
            false,
        ),
        // The function's own binding is its own.
        (
            "_tmp = 5\ndel _tmp\n\ndef f():\n    _tmp = 2\n    return 1\n",
            false,
        ),
    ];
    let set = rules(READ_TMP);
    for (source, refused) in cases {
        let result = patch(&set, &versions(&[]), "m.py", source);
        let forced = source.replace("return 1", "return _tmp");
        let cpython = name_error_in_cpython(&forced, "f()");
        assert_eq!(cpython, refused, "CPython's verdict on:\n{forced}");
        match result {
            Ok(p) => assert!(!refused, "let through:\n{}", p.output),
            Err(e) => {
                let shown = render(&e);
                assert!(refused, "refused:\n{source}\n{shown}");
                assert!(shown.contains("`_tmp`"), "{shown}");
            }
        }
    }
}

#[test]
fn module_level_code_sees_a_deleted_name_only_before_its_del() {
    let rule = "id: r\nmatch: 'Y = 0'\naction: {replace: 'Y = _tmp'}\n";
    let set = rules(rule);
    for (source, refused) in [
        ("_tmp = 5\nY = 0\ndel _tmp\n", false),
        ("_tmp = 5\ndel _tmp\nY = 0\n", true),
        ("_tmp = 5\nclass C:\n    Y = 0\ndel _tmp\n", false),
    ] {
        let forced = source.replace("Y = 0", "Y = _tmp");
        assert_eq!(name_error_in_cpython(&forced, "pass"), refused, "{forced}");
        let result = patch(&set, &versions(&[]), "m.py", source);
        assert_eq!(result.is_err(), refused, "{source}");
    }
}

#[test]
fn an_except_alias_is_bound_only_inside_its_clause() {
    let rule = "id: r\nmatch: 'y = 1'\naction: {replace: 'y = err'}\n";
    let set = rules(rule);
    for (source, refused, call) in [
        (
            "try:\n    pass\nexcept ValueError as err:\n    pass\n\ndef f():\n    y = 1\n    return y\n",
            true,
            "f()",
        ),
        (
            "def f():\n    try:\n        raise ValueError\n    except ValueError as err:\n        y = 1\n    return y\n",
            false,
            "f()",
        ),
        (
            "def f():\n    try:\n        raise ValueError\n    except ValueError as err:\n        pass\n    y = 1\n    return y\n",
            true,
            "f()",
        ),
        // Bound otherwise too: the alias takes nothing away from that binding's sight.
        (
            "err = 0\ntry:\n    pass\nexcept ValueError as err:\n    pass\n\ndef f():\n    y = 1\n    return y\n",
            false,
            "f()",
        ),
    ] {
        let forced = source.replace("y = 1", "y = err");
        assert_eq!(name_error_in_cpython(&forced, call), refused, "{forced}");
        let result = patch(&set, &versions(&[]), "m.py", source);
        assert_eq!(result.is_err(), refused, "{source}");
    }
}
