//! Bindings CPython takes away again: a module-level `del NAME` (`_tmp = 5; LIMIT = _tmp * 2;
//! del _tmp`) leaves the name unbound for every function that runs after the import, and
//! `except E as NAME:` unbinds NAME at the end of its clause. A read the name check would take
//! as resolved by such a binding is judged as CPython runs it.

use tree_sitter::Node;

use super::{identifiers_named, is_binding, scopes};

/// Where a module-level `del NAME` unbinds `name` for good: the end of the last `del` standing
/// directly in the module after which nothing binds the name again (no later module-level
/// binding, no function declaring it `global` that assigns it). `None` where none does.
pub(super) fn deleted_at(root: Node<'_>, text: &str, name: &str) -> Option<usize> {
    let mut last_del: Option<usize> = None;
    let mut last_bind: Option<usize> = None;
    for node in identifiers_named(root, text, name) {
        if let Some(statement) = deleting_statement(node) {
            // A `del` inside `if`/`try` may not run: only one the import always runs counts.
            if statement.parent().is_some_and(|p| p.id() == root.id()) {
                last_del = last_del.max(Some(statement.end_byte()));
            }
            continue;
        }
        if !is_binding(node) {
            continue;
        }
        let scope = scopes::scope_of(node);
        if scope.id() == root.id() {
            last_bind = last_bind.max(Some(node.start_byte()));
        } else if scope.kind() == "function_definition"
            && scopes::declares_global(scope, name, text)
        {
            // A function may bind it again whenever it runs.
            return None;
        }
    }
    let deleted = last_del?;
    last_bind.is_none_or(|b| b < deleted).then_some(deleted)
}

/// Whether a read at `read`, whose scope chain is `chain` (innermost first), still sees the
/// module's binding of a name the module deletes at `deleted`: only module-level code (class
/// bodies included) that runs before the `del`.
pub(super) fn sees_before_del(read: Node<'_>, chain: &[Node<'_>], deleted: usize) -> bool {
    let runs_later = chain
        .iter()
        .any(|s| matches!(s.kind(), "function_definition" | "lambda"));
    !runs_later && read.start_byte() < deleted
}

/// The `del` statement that deletes identifier `node` as a whole name (`del x`, `del x, y`).
fn deleting_statement(node: Node<'_>) -> Option<Node<'_>> {
    let parent = node.parent()?;
    match parent.kind() {
        "delete_statement" => Some(parent),
        "expression_list" => parent.parent().filter(|g| g.kind() == "delete_statement"),
        _ => None,
    }
}

/// Whether identifier `node` is the `as` name of an `except` clause.
pub(super) fn is_except_alias(node: Node<'_>) -> bool {
    except_clause_of_alias(node).is_some()
}

fn except_clause_of_alias(node: Node<'_>) -> Option<Node<'_>> {
    let target = node.parent().filter(|p| p.kind() == "as_pattern_target")?;
    let pattern = target.parent().filter(|p| p.kind() == "as_pattern")?;
    pattern.parent().filter(|c| c.kind() == "except_clause")
}

/// Whether `read` stands in the body of an `except … as NAME` clause of its own scope, where
/// NAME is bound (CPython unbinds it when the clause ends).
pub(super) fn in_except_clause_binding(read: Node<'_>, text: &str, name: &str) -> bool {
    let scope = scopes::scope_of(read);
    let mut at = read;
    while let Some(parent) = at.parent() {
        if parent.id() == scope.id() {
            return false;
        }
        if parent.kind() == "except_clause" {
            let in_body = parent
                .named_children(&mut parent.walk())
                .filter(|c| c.kind() == "block")
                .any(|b| b.id() == at.id());
            let alias = parent
                .named_children(&mut parent.walk())
                .find(|c| c.kind() == "as_pattern")
                .and_then(|p| p.child_by_field_name("alias"))
                .and_then(|t| t.named_child(0));
            if in_body && alias.is_some_and(|a| &text[a.byte_range()] == name) {
                return true;
            }
        }
        at = parent;
    }
    false
}
