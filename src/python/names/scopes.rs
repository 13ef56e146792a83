//! Python's scoping, read off a tree-sitter tree: which scope each binding belongs to, and
//! which scopes a read at a point sees (LEGB, where a class body is seen only by code standing
//! directly in it, not by its methods or comprehensions). Written here because no Rust crate
//! resolves names over tree-sitter-python; ruff's semantic model works on its own AST.

use tree_sitter::Node;

/// Whether `node` opens a scope of its own.
fn is_scope(node: Node<'_>) -> bool {
    matches!(
        node.kind(),
        "function_definition"
            | "lambda"
            | "class_definition"
            | "list_comprehension"
            | "set_comprehension"
            | "dictionary_comprehension"
            | "generator_expression"
    )
}

/// The node whose scope holds `node`: the nearest function, lambda, class or comprehension it
/// stands inside of (a function's name, decorators and defaults stand outside it; a class's
/// name and bases too; a comprehension's first iterable too), or the root.
pub(super) fn scope_of(node: Node<'_>) -> Node<'_> {
    let mut child = node;
    // Set on leaving a comprehension's first iterable: that comprehension is not entered.
    let mut first_iterable = false;
    while let Some(parent) = child.parent() {
        let field = |name: &str| {
            parent
                .child_by_field_name(name)
                .is_some_and(|c| c.id() == child.id())
        };
        let inside = match parent.kind() {
            "function_definition" | "lambda" => field("body") || field("parameters"),
            "class_definition" => field("body"),
            "for_in_clause" => {
                first_iterable = field("right") && is_first_clause(parent);
                false
            }
            _ if is_scope(parent) => !std::mem::take(&mut first_iterable),
            _ => false,
        };
        if inside {
            return parent;
        }
        child = parent;
    }
    child
}

/// Whether `clause` is the first `for … in …` of its comprehension.
fn is_first_clause(clause: Node<'_>) -> bool {
    let Some(comp) = clause.parent() else {
        return false;
    };
    let mut cursor = comp.walk();
    comp.children(&mut cursor)
        .find(|c| c.kind() == "for_in_clause")
        .is_some_and(|first| first.id() == clause.id())
}

/// The scopes a read at `node` searches, innermost first, ending with the root: a class body
/// only when it is the innermost.
pub(super) fn visible_from(node: Node<'_>) -> Vec<Node<'_>> {
    let mut chain = Vec::new();
    let mut at = node;
    loop {
        let scope = scope_of(at);
        if scope.kind() != "class_definition" || chain.is_empty() {
            chain.push(scope);
        }
        if scope.parent().is_none() {
            return chain;
        }
        at = scope;
    }
}

/// How a scope is named in a message: "function `f`", "class `C`", "a lambda", "a
/// comprehension", "the module".
pub(super) fn describe(scope: Node<'_>, text: &str) -> String {
    let name = || {
        scope
            .child_by_field_name("name")
            .map_or("?", |n| &text[n.byte_range()])
    };
    match scope.kind() {
        "function_definition" => format!("function `{}`", name()),
        "class_definition" => format!("class `{}`", name()),
        "lambda" => "a lambda".into(),
        _ if scope.parent().is_none() => "the module".into(),
        _ => "a comprehension".into(),
    }
}

/// Whether identifier `node` names what an import binds: `a` of `import a.b`, the alias of
/// `import a as b`, `y` of `from x import y`; `None` outside an import.
pub(super) fn import_binds(node: Node<'_>) -> Option<bool> {
    let mut child = node;
    while let Some(parent) = child.parent() {
        match parent.kind() {
            "dotted_name" => {
                let first = parent.named_child(0).is_some_and(|c| c.id() == child.id());
                if !first {
                    return Some(false);
                }
            }
            "aliased_import" => {
                let alias = parent
                    .child_by_field_name("alias")
                    .is_some_and(|c| c.id() == child.id());
                return Some(alias);
            }
            "import_statement" => return Some(true),
            "relative_import" => return Some(false),
            "import_from_statement" => {
                let module = parent
                    .child_by_field_name("module_name")
                    .is_some_and(|c| c.id() == child.id());
                return Some(!module);
            }
            _ => return None,
        }
        child = parent;
    }
    None
}

/// Whether `function` (a function definition) declares `name` `global` or `nonlocal`: its
/// bindings of it then belong to another scope.
pub(super) fn declares_elsewhere(function: Node<'_>, name: &str, text: &str) -> bool {
    declares(
        function,
        name,
        text,
        &["global_statement", "nonlocal_statement"],
    )
}

/// Whether `function` declares `name` `global`: its bindings of it are the module's.
pub(super) fn declares_global(function: Node<'_>, name: &str, text: &str) -> bool {
    declares(function, name, text, &["global_statement"])
}

fn declares(function: Node<'_>, name: &str, text: &str, kinds: &[&str]) -> bool {
    let mut stack = vec![function];
    let mut cursor = function.walk();
    while let Some(n) = stack.pop() {
        if kinds.contains(&n.kind()) {
            let mut c = n.walk();
            if n.named_children(&mut c)
                .any(|id| &text[id.byte_range()] == name)
            {
                return true;
            }
            continue;
        }
        if n.id() != function.id() && is_scope(n) {
            continue;
        }
        stack.extend(n.children(&mut cursor));
    }
    false
}
