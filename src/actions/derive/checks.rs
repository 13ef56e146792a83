//! What `derive_class` checks before it writes a subclass: that the class and its `__init__`
//! are what callers reach (no decorator in between, no later rebinding), and that the copied
//! signature and the generated code mean at module level what they meant in the class.

use tree_sitter::Node;

use super::super::ActionFailure;
use super::super::signature::{Param, ParamKind};
use crate::python::significant_children;

/// A class decorator that keeps an `__init__` written in the class (dataclasses leave one
/// alone): any other may replace or wrap it.
const KEEPING_DECORATORS: &[&str] = &["dataclass", "dataclasses.dataclass"];

fn text<'s>(source: &'s str, n: Node<'_>) -> &'s str {
    &source[n.byte_range()]
}

fn refuse(at: Node<'_>, label: &str, why: String) -> ActionFailure {
    ActionFailure::at(at.byte_range(), label, why)
}

/// The class, its statement and its `__init__` are what callers get: a module-level class
/// without type parameters, under no decorator but a dataclass one, whose body binds
/// `__init__` once (the matched `def`), and whose name the module does not bind again.
pub(super) fn class_is_what_runs(
    def: Node<'_>,
    class: Node<'_>,
    root: Node<'_>,
    source: &str,
) -> Result<(), ActionFailure> {
    let statement = class
        .parent()
        .filter(|p| p.kind() == "decorated_definition")
        .unwrap_or(class);
    if statement.parent().is_none_or(|p| p.kind() != "module") {
        return Err(refuse(class, "this class", "`derive_class` derives from a class defined at module level; this one is nested (under a function, a class or an `if`), where its name may not be what the module binds".into()));
    }
    if let Some(types) = class.child_by_field_name("type_parameters") {
        return Err(refuse(types, "type parameters", "the class has type parameters: the derived class, outside their scope, could not name them".into()));
    }
    for decorator in significant_children(statement)
        .into_iter()
        .filter(|n| n.kind() == "decorator")
    {
        let written = text(source, decorator).trim_start_matches('@').trim();
        let name = written.split('(').next().unwrap_or("").trim();
        if !KEEPING_DECORATORS.contains(&name) {
            return Err(refuse(
                decorator,
                "this decorator",
                format!(
                    "`@{name}` may replace or wrap the class or its `__init__`: the derived class would forward to what the decorator left"
                ),
            ));
        }
    }
    let body = class.child_by_field_name("body");
    if let Some(other) = body.and_then(|b| other_init(b, def, source)) {
        return Err(refuse(other, "bound here too", "the class binds `__init__` more than once: the matched one may not be the one that runs".into()));
    }
    let base = class
        .child_by_field_name("name")
        .map_or("", |n| text(source, n));
    // Any other binding of the name after the class (or in a function, which runs later).
    let own = class.child_by_field_name("name");
    let in_function = |n: Node<'_>| {
        std::iter::successors(n.parent(), |p| p.parent()).any(|p| p.kind() == "function_definition")
    };
    let rebound = crate::python::names::module_binding_sites(root, source, base)
        .into_iter()
        .any(|n| Some(n) != own && (n.start_byte() > statement.start_byte() || in_function(n)));
    if rebound {
        return Err(refuse(
            class,
            "this class",
            format!(
                "the module binds `{base}` again after the class: the derived class would extend what the name holds then"
            ),
        ));
    }
    Ok(())
}

/// A binding of `__init__` in the class body other than `def` (nested functions and classes
/// aside).
fn other_init<'t>(body: Node<'t>, def: Node<'t>, source: &str) -> Option<Node<'t>> {
    let mut stack = vec![body];
    while let Some(n) = stack.pop() {
        let mut cursor = n.walk();
        for child in n.named_children(&mut cursor) {
            match child.kind() {
                "function_definition" | "class_definition" => {
                    let named = child
                        .child_by_field_name("name")
                        .is_some_and(|i| text(source, i) == "__init__");
                    if named && child != def {
                        return Some(child);
                    }
                }
                "assignment" | "augmented_assignment" => {
                    let left = child.child_by_field_name("left");
                    if left
                        .is_some_and(|l| text(source, l).split(',').any(|t| t.trim() == "__init__"))
                    {
                        return Some(child);
                    }
                    stack.push(child);
                }
                _ => stack.push(child),
            }
        }
    }
    None
}

/// The copied signature means what it meant: a first parameter taking the instance, no
/// parameter named `super` (the forwarding call reads it) or private (`__x` is mangled with the
/// class's name, so the derived class would pass another keyword), and no annotation reading a
/// name the class body binds (at module level it would read another binding, or none).
pub(super) fn signature_moves(
    def: Node<'_>,
    class: Node<'_>,
    params: &[Param],
    added: &[String],
    source: &str,
) -> Result<(), ActionFailure> {
    let list = def.child_by_field_name("parameters").unwrap_or(def);
    let first = params.first();
    if !first.is_some_and(|p| {
        matches!(
            p.kind,
            ParamKind::PositionalOnly | ParamKind::PositionalOrKeyword
        )
    }) {
        return Err(refuse(list, "these parameters", "`__init__` takes no positional first parameter for the instance: `super().__init__` in the derived class could not be called as it is".into()));
    }
    let names = params
        .iter()
        .map(|p| p.name.as_str())
        .chain(added.iter().map(String::as_str));
    for name in names {
        let private = name.starts_with("__") && !name.ends_with("__");
        if name == "super" || private {
            let why = if private {
                "is private: mangled with each class's name, the derived class would pass it under another name"
            } else {
                "would hide the `super` the forwarding call reads"
            };
            return Err(refuse(
                list,
                "these parameters",
                format!("a parameter `{name}` {why}"),
            ));
        }
    }
    let class_names = class_level_names(class, source);
    let annotations = significant_children(list)
        .into_iter()
        .filter_map(|p| p.child_by_field_name("type"))
        .chain(def.child_by_field_name("return_type"));
    for annotation in annotations {
        if let Some(read) = reads_any(annotation, &class_names, source) {
            return Err(refuse(
                annotation,
                "this annotation",
                format!(
                    "the annotation reads `{read}`, which the class body binds: at module level it would read another binding"
                ),
            ));
        }
    }
    Ok(())
}

/// Names the class body binds at its own level (assignments, `def`s, classes, imports).
fn class_level_names(class: Node<'_>, source: &str) -> Vec<String> {
    let Some(body) = class.child_by_field_name("body") else {
        return Vec::new();
    };
    let mut names = Vec::new();
    let mut stack: Vec<Node<'_>> = significant_children(body);
    while let Some(n) = stack.pop() {
        match n.kind() {
            "function_definition" | "class_definition" => {
                names.extend(
                    n.child_by_field_name("name")
                        .map(|i| text(source, i).to_string()),
                );
            }
            "decorated_definition" => stack.extend(n.child_by_field_name("definition")),
            "expression_statement" => {
                let mut cursor = n.walk();
                stack.extend(n.named_children(&mut cursor));
            }
            "assignment" | "augmented_assignment" => {
                if let Some(left) = n.child_by_field_name("left") {
                    let mut targets = vec![left];
                    while let Some(t) = targets.pop() {
                        match t.kind() {
                            "identifier" => names.push(text(source, t).to_string()),
                            "pattern_list" | "tuple_pattern" | "list_pattern" => {
                                let mut cursor = t.walk();
                                targets.extend(t.named_children(&mut cursor));
                            }
                            _ => {}
                        }
                    }
                }
                stack.extend(n.child_by_field_name("right"));
            }
            "import_statement" | "import_from_statement" => {
                let mut cursor = n.walk();
                for part in n.named_children(&mut cursor) {
                    let bound = part.child_by_field_name("alias").unwrap_or(part);
                    names.push(
                        text(source, bound)
                            .split('.')
                            .next()
                            .unwrap_or("")
                            .to_string(),
                    );
                }
            }
            _ => {}
        }
    }
    names
}

/// The first of `names` that `node` reads as a name (an attribute's own name does not count).
fn reads_any(node: Node<'_>, names: &[String], source: &str) -> Option<String> {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.kind() == "identifier" {
            let is_attribute = n.parent().is_some_and(|p| {
                p.kind() == "attribute" && p.child_by_field_name("attribute") == Some(n)
            });
            let name = text(source, n);
            if !is_attribute && names.iter().any(|c| c == name) {
                return Some(name.to_string());
            }
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    None
}

/// Whether `code` (a statement template, written into the derived `__init__`) would make it
/// something else than a plain method: a generator or a coroutine.
pub(super) fn suspends(code: &str) -> bool {
    suspends_in(crate::python::parse(code).root_node())
}

/// Whether `node` yields or awaits outside a function of its own.
pub(super) fn suspends_in(node: Node<'_>) -> bool {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "yield" | "await" => return true,
            // Their own functions: a `yield` there is theirs.
            "function_definition" | "lambda" | "class_definition" if n != node => continue,
            _ => {}
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    false
}

/// Whether any string piece of `node` is an f-string (its prefix holds `f`): Python makes no
/// docstring of one.
pub(super) fn is_fstring(node: Node<'_>, source: &str) -> bool {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.kind() == "string_start" && source[n.byte_range()].contains(['f', 'F']) {
            return true;
        }
        let mut cursor = n.walk();
        stack.extend(n.children(&mut cursor));
    }
    false
}
