//! The second, CPython-faithful check of patched text. tree-sitter-python recovers from and
//! accepts code CPython rejects (`f(a=1, x)`, `del f(x)`, `def g(a=1, b)`, a walrus as a
//! statement, mixed tabs and spaces, f-string quotes older Pythons cannot read), so every
//! result that would be written is also parsed by ruff's parser, which follows CPython's
//! grammar and reports what CPython reports. Only errors the edits introduced count: a target
//! that already uses syntax newer than [`OLDEST_PYTHON`] keeps doing so.

use std::ops::Range;

use ruff_python_ast::PythonVersion;
use ruff_python_parser::{Mode, ParseOptions, parse_unchecked};
use ruff_text_size::{Ranged, TextRange};

/// The oldest Python a patched file must still run on; syntax newer than this is an error
/// only where the patch wrote it.
pub const OLDEST_PYTHON: (u8, u8) = (3, 9);
const _: () = assert!(
    OLDEST_PYTHON.0 == 3 && OLDEST_PYTHON.1 == 9,
    "compile_check::VERSION too"
);

/// One error CPython (of [`OLDEST_PYTHON`] or later) would report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpythonError {
    /// Where it is.
    pub range: Range<usize>,
    /// What CPython would say, in ruff's words.
    pub message: String,
    /// Whether only Pythons older than the syntax reject it (CPython 3.12 reads it, 3.9 not).
    pub version_only: bool,
}

/// Every syntax error CPython's `compile()` would report in `text`, in order: its grammar's,
/// and where that holds, its compiler's (see `compile_check`).
pub fn errors(text: &str) -> Vec<CpythonError> {
    // A step that checked a file's whole output and the check of the final output before it
    // is written ask about the same text: the second answer is the first's.
    thread_local! {
        static LAST_CLEAN: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    }
    if !text.is_empty() && LAST_CLEAN.with(|last| *last.borrow() == text) {
        return Vec::new();
    }
    let errors = chunk_errors(text, false);
    if errors.is_empty() {
        LAST_CLEAN.with(|last| {
            let mut last = last.borrow_mut();
            last.clear();
            last.push_str(text);
        });
    }
    errors
}

/// The errors of `text`, one or more statements; `detached` where they were taken out of
/// their enclosing function or loop (only context-free compiler errors are then reported).
pub fn chunk_errors(text: &str, detached: bool) -> Vec<CpythonError> {
    super::compile_check::on_stack_for(text, || chunk_errors_here(text, detached))
}

fn chunk_errors_here(text: &str, detached: bool) -> Vec<CpythonError> {
    let (major, minor) = OLDEST_PYTHON;
    let options =
        ParseOptions::from(Mode::Module).with_target_version(PythonVersion { major, minor });
    let parsed = parse_unchecked(text, options);
    let range = |r: TextRange| usize::from(r.start())..usize::from(r.end());
    let mut out: Vec<CpythonError> = parsed
        .errors()
        .iter()
        .map(|e| CpythonError {
            range: range(e.location),
            message: e.error.to_string(),
            version_only: false,
        })
        .chain(
            parsed
                .unsupported_syntax_errors()
                .iter()
                .map(|e| CpythonError {
                    range: range(e.range()),
                    message: e.to_string(),
                    version_only: true,
                }),
        )
        .collect();
    out.extend(tab_error(text));
    if out.iter().all(|e| e.version_only) {
        // Already on a stack sized for `text` (see `chunk_errors`): not a second one.
        // The same parse: the checker's Python is the oldest one too (see `compile_check`).
        let compiled = super::compile_check::compile_errors_of(text, &parsed, detached);
        out.extend(compiled.into_iter().map(|e| CpythonError {
            range: e.range,
            message: e.message,
            version_only: false,
        }));
    }
    out.sort_by_key(|e| e.range.start);
    out
}

/// CPython's `TabError`, which ruff's parser does not report: indentation is measured with
/// tabs to the next multiple of 8 and with tabs as one column, and the two measures must order
/// every pair of lines the same way (the tokenizer's `altcol` check). A form feed restarts the
/// count, as in CPython.
pub fn tab_error(text: &str) -> Option<CpythonError> {
    // Without a tab the two measures are the same number: nothing to compare, and no need to
    // scan the file's logical lines.
    memchr::memchr(b'\t', text.as_bytes())?;
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
    for start in super::regions::logical_line_starts(text)? {
        let (mut col, mut alt, mut end) = (0, 0, start);
        for &b in &text.as_bytes()[start..] {
            match b {
                b' ' => (col, alt) = (col + 1, alt + 1),
                b'\t' => (col, alt) = ((col / 8 + 1) * 8, alt + 1),
                b'\x0c' => (col, alt) = (0, 0),
                _ => break,
            }
            end += 1;
        }
        let &(top, top_alt) = stack.last().expect("the stack keeps its floor");
        let consistent = if col > top {
            alt > top_alt
        } else {
            while stack.len() > 1 && col < stack.last().expect("not empty").0 {
                stack.pop();
            }
            let &(top, top_alt) = stack.last().expect("the stack keeps its floor");
            col != top || alt == top_alt
        };
        if !consistent {
            return Some(CpythonError {
                range: start..end.max(start + 1),
                message: "TabError: inconsistent use of tabs and spaces in indentation".into(),
                version_only: false,
            });
        }
        if col > top {
            stack.push((col, alt));
        }
    }
    None
}

/// The first error in `new_text` that makes it unfit to write: any syntax error (even one
/// `old_text` had: CPython rejects the file either way), or syntax newer than
/// [`OLDEST_PYTHON`] that `old_text` did not have (told apart by message, and one kind
/// occurring more often than before counts as new).
pub fn new_error(old_text: &str, new_text: &str) -> Option<CpythonError> {
    let after = errors(new_text);
    if after.is_empty() {
        return None;
    }
    let before = errors(old_text);
    let count = |errors: &[CpythonError], message: &str| {
        errors.iter().filter(|e| e.message == message).count()
    };
    after
        .iter()
        .find(|e| !e.version_only || count(&after, &e.message) > count(&before, &e.message))
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_for_the_last_clean_text_is_reused_and_an_error_never_is() {
        let clean = "x = 1\n";
        let bad = "f(a=1, x)\n";
        for _ in 0..2 {
            assert!(errors(clean).is_empty());
            assert!(!errors(bad).is_empty());
        }
        // A clean text that differs from the last only in its end is asked again.
        assert!(!errors("x = 1\nf(a=1, x)\n").is_empty());
    }

    #[test]
    fn what_tree_sitter_accepts_and_cpython_rejects() {
        for bad in [
            "f(a=1, x)\n",
            "del f(x)\n",
            "def g(a=1, b):\n    pass\n",
            "z := f()\n",
            "print \"x\", y\n",
            "def f():\n\tif x:\n        pass\n",
        ] {
            assert!(!errors(bad).is_empty(), "CPython rejects {bad:?}");
        }
        for good in [
            "f(x, a=1)\n",
            "(z := f())\n",
            "def g(a, b=1):\n    pass\n",
            "def f():\n\tif x:\n\t        pass\n",
        ] {
            assert_eq!(errors(good), [], "CPython accepts {good:?}");
        }
    }

    #[test]
    fn only_errors_the_edit_introduced_count() {
        let tabs = "if x:\n\ty = 1\n        z = 2\n";
        assert!(
            new_error(tabs, &format!("{tabs}w = 3\n")).is_some(),
            "a file CPython rejects stays rejected"
        );
        let old = "match x:\n    case 1:\n        pass\n";
        assert!(!errors(old).is_empty(), "match is newer than Python 3.9");
        assert_eq!(new_error(old, &format!("{old}y = 1\n")), None);
        let nested_quotes = "f\"{x[\"k\"]}\"\n";
        assert!(new_error("f'{x}'\n", nested_quotes).is_some());
    }
}
