//! What binds a name in the module's own namespace, and whether a read an edit wrote finds
//! the module's binding: what an added import needs to know it neither shadows another
//! binding nor is shadowed where the edit reads it.

use std::ops::Range;

use tree_sitter::Node;

use super::{binders, identifiers_named, in_import, is_binding, is_read, scopes};

/// The identifiers that bind `name` in the module namespace other than through an import:
/// assignments, `for`/`with`/walrus targets, definitions, `del`, `type X = …`, match
/// captures at module level, and any binding in a function that declares the name `global`.
pub fn module_binding_sites<'t>(root: Node<'t>, text: &str, name: &str) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    for node in identifiers_named(root, text, name) {
        if in_import(node) {
            continue;
        }
        let binds = is_binding(node) || is_deleted(node);
        if !binds {
            continue;
        }
        let scope = scopes::scope_of(node);
        let module_level = scope.id() == root.id()
            || (scope.kind() == "function_definition"
                && scopes::declares_global(scope, name, text));
        if module_level {
            out.push(node);
        }
    }
    out
}

/// `del name`.
fn is_deleted(node: Node<'_>) -> bool {
    node.parent().is_some_and(|p| {
        p.kind() == "delete_statement"
            || (p.kind() == "expression_list"
                && p.parent().is_some_and(|g| g.kind() == "delete_statement"))
    })
}

/// The first read of one of `names` inside an edit (`edits`: ranges in `output`) that a
/// scope nearer than the module binds: the module's import would not reach it. `(name, where,
/// the scope)`.
pub fn first_shadowed(
    output: &str,
    root: Node<'_>,
    edits: &[Range<usize>],
    names: &[&str],
) -> Option<(String, Range<usize>, String)> {
    for name in names {
        let binding = binders(root, output, name);
        for node in identifiers_named(root, output, name) {
            let at = node.byte_range();
            if !edits.iter().any(|e| e.start <= at.start && at.end <= e.end) || !is_read(node) {
                continue;
            }
            let chain = scopes::visible_from(node);
            let nearest = chain
                .iter()
                .find(|c| binding.iter().any(|b| b.id() == c.id()));
            if let Some(scope) = nearest
                && scope.parent().is_some()
            {
                return Some((
                    name.to_string(),
                    node.byte_range(),
                    scopes::describe(*scope, output),
                ));
            }
        }
    }
    None
}
