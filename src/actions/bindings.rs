//! Which statements may have bound a name when a block (a module, a class body) has run, as
//! Python runs it: a later binding replaces an earlier one, a binding in one branch of an `if`
//! or `try` leaves the others possible, and anything that binds the name in a way the engine
//! does not read (an assignment, `import x as name`, a `for` target, `del`) is kept as such, so
//! the lookup refuses rather than reads past it.

use tree_sitter::Node;

use crate::python::{definition_name, significant_children};

/// One statement that may be what a name refers to after its block ran.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Binding<'t> {
    /// Not bound by the block at all (on some path through it).
    Unbound,
    /// `class name(...)`.
    Class(Node<'t>),
    /// `def name(...)`: the `function_definition` and the statement that holds it (its
    /// `decorated_definition`, or itself).
    Function(Node<'t>, Node<'t>),
    /// `from module import original as name`: `from` is the statement.
    Import {
        /// The statement.
        from: Node<'t>,
        /// The module as written (leading dots kept).
        module_at: Node<'t>,
        /// The name imported.
        original: Node<'t>,
    },
    /// `from module import *`, which may or may not bind the name.
    Star {
        /// The module as written.
        module_at: Node<'t>,
    },
    /// Any other binding: the statement that makes it.
    Other(Node<'t>),
}

impl Binding<'_> {
    fn key(&self) -> (usize, usize) {
        match self {
            Binding::Unbound => (usize::MAX, 9),
            Binding::Class(n) | Binding::Other(n) => (n.start_byte(), 0),
            Binding::Function(_, outer) => (outer.start_byte(), 1),
            Binding::Import { original, .. } => (original.start_byte(), 2),
            Binding::Star { module_at } => (module_at.start_byte(), 3),
        }
    }
}

/// The bindings of `name` that may be live after the statements of `block` have run;
/// `Unbound` among them where some path through the block leaves the name unbound. A star
/// import keeps what came before it possible.
pub(crate) fn live_bindings<'t>(block: Node<'t>, text: &str, name: &str) -> Vec<Binding<'t>> {
    // A block whose text never names it binds nothing, and is not walked.
    if !text[block.byte_range()].contains(name) {
        return vec![Binding::Unbound];
    }
    flow(
        &significant_children(block),
        text,
        name,
        vec![Binding::Unbound],
    )
}

/// [`live_bindings`] of a block whose statements that may bind `name` are `statements` (in
/// order: those whose text holds it, and star imports; any others as well).
pub(crate) fn live_bindings_among<'t>(
    statements: &[Node<'t>],
    text: &str,
    name: &str,
) -> Vec<Binding<'t>> {
    flow(statements, text, name, vec![Binding::Unbound])
}

fn union<'t>(mut a: Vec<Binding<'t>>, b: Vec<Binding<'t>>) -> Vec<Binding<'t>> {
    for x in b {
        if !a.iter().any(|y| y.key() == x.key()) {
            a.push(x);
        }
    }
    a
}

/// The bindings live after `statements` run, given those live before.
fn flow<'t>(
    statements: &[Node<'t>],
    text: &str,
    name: &str,
    mut live: Vec<Binding<'t>>,
) -> Vec<Binding<'t>> {
    for &statement in statements {
        let star = statement.kind() == "import_from_statement"
            && text[statement.byte_range()].contains('*');
        if !star && !text[statement.byte_range()].contains(name) {
            continue;
        }
        live = step(statement, text, name, live);
    }
    live
}

/// The statements of a clause's `body` (or `consequence`, or the clause itself).
fn body<'t>(clause: Node<'t>) -> Vec<Node<'t>> {
    let block = clause
        .child_by_field_name("body")
        .or_else(|| clause.child_by_field_name("consequence"))
        .or_else(|| {
            significant_children(clause)
                .into_iter()
                .find(|c| c.kind() == "block")
        });
    block.map_or_else(Vec::new, significant_children)
}

fn step<'t>(
    statement: Node<'t>,
    text: &str,
    name: &str,
    live: Vec<Binding<'t>>,
) -> Vec<Binding<'t>> {
    let named = |n: Node<'_>| definition_name(n, text) == Some(name);
    match statement.kind() {
        "class_definition" if named(statement) => vec![Binding::Class(statement)],
        "function_definition" if named(statement) => {
            vec![Binding::Function(statement, statement)]
        }
        "decorated_definition" => match statement.child_by_field_name("definition") {
            Some(def) if named(def) && def.kind() == "class_definition" => {
                // A decorator may return anything in place of the class.
                vec![Binding::Other(statement)]
            }
            Some(def) if named(def) => vec![Binding::Function(def, statement)],
            _ => live,
        },
        "class_definition" | "function_definition" => live,
        "import_from_statement" => import_from(statement, text, name, live),
        "future_import_statement" => live,
        "if_statement" | "try_statement" | "for_statement" | "while_statement"
        | "with_statement" | "match_statement" => compound(statement, text, name, live),
        _ if binds_otherwise(statement, text, name) => vec![Binding::Other(statement)],
        _ => live,
    }
}

/// The bindings live after a compound statement: every branch that may run, and what came
/// before where a branch may not.
fn compound<'t>(
    statement: Node<'t>,
    text: &str,
    name: &str,
    live: Vec<Binding<'t>>,
) -> Vec<Binding<'t>> {
    match statement.kind() {
        "if_statement" => {
            let mut out = flow(&body(statement), text, name, live.clone());
            let mut has_else = false;
            for clause in significant_children(statement) {
                match clause.kind() {
                    "elif_clause" => {
                        out = union(out, flow(&body(clause), text, name, live.clone()))
                    }
                    "else_clause" => {
                        has_else = true;
                        out = union(out, flow(&body(clause), text, name, live.clone()));
                    }
                    _ => {}
                }
            }
            if has_else { out } else { union(live, out) }
        }
        "try_statement" => {
            // Any statement of a `try` may be the last to run: every binding in it is
            // possible, and so is what came before.
            let mut out = live.clone();
            let mut clauses = vec![statement];
            clauses.extend(significant_children(statement));
            for clause in clauses {
                if clause.kind() == "try_statement" || clause.kind().ends_with("_clause") {
                    out = union(out, flow(&body(clause), text, name, live.clone()));
                }
            }
            out
        }
        "for_statement" | "while_statement" => {
            if statement.kind() == "for_statement" && binds_target(statement, "left", text, name) {
                return union(live, vec![Binding::Other(statement)]);
            }
            let mut out = union(
                live.clone(),
                flow(&body(statement), text, name, live.clone()),
            );
            for clause in significant_children(statement) {
                if clause.kind() == "else_clause" {
                    out = union(out, flow(&body(clause), text, name, live.clone()));
                }
            }
            out
        }
        "with_statement" => flow(&body(statement), text, name, live),
        "match_statement" => {
            let mut out = live.clone();
            let mut stack = vec![statement];
            while let Some(n) = stack.pop() {
                if n.kind() == "case_clause" {
                    out = union(out, flow(&body(n), text, name, live.clone()));
                } else {
                    let mut cursor = n.walk();
                    stack.extend(n.named_children(&mut cursor));
                }
            }
            out
        }
        _ => live,
    }
}

fn import_from<'t>(
    statement: Node<'t>,
    text: &str,
    name: &str,
    live: Vec<Binding<'t>>,
) -> Vec<Binding<'t>> {
    let Some(module_at) = statement.child_by_field_name("module_name") else {
        return live;
    };
    let mut cursor = statement.walk();
    if statement
        .children(&mut cursor)
        .any(|c| c.kind() == "wildcard_import")
    {
        return union(live, vec![Binding::Star { module_at }]);
    }
    let mut cursor = statement.walk();
    for imported in statement.children_by_field_name("name", &mut cursor) {
        let (original, bound) = match imported.kind() {
            "aliased_import" => (
                imported.child_by_field_name("name"),
                imported.child_by_field_name("alias"),
            ),
            _ => (Some(imported), Some(imported)),
        };
        if let (Some(original), Some(bound)) = (original, bound)
            && &text[bound.byte_range()] == name
        {
            return vec![Binding::Import {
                from: statement,
                module_at,
                original,
            }];
        }
    }
    live
}

/// Whether the assignment-like `field` of `node` binds `name` (a name among its targets).
fn binds_target(node: Node<'_>, field: &str, text: &str, name: &str) -> bool {
    node.child_by_field_name(field)
        .is_some_and(|target| names_in_target(target, text).any(|n| n == name))
}

fn names_in_target<'a>(target: Node<'_>, text: &'a str) -> impl Iterator<Item = &'a str> {
    let mut stack = vec![target];
    let mut out = Vec::new();
    while let Some(n) = stack.pop() {
        match n.kind() {
            "identifier" => out.push(&text[n.byte_range()]),
            // `a.b = ...` and `a[i] = ...` bind no name.
            "attribute" | "subscript" => {}
            _ => {
                let mut cursor = n.walk();
                stack.extend(n.named_children(&mut cursor));
            }
        }
    }
    out.into_iter()
}

/// Whether a simple statement binds `name` some way the lookup does not follow: assignment
/// (plain, augmented, annotated, walrus at the top), `import name` / `import x as name`, `del`,
/// `global`/`nonlocal`, or a `with ... as name`.
fn binds_otherwise(statement: Node<'_>, text: &str, name: &str) -> bool {
    match statement.kind() {
        "expression_statement" => significant_children(statement).into_iter().any(|e| {
            matches!(e.kind(), "assignment" | "augmented_assignment")
                && (binds_target(e, "left", text, name) || chained_binds(e, text, name))
                || e.kind() == "named_expression"
                    && e.child_by_field_name("name")
                        .is_some_and(|n| &text[n.byte_range()] == name)
        }),
        "import_statement" => {
            let mut cursor = statement.walk();
            statement
                .children_by_field_name("name", &mut cursor)
                .any(|imported| {
                    let bound = match imported.kind() {
                        "aliased_import" => imported.child_by_field_name("alias"),
                        // `import a.b` binds `a`.
                        _ => Some(imported),
                    };
                    bound.is_some_and(|b| text[b.byte_range()].split('.').next() == Some(name))
                })
        }
        "delete_statement" | "global_statement" | "nonlocal_statement" => {
            names_in_target(statement, text).any(|n| n == name)
        }
        _ => false,
    }
}

/// `a = b = value`: tree-sitter nests the second assignment on the right.
fn chained_binds(assignment: Node<'_>, text: &str, name: &str) -> bool {
    let mut right = assignment.child_by_field_name("right");
    while let Some(r) = right.filter(|r| r.kind() == "assignment") {
        if binds_target(r, "left", text, name) {
            return true;
        }
        right = r.child_by_field_name("right");
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::parse;

    fn kinds(src: &str, name: &str) -> Vec<String> {
        let tree = parse(src);
        live_bindings(tree.root_node(), src, name)
            .iter()
            .map(|b| match b {
                Binding::Unbound => "unbound".to_string(),
                Binding::Class(n) => format!("class@{}", n.start_position().row + 1),
                Binding::Function(_, o) => format!("def@{}", o.start_position().row + 1),
                Binding::Import { from, .. } => format!("import@{}", from.start_position().row + 1),
                Binding::Star { module_at } => {
                    format!("star@{}", module_at.start_position().row + 1)
                }
                Binding::Other(n) => format!("other@{}", n.start_position().row + 1),
            })
            .collect()
    }

    #[test]
    fn the_last_binding_wins_and_branches_stay_possible() {
        assert_eq!(kinds("class L: pass\nclass L(X): pass\n", "L"), ["class@2"]);
        assert_eq!(kinds("x = 1\n", "L"), ["unbound"]);
        assert_eq!(
            kinds("if c:\n    def L(): pass\n", "L"),
            ["unbound", "def@2"]
        );
        assert_eq!(kinds("class L: pass\nL = Other\n", "L"), ["other@2"]);
        assert_eq!(
            kinds("from a import L\nif c:\n    class L: pass\n", "L"),
            ["import@1", "class@3"]
        );
        assert_eq!(
            kinds(
                "if c:\n    from a import L\nelse:\n    from b import L\n",
                "L"
            ),
            ["import@2", "import@4"]
        );
        assert_eq!(
            kinds(
                "try:\n    from a import L\nexcept ImportError:\n    L = None\n",
                "L"
            ),
            ["unbound", "import@2", "other@4"]
        );
        assert_eq!(
            kinds("class L: pass\nfrom m import *\n", "L"),
            ["class@1", "star@2"]
        );
        assert_eq!(kinds("import L\n", "L"), ["other@1"]);
        assert_eq!(kinds("import L.x\n", "L"), ["other@1"]);
        assert_eq!(
            kinds("def f(): pass\nfor f in x: pass\n", "f"),
            ["def@1", "other@2"]
        );
        assert_eq!(kinds("def f(): pass\ndel f\n", "f"), ["other@2"]);
        assert_eq!(kinds("L = M = 1\n", "M"), ["other@1"]);
        assert_eq!(kinds("x.L = 1\nL2 = 3\n", "L"), ["unbound"]);
        assert_eq!(kinds("@dec\nclass L: pass\n", "L"), ["other@1"]);
    }
}
