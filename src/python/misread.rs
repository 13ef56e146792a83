//! Where tree-sitter-python's tree is not CPython's: the nodes a match must not stand on.
//!
//! Three shapes, found by the matching oracle (`tests/python/oracles/matching.py`):
//! - `n := a if b else c` is `(n := a) if b else c` to tree-sitter (its conditional binds
//!   tighter than `:=`); CPython reads `n := (a if b else c)`.
//! - `with a if b else c as w:` (and `with lambda: a as w:`) puts `c as w` (`a as w`) in the
//!   conditional (the lambda); CPython binds `w` to the whole expression.
//! - `await a ** b` is `await (a ** b)` to tree-sitter; CPython reads `(await a) ** b`.
//!
//! Matched there, `$N := $V` would bind `$V` to `a`, `$A if $B else $C` would bind `$C` to
//! `c as w`, and an edit would change what the code means though its text still compiles, so
//! such a site is refused, never edited.

use tree_sitter::Node;

/// How CPython reads `node`, where it is one tree-sitter builds and CPython's AST has not, or
/// not with that extent: a walrus that is a conditional's body and that conditional; an `as`
/// target taken into an expression, and every node whose last operand holds it; an `await`
/// over a power and that power. `None` for a node both read alike.
pub fn misread(node: Node<'_>) -> Option<&'static str> {
    const WALRUS: &str = "`n := a if b else c` is `n := (a if b else c)`";
    const AS: &str = "`with a if b else c as w` binds `w` to the whole expression";
    const AWAIT: &str = "`await a ** b` is `(await a) ** b`";
    let misread = match node.kind() {
        "conditional_expression" if walrus_body(node) => return Some(WALRUS),
        "named_expression" => node.parent().is_some_and(|p| {
            p.kind() == "conditional_expression" && walrus_body(p) && p.named_child(0) == Some(node)
        }),
        "as_pattern" => {
            return node
                .parent()
                .is_some_and(|p| swallows_as(p.kind()))
                .then_some(AS);
        }
        "await" => return node.named_child(0).is_some_and(is_power).then_some(AWAIT),
        "binary_operator" if is_power(node) => {
            return node
                .parent()
                .is_some_and(|p| p.kind() == "await")
                .then_some(AWAIT);
        }
        _ => return holds_swallowed_as(node).then_some(AS),
    };
    misread.then_some(WALRUS)
}

/// `a ** b`, whose left operand an `await` before it binds in CPython.
fn is_power(node: Node<'_>) -> bool {
    node.kind() == "binary_operator"
        && node
            .child_by_field_name("operator")
            .is_some_and(|op| op.kind() == "**")
}

fn walrus_body(conditional: Node<'_>) -> bool {
    conditional
        .named_child(0)
        .is_some_and(|c| c.kind() == "named_expression")
}

/// Expressions whose last operand tree-sitter lets run over a `with` item's `as`.
fn swallows_as(kind: &str) -> bool {
    matches!(kind, "conditional_expression" | "lambda")
}

/// Whether the chain of last operands below `node` ends in a swallowed `as` target.
fn holds_swallowed_as(node: Node<'_>) -> bool {
    let mut current = node;
    while swallows_as(current.kind()) {
        let Some(last) = current.named_child(current.named_child_count().saturating_sub(1) as u32)
        else {
            return false;
        };
        if last.kind() == "as_pattern" {
            return true;
        }
        current = last;
    }
    false
}
