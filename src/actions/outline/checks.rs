//! What `outline` checks before it moves a body: where the function stands, what its body
//! reads that only a class (or an enclosing function) gives it, whether the new name is free,
//! and that the forwarding call binds every parameter to its own name.

use tree_sitter::Node;

use super::super::signature::{Param, ParamKind};
use super::super::{ActionFailure, same_code};
use crate::python::significant_children;

/// Where the outlined function stands.
pub(in crate::actions) struct Place<'t> {
    /// The module-level statement holding it (its class, or itself; decorators included).
    pub top: Node<'t>,
    /// Its class, for a method.
    pub class: Option<Node<'t>>,
}

impl<'t> Place<'t> {
    /// The place of `def`: a module-level function or a method of a module-level class. A
    /// function nested deeper may read names of the scopes around it, which a module-level
    /// function cannot see: refused.
    pub fn of(def: Node<'t>, source: &str) -> Result<Place<'t>, ActionFailure> {
        let outer = decorated(def);
        let parent = outer.parent();
        if parent.is_some_and(|p| p.kind() == "module") {
            return Ok(Place {
                top: outer,
                class: None,
            });
        }
        let class = parent
            .filter(|p| p.kind() == "block")
            .and_then(|b| b.parent())
            .filter(|c| c.kind() == "class_definition");
        if let Some(class) = class
            && decorated(class)
                .parent()
                .is_some_and(|p| p.kind() == "module")
        {
            return Ok(Place {
                top: decorated(class),
                class: Some(class),
            });
        }
        let name = def
            .child_by_field_name("name")
            .map_or("", |n| &source[n.byte_range()]);
        Err(ActionFailure::at(
            def.byte_range(),
            "nested here",
            format!(
                "`{name}` is neither a module-level function nor a method of a module-level class: its body may read names of the scopes around it, which a module-level function cannot see"
            ),
        ))
    }
}

/// `node`, or the `decorated_definition` holding it.
fn decorated(node: Node<'_>) -> Node<'_> {
    node.parent()
        .filter(|p| p.kind() == "decorated_definition")
        .unwrap_or(node)
}

/// Whether `body` (after the docstring `kept`) is exactly the `forward` statement.
pub(super) fn is_forwarder(
    body: Node<'_>,
    kept: Option<Node<'_>>,
    forward: &str,
    source: &str,
) -> bool {
    let statements = significant_children(body);
    let rest = &statements[usize::from(kept.is_some())..];
    same_code(rest, source, forward)
}

/// Refuses a function with type parameters (`def f[T](x: T)`): its body may read them, and a
/// module-level copy would make other `TypeVar`s of the same names.
pub(super) fn signature_can_move(def: Node<'_>, source: &str) -> Result<(), ActionFailure> {
    match def.child_by_field_name("type_parameters") {
        Some(tp) => Err(ActionFailure::at(
            tp.byte_range(),
            "type parameters",
            format!(
                "the function has type parameters `{}`, which its body may read: outlined, they would be other objects",
                &source[tp.byte_range()]
            ),
        )),
        None => Ok(()),
    }
}

/// Refuses module-level statements after `top` up to and including `anchor` that run code at
/// import (a call, a class body, a decorator): one may call the function before the outline,
/// placed after `anchor`, exists. Imports, plain `def`s, docstrings and `pass` run nothing.
pub(super) fn nothing_runs_between(
    top: Node<'_>,
    anchor: Node<'_>,
    named: &str,
) -> Result<(), ActionFailure> {
    // `after:` naming the statement holding the function itself: what runs while it runs (a
    // class body, its decorators) comes before the outline too.
    let mut next = if anchor.id() == top.id() {
        Some(top)
    } else {
        top.next_named_sibling()
    };
    while let Some(statement) = next {
        if statement.start_byte() > anchor.start_byte() {
            break;
        }
        let quiet = match statement.kind() {
            // A `def` runs its defaults and annotations when it runs.
            "function_definition" => !["parameters", "return_type"].iter().any(|f| {
                statement
                    .child_by_field_name(f)
                    .is_some_and(|n| holds_call(n))
            }),
            "import_statement"
            | "import_from_statement"
            | "future_import_statement"
            | "pass_statement"
            | "comment" => true,
            "expression_statement" => statement
                .named_child(0)
                .is_some_and(|c| c.kind() == "string"),
            _ => false,
        };
        if !quiet {
            return Err(ActionFailure::at(
                statement.byte_range(),
                "runs at import",
                format!(
                    "this statement runs code at import between the function and `after: {named}`: it may call the function before its outline exists"
                ),
            )
            .help("drop `after` (the outline then stands before the function's statement)"));
        }
        next = statement.next_named_sibling();
    }
    Ok(())
}

/// Whether the module defines a function `name` at its top level.
pub(super) fn defines(root: Node<'_>, name: &str, source: &str) -> bool {
    top_level_binding(root, name, source).is_some_and(|n| {
        let def = if n.kind() == "decorated_definition" {
            n.child_by_field_name("definition").unwrap_or(n)
        } else {
            n
        };
        def.kind() == "function_definition"
    })
}

/// The module-level statement that defines `name`: a function, a class, or an assignment.
pub(in crate::actions) fn top_level_binding<'t>(
    root: Node<'t>,
    name: &str,
    source: &str,
) -> Option<Node<'t>> {
    significant_children(root).into_iter().rev().find(|s| {
        let def = if s.kind() == "decorated_definition" {
            s.child_by_field_name("definition").unwrap_or(*s)
        } else {
            *s
        };
        let named = |n: Node<'_>| {
            n.child_by_field_name("name")
                .is_some_and(|i| &source[i.byte_range()] == name)
        };
        match def.kind() {
            "function_definition" | "class_definition" => named(def),
            "expression_statement" => def
                .named_child(0)
                .filter(|a| a.kind() == "assignment")
                .and_then(|a| a.child_by_field_name("left"))
                .is_some_and(|l| &source[l.byte_range()] == name),
            _ => false,
        }
    })
}

/// Whether `def` is a module-level function that another function of the file forwards to
/// (`return def_name(...)` as its whole body): an outline already made, not to be outlined
/// again by a pattern that matches every function.
pub(super) fn forwards_elsewhere(def: Node<'_>, root: Node<'_>, source: &str) -> bool {
    let Some(name) = def.child_by_field_name("name") else {
        return false;
    };
    let name = &source[name.byte_range()];
    if decorated(def).parent().is_none_or(|p| p.kind() != "module") {
        return false;
    }
    let mut stack = vec![root];
    let mut cursor = root.walk();
    while let Some(n) = stack.pop() {
        if n.kind() == "function_definition"
            && n.id() != def.id()
            && let Some(body) = n.child_by_field_name("body")
        {
            let statements = significant_children(body);
            if let Some(last) = statements.last()
                && statements.len() <= 2
                && last.kind() == "return_statement"
                && last
                    .named_child(0)
                    .and_then(forwarded_call)
                    .and_then(|c| c.child_by_field_name("function"))
                    .is_some_and(|f| &source[f.byte_range()] == name)
            {
                return true;
            }
        }
        if matches!(
            n.kind(),
            "module" | "block" | "class_definition" | "decorated_definition"
        ) || n.kind() == "function_definition"
        {
            stack.extend(n.children(&mut cursor));
        }
    }
    false
}

/// The call a forwarder's `return` returns: `CALL`, or `(yield from CALL)` for a generator.
fn forwarded_call(value: Node<'_>) -> Option<Node<'_>> {
    let mut node = value;
    while node.kind() == "parenthesized_expression" {
        node = node.named_child(0)?;
    }
    if node.kind() == "yield" {
        node = node.named_child(0)?;
    }
    (node.kind() == "call").then_some(node)
}

/// Whether `body` makes its function a generator: a `yield` outside any nested function,
/// lambda or class (those are scopes of their own).
pub(super) fn is_generator(body: Node<'_>) -> bool {
    let mut stack = vec![body];
    let mut cursor = body.walk();
    while let Some(n) = stack.pop() {
        match n.kind() {
            "yield" => return true,
            "function_definition" | "lambda" | "class_definition" => {}
            _ => stack.extend(n.children(&mut cursor)),
        }
    }
    false
}

/// Refuses a body that would run differently outside its class: `super()` without arguments
/// and `__class__` need the class's cell, private names (`__x`) are mangled only inside the
/// class, and an `async def` would need its caller to await.
pub(super) fn body_can_move(
    def: Node<'_>,
    body: Node<'_>,
    place: &Place<'_>,
    source: &str,
) -> Result<(), ActionFailure> {
    if source[def.byte_range()].starts_with("async") {
        return Err(ActionFailure::at(
            def.byte_range(),
            "async",
            "`outline` forwards with a plain call; an `async def` is not outlined".into(),
        ));
    }
    let mut stack = vec![body];
    let mut cursor = body.walk();
    while let Some(n) = stack.pop() {
        let text = &source[n.byte_range()];
        let refusal = match n.kind() {
            "call" if is_bare_super(n, source) => Some(
                "calls `super()` without arguments, which needs the `__class__` cell only a method has: outlined, it raises `RuntimeError: super(): __class__ cell not found`".to_string(),
            ),
            // `s = super; s()`: naming `super` at all is what gives a method its class cell.
            "identifier"
                if text == "super"
                    && !is_super_with_arguments(n, source)
                    && !crate::python::is_attribute_name(n) =>
            {
                Some(
                "names `super` other than as `super(Class, obj)`: through an alias it is called without arguments, which needs the `__class__` cell only a method has".to_string(),
            )
            }
            "identifier" if text == "__class__" => Some(
                "reads `__class__`, which only a method's body has".to_string(),
            ),
            "identifier" if place.class.is_some() && is_private(text) => Some(format!(
                "uses the private name `{text}`, which Python mangles to `_{}{text}` inside the class only: outlined, it would name something else",
                class_name(place, source).trim_start_matches('_')
            )),
            _ => None,
        };
        if let Some(why) = refusal {
            return Err(ActionFailure::at(n.byte_range(), "here", why).help(
                "outline a function whose body does not depend on its class, or keep it as it is",
            ));
        }
        stack.extend(n.children(&mut cursor));
    }
    Ok(())
}

fn class_name<'s>(place: &Place<'_>, source: &'s str) -> &'s str {
    place
        .class
        .and_then(|c| c.child_by_field_name("name"))
        .map_or("", |n| &source[n.byte_range()])
}

/// `super()`, called with no arguments.
fn is_bare_super(call: Node<'_>, source: &str) -> bool {
    let function = call.child_by_field_name("function");
    let arguments = call.child_by_field_name("arguments");
    function.is_some_and(|f| &source[f.byte_range()] == "super")
        && arguments.is_some_and(|a| a.named_child_count() == 0)
}

/// `super` as the callee of a call with arguments (`super(Class, obj)`), or of a bare
/// `super()` (refused on its own, with its own message).
fn is_super_with_arguments(identifier: Node<'_>, source: &str) -> bool {
    identifier
        .parent()
        .filter(|c| c.kind() == "call")
        .filter(|c| c.child_by_field_name("function") == Some(identifier))
        .is_some_and(|c| is_bare_super(c, source) || c.child_by_field_name("arguments").is_some())
}

/// Whether `node` holds a call (outside a lambda's body, which runs later).
fn holds_call(node: Node<'_>) -> bool {
    let mut stack = vec![node];
    let mut cursor = node.walk();
    while let Some(n) = stack.pop() {
        match n.kind() {
            "call" => return true,
            "lambda" => {}
            _ => stack.extend(n.children(&mut cursor)),
        }
    }
    false
}

/// A name Python mangles in a class: two leading underscores, not two trailing.
pub(super) fn is_private(name: &str) -> bool {
    name.starts_with("__") && !name.ends_with("__")
}

/// Refuses a new name the module already uses anywhere outside the function's body (its
/// parameters count: the forwarder's call would name the parameter): it would shadow that
/// binding or be shadowed by it.
pub(super) fn name_is_free(
    name: &str,
    root: Node<'_>,
    body: Node<'_>,
    source: &str,
) -> Result<(), ActionFailure> {
    for node in crate::python::names::identifiers_named(root, source, name) {
        if body.byte_range().contains(&node.start_byte()) {
            continue;
        }
        return Err(ActionFailure::at(
            node.byte_range(),
            "already used here",
            format!("`{name}` is already a name in this module: the outline would clash with it"),
        )
        .help("give `outline` another `name`"));
    }
    Ok(())
}

/// Whether the call arguments `args` (as written: `a`, `*a`, `k=k`, `**a`) bind each of
/// `params` to the argument of its own name, as Python binds them; `Err` says which does not.
pub(super) fn binds_by_name(params: &[Param], args: &[String]) -> Result<(), String> {
    let positional: Vec<&Param> = params
        .iter()
        .filter(|p| {
            matches!(
                p.kind,
                ParamKind::PositionalOnly | ParamKind::PositionalOrKeyword
            )
        })
        .collect();
    let mut bound: Vec<&str> = Vec::new();
    let mut next = 0;
    let has = |kind: ParamKind, name: &str| params.iter().any(|p| p.kind == kind && p.name == name);
    for arg in args {
        if let Some(name) = arg.strip_prefix("**") {
            if !has(ParamKind::VarKeyword, name) {
                return Err(format!("`{arg}` spreads into no `**{name}` parameter"));
            }
            bound.push(name);
        } else if let Some(name) = arg.strip_prefix('*') {
            // Spread after every positional parameter, its items all land in `*name`.
            if !has(ParamKind::VarPositional, name) || next != positional.len() {
                return Err(format!("`{arg}` would fill parameters before `*{name}`"));
            }
            bound.push(name);
        } else if let Some((key, value)) = arg.split_once('=') {
            if key != value || !has(ParamKind::KeywordOnly, key) {
                return Err(format!(
                    "`{arg}` binds no keyword-only parameter of its name"
                ));
            }
            bound.push(key);
        } else {
            match positional.get(next) {
                Some(p) if p.name == *arg => bound.push(arg),
                _ => return Err(format!("`{arg}` would bind another parameter")),
            }
            next += 1;
        }
    }
    match params.iter().find(|p| !bound.contains(&p.name.as_str())) {
        Some(p) => Err(format!("parameter `{}` would not be forwarded", p.name)),
        None => Ok(()),
    }
}
