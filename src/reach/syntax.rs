//! Syntax helpers for reading facts: expressions reduced to what call resolution follows,
//! annotations as the types they name, assignment targets, decorators.

use tree_sitter::Node;

use super::model::{Binding, Expr, Kind, Local, Unit};

/// A definition without its decorators, and the decorators' expressions.
pub(super) fn undecorate(stmt: Node<'_>) -> (Node<'_>, Vec<Node<'_>>) {
    if stmt.kind() != "decorated_definition" {
        return (stmt, Vec::new());
    }
    let mut decorators = Vec::new();
    let mut cursor = stmt.walk();
    for child in stmt.named_children(&mut cursor) {
        if child.kind() == "decorator"
            && let Some(e) = child.named_child(0)
        {
            decorators.push(e);
        }
    }
    let def = stmt.child_by_field_name("definition").unwrap_or(stmt);
    (def, decorators)
}

pub(super) fn kind_of(decorators: &[Node<'_>], text: &str) -> Kind {
    for d in decorators {
        match &text[d.byte_range()] {
            "staticmethod" => return Kind::Static,
            "classmethod" => return Kind::ClassMethod,
            _ => {}
        }
    }
    Kind::Plain
}

/// The names a target binds (`a`, `a, b`, `(a, *b)`); attributes and items bind none.
pub(super) fn target_names(node: Node<'_>, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "identifier" => out.push(text[n.byte_range()].to_string()),
            "attribute" | "subscript" => {}
            _ => {
                let mut cursor = n.walk();
                stack.extend(n.named_children(&mut cursor));
            }
        }
    }
    out
}

/// The names a `for` target binds, each with what it holds: an item of the iterable for a
/// single name (`for layer in self.layers`) and for the second of `enumerate`'s pairs.
pub(super) fn loop_targets(
    left: Node<'_>,
    items: Option<Expr>,
    text: &str,
) -> Vec<(String, Local)> {
    let item = |e: Expr| Local::Assigned(Expr::Item(Box::new(e)));
    if left.kind() == "identifier" {
        let local = items.map_or(Local::Opaque, item);
        return vec![(text[left.byte_range()].to_string(), local)];
    }
    let names = target_names(left, text);
    // `for i, x in enumerate(xs)`: `x` is an item of `xs`.
    if let (2, Some(Expr::Enumerate(xs))) = (names.len(), items) {
        let mut out = vec![(names[0].clone(), Local::Builtin)];
        out.push((names[1].clone(), item(*xs)));
        return out;
    }
    names.into_iter().map(|n| (n, Local::Opaque)).collect()
}

/// `from ..x import` in package `package`, made absolute.
pub(super) fn absolute(package: &str, written: &str) -> String {
    let rest = written.trim_start_matches('.');
    let level = written.len() - rest.len();
    if level == 0 {
        return rest.to_string();
    }
    let mut parts: Vec<&str> = package.split('.').filter(|p| !p.is_empty()).collect();
    for _ in 1..level {
        parts.pop();
    }
    if !rest.is_empty() {
        parts.push(rest);
    }
    parts.join(".")
}

pub(super) fn short(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    if line.chars().count() > 60 {
        format!("{}…", line.chars().take(60).collect::<String>())
    } else {
        line.to_string()
    }
}

/// An annotation as the types it names: `Optional[X]`, `Union[X, Y]`, `X | Y`, `"X"`.
pub(super) fn annotation(node: Node<'_>, text: &str) -> Expr {
    let node = if node.kind() == "type" {
        node.named_child(0).unwrap_or(node)
    } else {
        node
    };
    match node.kind() {
        "string" => {
            let inner = text[node.byte_range()].trim_matches(|c| c == '"' || c == '\'');
            dotted(inner).unwrap_or(Expr::Other)
        }
        "binary_operator" => Expr::Union(
            ["left", "right"]
                .iter()
                .filter_map(|f| node.child_by_field_name(f))
                .map(|n| annotation(n, text))
                .collect(),
        ),
        "subscript" | "generic_type" => {
            let head = node
                .child_by_field_name("value")
                .or_else(|| node.named_child(0))
                .map(|h| &text[h.byte_range()]);
            match head {
                Some("Optional" | "typing.Optional" | "Union" | "typing.Union") => {
                    let mut cursor = node.walk();
                    let args: Vec<Expr> = node
                        .named_children(&mut cursor)
                        .skip(1)
                        .flat_map(|a| {
                            if a.kind() == "type_parameter" {
                                let mut c = a.walk();
                                a.named_children(&mut c)
                                    .map(|t| annotation(t, text))
                                    .collect::<Vec<_>>()
                            } else {
                                vec![annotation(a, text)]
                            }
                        })
                        .collect();
                    Expr::Union(args)
                }
                _ => Expr::Other,
            }
        }
        _ => expr(node, text),
    }
}

/// `a.b.c` as an expression, if it is a dotted name.
pub(super) fn dotted(text: &str) -> Option<Expr> {
    let mut parts = text.split('.');
    let first = parts.next()?;
    if !crate::python::is_identifier(first) {
        return None;
    }
    let mut e = Expr::Name(first.to_string());
    for p in parts {
        if !crate::python::is_identifier(p) {
            return None;
        }
        e = Expr::Attr(Box::new(e), p.to_string());
    }
    Some(e)
}

/// Constructors of containers whose items are the values passed to them.
const CONTAINERS: &[&str] = &[
    "ModuleList",
    "ModuleDict",
    "Sequential",
    "list",
    "tuple",
    "dict",
    "set",
    "frozenset",
];

/// An expression node, reduced.
pub(super) fn expr(node: Node<'_>, text: &str) -> Expr {
    let field = |f: &str| node.child_by_field_name(f);
    match node.kind() {
        "identifier" => Expr::Name(text[node.byte_range()].to_string()),
        "attribute" => match (field("object"), field("attribute")) {
            (Some(o), Some(a)) => {
                Expr::Attr(Box::new(expr(o, text)), text[a.byte_range()].to_string())
            }
            _ => Expr::Other,
        },
        "parenthesized_expression" => node.named_child(0).map_or(Expr::Other, |n| expr(n, text)),
        "call" => call_expr(node, text),
        "subscript" => field("value").map_or(Expr::Other, |v| Expr::Item(Box::new(expr(v, text)))),
        "dictionary" => {
            let mut cursor = node.walk();
            Expr::Table(
                node.named_children(&mut cursor)
                    .filter(|p| p.kind() == "pair")
                    .filter_map(|p| p.child_by_field_name("value"))
                    .map(|v| expr(v, text))
                    .collect(),
            )
        }
        "list" | "tuple" | "set" => {
            let mut cursor = node.walk();
            Expr::Table(
                node.named_children(&mut cursor)
                    .filter(|n| n.kind() != "comment")
                    .map(|v| expr(v, text))
                    .collect(),
            )
        }
        "list_comprehension" | "set_comprehension" | "generator_expression" => {
            field("body").map_or(Expr::Other, |b| Expr::Table(vec![expr(b, text)]))
        }
        "dictionary_comprehension" => field("body")
            .and_then(|p| p.child_by_field_name("value"))
            .map_or(Expr::Other, |v| Expr::Table(vec![expr(v, text)])),
        "conditional_expression" => {
            let mut cursor = node.walk();
            let parts: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
            // `a if cond else b`: the first and last are the values.
            Expr::Union(
                [parts.first(), parts.get(2)]
                    .into_iter()
                    .flatten()
                    .map(|n| expr(*n, text))
                    .collect(),
            )
        }
        "boolean_operator" => Expr::Union(
            ["left", "right"]
                .iter()
                .filter_map(|f| field(f))
                .map(|n| expr(n, text))
                .collect(),
        ),
        _ => Expr::Other,
    }
}

/// The bindings of one import statement (module names absolute, relative ones from
/// `package`), and the modules it star-imports.
pub(super) fn import_bindings(
    stmt: Node<'_>,
    text: &str,
    package: &str,
) -> (Vec<(String, Binding)>, Vec<String>) {
    let src = |n: Node<'_>| &text[n.byte_range()];
    let mut stars = Vec::new();
    let mut out = Vec::new();
    if stmt.kind() == "import_statement" {
        let mut cursor = stmt.walk();
        for item in stmt.named_children(&mut cursor) {
            match item.kind() {
                "dotted_name" => {
                    let full = src(item).to_string();
                    let first = full.split('.').next().unwrap_or_default().to_string();
                    out.push((first.clone(), Binding::Module(first)));
                }
                "aliased_import" => {
                    let (Some(n), Some(a)) = (
                        item.child_by_field_name("name"),
                        item.child_by_field_name("alias"),
                    ) else {
                        continue;
                    };
                    out.push((src(a).to_string(), Binding::Module(src(n).into())));
                }
                _ => {}
            }
        }
        return (out, stars);
    }
    if stmt.kind() != "import_from_statement" {
        return (out, stars);
    }
    let Some(from) = stmt.child_by_field_name("module_name") else {
        return (out, stars);
    };
    let module = absolute(package, src(from));
    let mut cursor = stmt.walk();
    for item in stmt.named_children(&mut cursor) {
        if item.id() == from.id() {
            continue;
        }
        match item.kind() {
            "wildcard_import" => stars.push(module.clone()),
            "dotted_name" => {
                let name = src(item).to_string();
                out.push((
                    name.clone(),
                    Binding::From {
                        module: module.clone(),
                        name,
                    },
                ));
            }
            "aliased_import" => {
                let (Some(n), Some(a)) = (
                    item.child_by_field_name("name"),
                    item.child_by_field_name("alias"),
                ) else {
                    continue;
                };
                out.push((
                    src(a).to_string(),
                    Binding::From {
                        module: module.clone(),
                        name: src(n).to_string(),
                    },
                ));
            }
            _ => {}
        }
    }
    (out, stars)
}

/// A call reduced: `super()`, `enumerate(xs)`, a container of values, `getattr` with a
/// literal name, or the result of calling the callee.
fn call_expr(node: Node<'_>, text: &str) -> Expr {
    let Some(f) = node.child_by_field_name("function") else {
        return Expr::Other;
    };
    let name = &text[f.byte_range()];
    let args: Vec<Node<'_>> = node
        .child_by_field_name("arguments")
        .map(|a| {
            let mut c = a.walk();
            a.named_children(&mut c)
                .filter(|n| n.kind() != "comment")
                .collect()
        })
        .unwrap_or_default();
    let last = name.rsplit('.').next().unwrap_or(name);
    match name {
        "super" => Expr::Super,
        "enumerate" if !args.is_empty() => Expr::Enumerate(Box::new(expr(args[0], text))),
        // A container built from values holds them: `nn.ModuleList([Layer(c) for ...])`
        // is a table of layers, so `self.layers[i](x)` calls a layer.
        _ if CONTAINERS.contains(&last) => {
            let positional: Vec<Node<'_>> = args
                .iter()
                .copied()
                .filter(|a| a.kind() != "keyword_argument")
                .collect();
            match positional.as_slice() {
                // `list(xs)`, `nn.ModuleList([...])`: the items of the one iterable.
                [one] if last != "Sequential" => expr(*one, text),
                many => Expr::Table(many.iter().map(|a| expr(*a, text)).collect()),
            }
        }
        "getattr" if args.len() >= 2 => {
            let object = Box::new(expr(args[0], text));
            let literal = (args[1].kind() == "string")
                .then(|| text[args[1].byte_range()].trim_matches(|c| c == '"' || c == '\''))
                .filter(|s| crate::python::is_identifier(s))
                .map(str::to_string);
            Expr::GetAttr(object, literal)
        }
        _ => Expr::Call(Box::new(expr(f, text))),
    }
}

/// The index of the unit being read is the one pushed next; its first parameter is the
/// instance (or class) of a method that is neither static.
pub(super) fn is_first_param(unit: &Unit, name: &str) -> bool {
    unit.kind != Kind::Static
        && unit.locals.get(name).is_some_and(|ls| {
            ls.iter()
                .any(|l| matches!(l, Local::Param { position: 0, .. }))
        })
}

/// A name or attribute standing where a function value is taken, not called: an argument, a
/// value assigned, returned or put in a display (`partial(fn, ...)`, `hooks = [self._hook]`).
pub(super) fn is_value_place(n: Node<'_>, parent: Option<Node<'_>>) -> bool {
    if !matches!(n.kind(), "identifier" | "attribute") {
        return false;
    }
    let Some(parent) = parent else {
        return false;
    };
    match parent.kind() {
        "argument_list"
        | "list"
        | "tuple"
        | "set"
        | "expression_list"
        | "conditional_expression"
        | "boolean_operator" => true,
        "keyword_argument" | "pair" => parent.child_by_field_name("value") == Some(n),
        "assignment" => parent.child_by_field_name("right") == Some(n),
        _ => false,
    }
}

/// `setattr(obj, "name", v)` or `obj.__dict__.update(...)` on the instance (`is_self` tells
/// its name): `Some(Some(name))` for a literal name, `Some(None)` for any attribute.
pub(super) fn setattr_on_self(
    call: Node<'_>,
    text: &str,
    is_self: impl Fn(&str) -> bool,
) -> Option<Option<String>> {
    let src = |n: Node<'_>| &text[n.byte_range()];
    let callee = call.child_by_field_name("function").map_or("", src);
    if let Some((object, rest)) = callee.split_once('.')
        && rest.starts_with("__dict__.")
        && is_self(object)
    {
        return Some(None);
    }
    if callee != "setattr" {
        return None;
    }
    let args = call.child_by_field_name("arguments")?;
    let mut cursor = args.walk();
    let args: Vec<Node<'_>> = args.named_children(&mut cursor).collect();
    let first = args.first()?;
    if first.kind() != "identifier" || !is_self(src(*first)) {
        return None;
    }
    let literal = args
        .get(1)
        .filter(|a| a.kind() == "string")
        .map(|a| src(*a).trim_matches(|c| c == '"' || c == '\''))
        .filter(|s| crate::python::is_identifier(s))
        .map(str::to_string);
    Some(literal)
}
