//! Names an edit introduces must resolve: a template that writes `torch.float32` into a module
//! that never imports `torch` parses, compiles, and fails with `NameError` when it runs. After
//! each step, every name the new code reads (not present in the text it replaced, not bound by
//! the new code itself, not a builtin) must be a name the rest of the file holds in code — a
//! definition, an import, a parameter, an assignment — or the edit is refused naming it.
//!
//! What is checked: that the name stands somewhere else in the file (as a whole word; a
//! mention in a comment or string is taken as enough, which keeps the check free where names
//! are reused, as they nearly always are). What is not: that its binding is visible from the
//! edit's scope (a local of another function satisfies it). The check applies to a file that
//! is closed before the edit — every name it reads it binds somewhere, or is a builtin, as a
//! complete module is. A file that reads names it never binds (a class's source patched at
//! run time apart from its module, a fragment, a module that gets names injected) gives no
//! ground to judge, and is not checked; nor is one with a star import or `globals()`.

use std::ops::Range;

use tree_sitter::Node;

/// Python 3.9–3.13 builtins (and the module attributes every module has).
const BUILTINS: &[&str] = &[
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "BaseException",
    "BaseExceptionGroup",
    "BlockingIOError",
    "BrokenPipeError",
    "BufferError",
    "BytesWarning",
    "ChildProcessError",
    "ConnectionAbortedError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "DeprecationWarning",
    "EOFError",
    "Ellipsis",
    "EncodingWarning",
    "EnvironmentError",
    "Exception",
    "ExceptionGroup",
    "False",
    "FileExistsError",
    "FileNotFoundError",
    "FloatingPointError",
    "FutureWarning",
    "GeneratorExit",
    "IOError",
    "ImportError",
    "ImportWarning",
    "IndentationError",
    "IndexError",
    "InterruptedError",
    "IsADirectoryError",
    "KeyError",
    "KeyboardInterrupt",
    "LookupError",
    "MemoryError",
    "ModuleNotFoundError",
    "NameError",
    "None",
    "NotADirectoryError",
    "NotImplemented",
    "NotImplementedError",
    "OSError",
    "OverflowError",
    "PendingDeprecationWarning",
    "PermissionError",
    "ProcessLookupError",
    "PythonFinalizationError",
    "RecursionError",
    "ReferenceError",
    "ResourceWarning",
    "RuntimeError",
    "RuntimeWarning",
    "StopAsyncIteration",
    "StopIteration",
    "SyntaxError",
    "SyntaxWarning",
    "SystemError",
    "SystemExit",
    "TabError",
    "TimeoutError",
    "True",
    "TypeError",
    "UnboundLocalError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "UnicodeError",
    "UnicodeTranslateError",
    "UnicodeWarning",
    "UserWarning",
    "ValueError",
    "Warning",
    "ZeroDivisionError",
    "__build_class__",
    "__debug__",
    "__doc__",
    "__import__",
    "__loader__",
    "__name__",
    "__package__",
    "__spec__",
    "__file__",
    "__builtins__",
    "__cached__",
    "__annotations__",
    "__class__",
    "__dict__",
    "__module__",
    "__qualname__",
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "copyright",
    "credits",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "exit",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "license",
    "list",
    "locals",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "quit",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
];

/// Whether identifier `node` is read (not a binding, attribute, keyword or parameter name).
fn is_read(node: Node<'_>) -> bool {
    let Some(parent) = node.parent() else {
        return true;
    };
    let field_is = |field: &str| {
        parent
            .child_by_field_name(field)
            .is_some_and(|c| c.id() == node.id())
    };
    match parent.kind() {
        "attribute" => !field_is("attribute"),
        "keyword_argument" => !field_is("name"),
        "function_definition" | "class_definition" => !field_is("name"),
        "parameters"
        | "lambda_parameters"
        | "default_parameter"
        | "typed_parameter"
        | "typed_default_parameter"
        | "list_splat_pattern"
        | "dictionary_splat_pattern" => field_is("value") || field_is("type"),
        "dotted_name"
        | "aliased_import"
        | "import_statement"
        | "import_from_statement"
        | "global_statement"
        | "nonlocal_statement" => false,
        _ => true,
    }
}

/// Whether identifier `node` is bound where it stands: an assignment or `for`/`with`/`except`
/// target, a walrus, a parameter, a definition's name, an import.
fn is_binding(node: Node<'_>) -> bool {
    let mut child = node;
    let mut parent = node.parent();
    while let Some(p) = parent {
        let under = |field: &str| {
            p.child_by_field_name(field)
                .is_some_and(|c| c.id() == child.id())
        };
        match p.kind() {
            "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
                return under("left");
            }
            "named_expression" => return under("name"),
            "as_pattern" | "as_pattern_target" => return true,
            "except_clause" => return false,
            "function_definition" | "class_definition" => return under("name"),
            "parameters"
            | "lambda_parameters"
            | "default_parameter"
            | "typed_parameter"
            | "typed_default_parameter" => return !under("value") && !under("type"),
            "import_statement" | "import_from_statement" | "aliased_import" => return true,
            "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "list_splat_pattern"
            | "parenthesized_expression"
            | "tuple"
            | "list" => {}
            _ => return false,
        }
        child = p;
        parent = p.parent();
    }
    false
}

/// The first name an edit reads that nothing else in `output` provides: `(name, where)`.
/// `edits` are the edits' ranges in `output` with the text each replaced; `root` is a parse
/// of (at least) the edited statements of `output`.
pub fn first_unresolved(
    input: &str,
    output: &str,
    root: Node<'_>,
    edits: &[(Range<usize>, &str)],
) -> Option<(String, Range<usize>)> {
    let mut candidates: Vec<(String, Range<usize>, usize)> = Vec::new();
    for (i, (range, replaced)) in edits.iter().enumerate() {
        if range.is_empty() {
            continue;
        }
        let mut bound: Vec<&str> = Vec::new();
        let mut read: Vec<Node<'_>> = Vec::new();
        let mut cursor = root.walk();
        let top = root
            .descendant_for_byte_range(range.start, range.end)
            .unwrap_or(root);
        let mut stack = vec![top];
        while let Some(n) = stack.pop() {
            if n.end_byte() <= range.start || n.start_byte() >= range.end {
                continue;
            }
            if n.kind() == "identifier"
                && range.start <= n.start_byte()
                && n.end_byte() <= range.end
            {
                if is_binding(n) {
                    bound.push(&output[n.byte_range()]);
                } else if is_read(n) {
                    read.push(n);
                }
            }
            stack.extend(n.children(&mut cursor));
        }
        for n in read {
            let name = &output[n.byte_range()];
            let known = BUILTINS.contains(&name)
                || bound.contains(&name)
                || word_in(replaced, name)
                || candidates.iter().any(|(c, _, _)| c == name);
            if !known {
                candidates.push((name.to_string(), n.byte_range(), i));
            }
        }
    }
    // A name that stands elsewhere in the file, even in a comment, is taken as provided: the
    // check is for names the file never mentions, and costs nothing in the common case.
    candidates.retain(|(name, _, i)| {
        let edit = &edits[*i].0;
        !word_in(&output[..edit.start], name) && !word_in(&output[edit.end..], name)
    });
    if candidates.is_empty() || output.contains("import *") || output.contains("globals()") {
        return None;
    }
    if !is_closed(input) {
        return None;
    }
    candidates
        .into_iter()
        .next()
        .map(|(name, at, _)| (name, at))
}

/// Whether every name `text` reads is one it binds somewhere (in any scope) or a builtin.
fn is_closed(text: &str) -> bool {
    let tree = crate::python::parse(text);
    let mut bound = std::collections::HashSet::new();
    let mut read = Vec::new();
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        if n.kind() == "identifier" {
            let name = &text[n.byte_range()];
            if is_binding(n) || in_import(n) {
                bound.insert(name);
            } else if is_read(n) {
                read.push(name);
            }
        }
        stack.extend(n.children(&mut cursor));
    }
    read.iter()
        .all(|r| bound.contains(r) || BUILTINS.contains(r))
}

/// Whether identifier `node` is a name an import binds (`import a.b` binds `a`).
fn in_import(node: Node<'_>) -> bool {
    let mut n = node;
    while let Some(p) = n.parent() {
        match p.kind() {
            "import_statement" | "import_from_statement" => return true,
            "dotted_name" | "aliased_import" => n = p,
            _ => return false,
        }
    }
    false
}

/// Whether `text` holds `name` as a whole word.
fn word_in(text: &str, name: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        !text[..at].chars().next_back().is_some_and(is_word)
            && !text[at + name.len()..].chars().next().is_some_and(is_word)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(output: &str, edit: &str, replaced: &str) -> Option<String> {
        let at = output.find(edit).unwrap();
        let input = output.replacen(edit, replaced, 1);
        let tree = crate::python::parse(output);
        first_unresolved(
            &input,
            output,
            tree.root_node(),
            &[(at..at + edit.len(), replaced)],
        )
        .map(|(n, _)| n)
    }

    #[test]
    fn a_name_nothing_provides_is_found() {
        let out = "def f(x):\n    return x.to(torch.float32)\n";
        assert_eq!(check(out, "x.to(torch.float32)", "x"), Some("torch".into()));
        let imported = format!("import torch\n{out}");
        assert_eq!(check(&imported, "x.to(torch.float32)", "x"), None);
        // Builtins, names bound by the new code, attributes and keywords need nothing.
        let own = "def f(x):\n    y = len(x)\n    return g(y, key=y).shape\n";
        assert_eq!(
            check(own, "y = len(x)\n    return g(y, key=y).shape", "return x"),
            Some("g".into())
        );
        let star = format!("from torch import *\n{out}");
        assert_eq!(check(&star, "x.to(torch.float32)", "x"), None);
        // A file that reads a name it never binds (a class apart from its module) is open.
        let open = "def f(x):\n    return nn.relu(x.to(torch.float32))\n";
        assert_eq!(check(open, "x.to(torch.float32)", "x"), None);
    }
}
