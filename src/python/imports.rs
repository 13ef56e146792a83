//! The imports a rule's edits need (`imports: ["import torch", "from functools import partial
//! as _partial"]`): each statement read once when rules compile, and in a file the rule edits
//! added once — after the docstring, `__future__` imports and the comments that open the file,
//! beside the imports that follow them — unless the module already binds every name it binds
//! to the same thing. A name the module binds to something else is never shadowed: that is a
//! clash naming both bindings.

use std::ops::Range;

use tree_sitter::Node;

use crate::edit::Edit;

/// One import statement a rule needs, and the names it binds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportSpec {
    /// The statement as written (one line).
    pub text: String,
    /// `(name bound, what it names)`: `torch` → `torch`; `as np` → `numpy`; `from functools
    /// import partial as _partial` → (`_partial`, `functools.partial`).
    pub binds: Vec<(String, String)>,
}

/// Reads one import statement; `Err` says why it is not one regraft can add.
pub fn read_import(text: &str) -> Result<ImportSpec, String> {
    let text = text.trim();
    if text.contains('\n') {
        return Err("one import statement on one line".into());
    }
    let tree = super::parse(text);
    let root = tree.root_node();
    let statements = super::significant_children(root);
    if root.has_error() || statements.len() != 1 {
        return Err("not one Python import statement".into());
    }
    let statement = statements[0];
    let binds = binds_of(statement, text)?;
    Ok(ImportSpec {
        text: text.to_string(),
        binds,
    })
}

/// The names an import statement binds at module level, with what each names.
fn binds_of(statement: Node<'_>, text: &str) -> Result<Vec<(String, String)>, String> {
    let source = |n: Node<'_>| text[n.byte_range()].split_whitespace().collect::<String>();
    let mut out = Vec::new();
    match statement.kind() {
        "import_statement" => {
            let mut cursor = statement.walk();
            for name in statement.children_by_field_name("name", &mut cursor) {
                match name.kind() {
                    "aliased_import" => {
                        let module = name.child_by_field_name("name").map(source);
                        let alias = name.child_by_field_name("alias").map(source);
                        out.push((alias.unwrap_or_default(), module.unwrap_or_default()));
                    }
                    _ => {
                        let dotted = source(name);
                        let top = dotted.split('.').next().unwrap_or("").to_string();
                        out.push((top.clone(), top));
                    }
                }
            }
        }
        "import_from_statement" => {
            let module = statement
                .child_by_field_name("module_name")
                .map(source)
                .unwrap_or_default();
            let mut cursor = statement.walk();
            for name in statement.children_by_field_name("name", &mut cursor) {
                let (bound, imported) = match name.kind() {
                    "aliased_import" => (
                        name.child_by_field_name("alias").map(source),
                        name.child_by_field_name("name").map(source),
                    ),
                    _ => (Some(source(name)), Some(source(name))),
                };
                let (Some(bound), Some(imported)) = (bound, imported) else {
                    continue;
                };
                out.push((bound, format!("{module}.{imported}")));
            }
            if out.is_empty() {
                return Err("`import *` binds names no one can list: name them".into());
            }
        }
        "future_import_statement" => {
            return Err("a `__future__` import changes how the whole file compiles".into());
        }
        _ => return Err("not an import statement".into()),
    }
    Ok(out)
}

/// A module-level binding of a name that an import would rebind to something else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clash {
    /// The import that would shadow it.
    pub import: String,
    /// The name.
    pub name: String,
    /// The statement that binds it now.
    pub at: Range<usize>,
}

/// The edit that adds what `imports` need and `text` lacks (`None`: nothing to add), or the
/// first clash with a module-level binding of another thing. Only an unconditional import in
/// the file's header (above where imports are added) counts as already there: one under `if`,
/// `try`, after the edit or later deleted may not run before the edited code does.
pub fn plan(text: &str, imports: &[&ImportSpec]) -> Result<Option<Edit>, Clash> {
    let tree = super::parse(text);
    let root = tree.root_node();
    let (at, header) = header(root, text);
    let imported = module_imports(root, text);
    let mut wanted: Vec<&str> = Vec::new();
    for spec in imports {
        let mut missing = false;
        for (name, what) in &spec.binds {
            let clash = |at: Range<usize>| Clash {
                import: spec.text.clone(),
                name: name.clone(),
                at,
            };
            if let Some(site) = super::names::module_binding_sites(root, text, name).first() {
                return Err(clash(site.byte_range()));
            }
            if let Some((_, _, at)) = imported.iter().find(|(n, w, _)| n == name && w != what) {
                return Err(clash(at.clone()));
            }
            missing |= !header.iter().any(|(n, w)| n == name && w == what);
        }
        if missing && !wanted.contains(&spec.text.as_str()) {
            wanted.push(&spec.text);
        }
    }
    if wanted.is_empty() {
        return Ok(None);
    }
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let lines: String = wanted.iter().map(|w| format!("{w}{newline}")).collect();
    // A text padded with blank lines (one class patched at run time, at its real line
    // numbers) takes the imports in place of blank lines: every line below keeps its number.
    let blank = text[at..].bytes().take_while(|&b| b == b'\n').count();
    if at == 0 && blank >= wanted.len() && newline == "\n" {
        return Ok(Some(Edit {
            range: 0..wanted.len(),
            text: lines,
        }));
    }
    Ok(Some(Edit {
        range: at..at,
        text: lines,
    }))
}

/// Where added imports go — the start of the line after the module's opening comments,
/// docstring, `__future__` imports and the imports right after them (a logical line: one
/// continued by `\` ends where its continuation does) — and the names those header imports
/// bind.
fn header(root: Node<'_>, text: &str) -> (usize, Vec<(String, String)>) {
    let mut at = 0;
    let mut bound = Vec::new();
    let mut seen_statement = false;
    let mut cursor = root.walk();
    let children: Vec<Node<'_>> = root.named_children(&mut cursor).collect();
    for statement in children {
        let is_header = match statement.kind() {
            "comment" => true,
            "future_import_statement" => true,
            "import_statement" | "import_from_statement" => {
                bound.extend(binds_of(statement, text).unwrap_or_default());
                true
            }
            "expression_statement" => !seen_statement && is_docstring(statement),
            _ => false,
        };
        if !is_header {
            break;
        }
        seen_statement |= statement.kind() != "comment";
        at = logical_line_end(text, statement.end_byte());
    }
    (at, bound)
}

/// Whether an expression statement is a docstring's: a string, strings concatenated, or one in
/// parentheses.
pub fn is_docstring(statement: Node<'_>) -> bool {
    let mut node = statement.named_child(0);
    while let Some(n) = node.filter(|n| n.kind() == "parenthesized_expression") {
        node = n.named_child(0);
    }
    node.is_some_and(|n| matches!(n.kind(), "string" | "concatenated_string"))
}

/// The start of the line after the logical line holding `end`.
fn logical_line_end(text: &str, end: usize) -> usize {
    let mut at = end;
    loop {
        let Some(n) = text[at..].find('\n') else {
            return text.len();
        };
        let line_end = at + n;
        let before = text[..line_end].trim_end_matches('\r');
        if !before.ends_with('\\') {
            return line_end + 1;
        }
        at = line_end + 1;
    }
}

/// Every import at module level (also under `if`/`try`/`with`): `(name, what, statement)`.
fn module_imports(root: Node<'_>, text: &str) -> Vec<(String, String, Range<usize>)> {
    let mut out = Vec::new();
    let mut stack: Vec<Node<'_>> = super::significant_children(root);
    while let Some(statement) = stack.pop() {
        match statement.kind() {
            "import_statement" | "import_from_statement" => {
                for (name, what) in binds_of(statement, text).unwrap_or_default() {
                    out.push((name, what, statement.byte_range()));
                }
            }
            "if_statement" | "try_statement" | "with_statement" | "else_clause" | "elif_clause"
            | "except_clause" | "finally_clause" | "block" => {
                let mut cursor = statement.walk();
                stack.extend(statement.named_children(&mut cursor));
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(text: &str, imports: &[&str]) -> Result<String, Clash> {
        let specs: Vec<ImportSpec> = imports.iter().map(|i| read_import(i).unwrap()).collect();
        let refs: Vec<&ImportSpec> = specs.iter().collect();
        Ok(match plan(text, &refs)? {
            None => text.to_string(),
            Some(edit) => {
                let mut out = text.to_string();
                out.replace_range(edit.range, &edit.text);
                out
            }
        })
    }

    #[test]
    fn an_import_goes_after_the_docstring_future_and_imports_once() {
        let text = "\"\"\"Doc.\"\"\"\nfrom __future__ import annotations\nimport os\n\nx = 1\n";
        assert_eq!(
            add(text, &["import torch", "import torch"]).unwrap(),
            "\"\"\"Doc.\"\"\"\nfrom __future__ import annotations\nimport os\nimport torch\n\nx = 1\n"
        );
        let has = "import torch\nx = torch.ones(1)\n";
        assert_eq!(add(has, &["import torch"]).unwrap(), has);
        let aliased = "from functools import partial as _partial\n";
        assert_eq!(
            add(aliased, &["from functools import partial as _partial"]).unwrap(),
            aliased
        );
        assert_eq!(
            add("x = 1\n", &["import torch"]).unwrap(),
            "import torch\nx = 1\n"
        );
        assert_eq!(
            add("# -*- coding: utf-8 -*-\nx = 1\n", &["import torch"]).unwrap(),
            "# -*- coding: utf-8 -*-\nimport torch\nx = 1\n"
        );
        // Padding blank lines (a unit at its line numbers) give way: no line moves.
        assert_eq!(
            add("\n\nclass C:\n    pass\n", &["import torch"]).unwrap(),
            "import torch\n\nclass C:\n    pass\n"
        );
    }

    #[test]
    fn a_name_bound_to_something_else_is_a_clash() {
        for text in [
            "torch = None\n",
            "def torch(): pass\n",
            "from mytorch import torch\n",
            "try:\n    import torch\nexcept ImportError:\n    torch = None\n",
        ] {
            let clash = add(text, &["import torch"]).unwrap_err();
            assert_eq!(clash.name, "torch", "{text}");
        }
        assert!(read_import("from x import *").is_err());
        assert!(read_import("from __future__ import annotations").is_err());
        assert!(read_import("x = 1").is_err());
        assert_eq!(
            read_import("import numpy as np, os.path").unwrap().binds,
            vec![("np".into(), "numpy".into()), ("os".into(), "os".into())]
        );
    }
}
