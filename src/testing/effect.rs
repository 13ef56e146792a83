//! `effect`: a rule's Python check run on a case's module as it was and as patched. regraft
//! has no interpreter of its own, so the check runs in CPython itself — `REGRAFT_PYTHON`, else
//! `python3` on `PATH` (the pytest plugin passes the interpreter it runs in) — as a child
//! process that reads the request on stdin and answers one JSON line.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::rules::model::Effect;

/// How long one effect may run before it is stopped and the case fails.
const TIMEOUT: Duration = Duration::from_secs(120);

/// The child's side: both modules executed, `run` then `value` read in each, compared.
const DRIVER: &str = r#"
import json, sys, types
req = json.loads(sys.stdin.read())

def side(text):
    module = types.ModuleType(req["module"])
    module.__file__ = req["path"]
    sys.modules[req["module"]] = module
    try:
        exec(compile(text, req["path"], "exec"), module.__dict__)
        if req["run"]:
            exec(compile(req["run"], "<effect: run>", "exec"), module.__dict__)
        return None, eval(compile(req["value"], "<effect: value>", "eval"), module.__dict__), module.__dict__
    except BaseException as error:
        return f"{type(error).__name__}: {error}", None, module.__dict__

def same(a, b):
    try:
        equal = a == b
        if isinstance(equal, bool):
            return equal
        if hasattr(equal, "all"):  # arrays and tensors compare element by element
            return getattr(a, "shape", None) == getattr(b, "shape", None) and bool(equal.all())
        return bool(equal)
    except Exception:
        return repr(a) == repr(b)

def shown(value):
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."

def judge():
    value = req["value"]
    results = {}
    for name, text in (("original", req["before"]), ("patched", req["after"])):
        error, got, namespace = side(text)
        if error is not None:
            return f"`{value}` cannot be read on the {name} module: {error}"
        results[name] = (got, namespace)
        wanted = req[name]
        if wanted is not None:
            try:
                expected = eval(compile(wanted, f"<effect: {name}>", "eval"), namespace)
            except BaseException as error:
                return f"`{name}: {wanted}` cannot be read: {type(error).__name__}: {error}"
            if not same(got, expected):
                return f"on the {name} module `{value}` is {shown(got)}, not {shown(expected)}"
    if req["original"] is None and req["patched"] is None:
        before, after = results["original"][0], results["patched"][0]
        if same(before, after):
            return f"`{value}` is {shown(before)} on the original and on the patched module: the patch changes nothing it computes"
    return None

print(json.dumps({"failure": judge()}))
"#;

/// Why `effect` does not hold between `before` and `after` (a case's module at `path`), or
/// `None` where it holds.
pub(super) fn failure(effect: &Effect, path: &str, before: &str, after: &str) -> Option<String> {
    let python = std::env::var("REGRAFT_PYTHON").unwrap_or_else(|_| "python3".into());
    let module = path
        .trim_end_matches(".py")
        .replace(['/', '\\'], ".")
        .trim_matches('.')
        .to_string();
    let request = serde_json::json!({
        "module": if module.is_empty() { "case".to_string() } else { module },
        "path": path,
        "before": before,
        "after": after,
        "run": effect.run.as_ref().map(|r| r.value.as_str()),
        "value": effect.value.value,
        "original": effect.original.as_ref().map(|o| o.value.as_str()),
        "patched": effect.patched.as_ref().map(|p| p.value.as_str()),
    });
    let answer = match run(&python, &request.to_string()) {
        Ok(answer) => answer,
        Err(why) => return Some(format!("effect: {why}")),
    };
    let parsed: Option<serde_json::Value> = answer
        .lines()
        .last()
        .and_then(|line| serde_json::from_str(line).ok());
    match parsed.as_ref().and_then(|v| v.get("failure")) {
        Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(why)) => Some(format!("effect: {why}")),
        _ => Some(format!(
            "effect: `{python}` gave no verdict (its output: {})",
            answer.trim()
        )),
    }
}

/// Runs the driver in `python` with `input` on stdin; its stdout, or why it could not run.
fn run(python: &str, input: &str) -> Result<String, String> {
    let mut child = Command::new(python)
        .args(["-c", DRIVER])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            format!("cannot run `{python}` ({e}): set REGRAFT_PYTHON to a CPython interpreter")
        })?;
    let mut stdin = child.stdin.take().expect("piped");
    let input = input.to_string();
    // Written and read beside the wait: a large request or answer fills a pipe.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        stdout.read_to_string(&mut out).map(|_| out)
    });
    let mut stderr = child.stderr.take().expect("piped");
    let errors = std::thread::spawn(move || {
        let mut out = String::new();
        stderr.read_to_string(&mut out).map(|_| out)
    });
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "still running after {} s: stopped",
                    TIMEOUT.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("`{python}` could not be waited for: {e}")),
        }
    }
    let _ = writer.join();
    let out = reader.join().ok().and_then(Result::ok).unwrap_or_default();
    if out.trim().is_empty() {
        let err = errors.join().ok().and_then(Result::ok).unwrap_or_default();
        return Err(format!("`{python}` failed: {}", err.trim()));
    }
    Ok(out)
}
