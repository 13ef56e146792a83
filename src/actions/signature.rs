//! Python function signatures, read from the syntax tree of the file being patched.

use std::ops::Range;

use tree_sitter::Node;

use crate::python::{definition_name, significant_children};

/// How a parameter may be passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// Before a `/`: by position only.
    PositionalOnly,
    /// By position or by keyword.
    PositionalOrKeyword,
    /// `*args`.
    VarPositional,
    /// After `*` or `*args`: by keyword only.
    KeywordOnly,
    /// `**kwargs`.
    VarKeyword,
}

/// One parameter of a signature.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// Its name.
    pub name: String,
    /// How it may be passed.
    pub kind: ParamKind,
    /// The default's source text, if it has one.
    pub default: Option<String>,
    /// Whether the default is a constant whose value cannot depend on where it is evaluated
    /// (`None`, `True`, numbers, strings, tuples of those): only such a default may be written
    /// at a call site in place of a skipped parameter.
    pub constant_default: bool,
}

/// A callee's parameters, as a caller sees them (a method's `self` already dropped).
#[derive(Debug, Clone, PartialEq)]
pub struct Signature {
    /// `Class.method` or `function`.
    pub name: String,
    /// The parameters in order.
    pub params: Vec<Param>,
    /// Where the definition's header (`def name`) stands in the file; `None` when it was
    /// read from a signature context rather than the file being patched.
    pub range: Option<Range<usize>>,
}

impl Signature {
    /// The parameters that can be given by position, in order.
    pub fn positional(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|p| {
            matches!(
                p.kind,
                ParamKind::PositionalOnly | ParamKind::PositionalOrKeyword
            )
        })
    }

    /// Whether the signature takes `**kwargs`.
    pub fn has_var_keyword(&self) -> bool {
        self.params.iter().any(|p| p.kind == ParamKind::VarKeyword)
    }
}

/// Why a signature could not be found.
#[derive(Debug, Clone, PartialEq)]
pub enum LookupError {
    /// No definition of that name; `searched` says, place by place, where it was looked for.
    NotFound {
        /// Each place searched and what was (not) there.
        searched: Vec<String>,
    },
    /// The class exists but does not itself define the method (it may inherit it).
    NoMethod,
    /// Several different definitions of that name.
    Ambiguous(usize),
    /// The module both defines the name and imports it (`if available: from x import C`
    /// / `else: class C`): which one runs is decided at import time.
    DefinedAndImported {
        /// The module it is imported from, as written.
        module: String,
    },
}

/// Finds `Class.method` or a function named `function` in the tree rooted at `root`.
pub fn find_signature(root: Node<'_>, source: &str, name: &str) -> Result<Signature, LookupError> {
    let (class, function) = match name.split_once('.') {
        Some((c, f)) => (Some(c), f),
        None => (None, name),
    };
    let mut found: Vec<Signature> = Vec::new();
    // How many classes of that name there are, and how many define the method: a class
    // defined twice (in the branches of an `if`) whose definitions do not all define it has
    // no one signature.
    let (mut classes, mut defining) = (0, 0);
    // A definition of the name holds its text: subtrees without it are not entered (the walk
    // went through every function body, for each name looked up).
    let wanted = class.unwrap_or(function);
    let at: Vec<usize> = memchr::memmem::find_iter(source.as_bytes(), wanted).collect();
    let may_hold = |n: &Node<'_>| {
        let i = at.partition_point(|&o| o < n.start_byte());
        at.get(i).is_some_and(|&o| o < n.end_byte())
    };
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        match (node.kind(), class) {
            ("class_definition", Some(c)) if definition_name(node, source) == Some(c) => {
                classes += 1;
                if let Some(body) = node.child_by_field_name("body") {
                    let before = found.len();
                    for statement in significant_children(body) {
                        if let Some(def) = as_function(statement)
                            && definition_name(def, source) == Some(function)
                        {
                            found.push(read_signature(def, statement, source, name, true));
                        }
                    }
                    defining += usize::from(found.len() > before);
                }
            }
            ("function_definition", None) if definition_name(node, source) == Some(function) => {
                let outer = node
                    .parent()
                    .filter(|p| p.kind() == "decorated_definition")
                    .unwrap_or(node);
                let is_method = outer
                    .parent()
                    .and_then(|b| b.parent())
                    .is_some_and(|c| c.kind() == "class_definition");
                found.push(read_signature(node, outer, source, name, is_method));
            }
            _ => {}
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor).filter(may_hold));
    }
    if classes > 1 && defining > 0 && defining < classes {
        return Err(LookupError::Ambiguous(classes));
    }
    found.dedup_by(|a, b| a.params == b.params);
    match found.len() {
        0 if classes > 0 => Err(LookupError::NoMethod),
        0 => Err(LookupError::NotFound {
            searched: Vec::new(),
        }),
        1 => Ok(found.remove(0)),
        n => Err(LookupError::Ambiguous(n)),
    }
}

fn as_function(statement: Node<'_>) -> Option<Node<'_>> {
    match statement.kind() {
        "function_definition" => Some(statement),
        "decorated_definition" => statement.child_by_field_name("definition"),
        _ => None,
    }
}

fn read_signature(
    def: Node<'_>,
    outer: Node<'_>,
    source: &str,
    name: &str,
    is_method: bool,
) -> Signature {
    let mut params = def
        .child_by_field_name("parameters")
        .map_or_else(Vec::new, |list| read_params(list, source));
    let is_static = outer.kind() == "decorated_definition"
        && significant_children(outer)
            .into_iter()
            .filter(|n| n.kind() == "decorator")
            .any(|d| names_builtin(d, source, "staticmethod"));
    if is_method && !is_static && !params.is_empty() && params[0].kind != ParamKind::VarPositional {
        params.remove(0);
    }
    let header_end = def
        .child_by_field_name("name")
        .map_or(def.end_byte(), |n| n.end_byte());
    Signature {
        name: name.to_string(),
        params,
        range: Some(def.start_byte()..header_end),
    }
}

/// The parameters of a `parameters` node, in order, each with how it may be passed.
fn read_params(list: Node<'_>, source: &str) -> Vec<Param> {
    let text = |n: Node<'_>| source[n.byte_range()].to_string();
    let ident = |n: Node<'_>| {
        significant_children(n)
            .into_iter()
            .find(|c| c.kind() == "identifier")
            .map(text)
            .unwrap_or_default()
    };
    let mut params: Vec<Param> = Vec::new();
    let mut kind = ParamKind::PositionalOrKeyword;
    let plain = |name: String, kind: ParamKind| Param {
        name,
        kind,
        default: None,
        constant_default: false,
    };
    for param in significant_children(list) {
        match param.kind() {
            "positional_separator" => {
                for p in &mut params {
                    p.kind = ParamKind::PositionalOnly;
                }
            }
            "keyword_separator" => kind = ParamKind::KeywordOnly,
            "identifier" => params.push(plain(text(param), kind)),
            "default_parameter" | "typed_default_parameter" => {
                let value = param.child_by_field_name("value");
                params.push(Param {
                    name: param
                        .child_by_field_name("name")
                        .map(text)
                        .unwrap_or_default(),
                    kind,
                    default: value.map(text),
                    constant_default: value.is_some_and(|v| is_constant(v, source)),
                });
            }
            "typed_parameter" | "list_splat_pattern" | "dictionary_splat_pattern" => {
                let inner = if param.kind() == "typed_parameter" {
                    param.named_child(0)
                } else {
                    Some(param)
                };
                let Some(inner) = inner else { continue };
                match inner.kind() {
                    "list_splat_pattern" => {
                        params.push(plain(ident(inner), ParamKind::VarPositional));
                        kind = ParamKind::KeywordOnly;
                    }
                    "dictionary_splat_pattern" => {
                        params.push(plain(ident(inner), ParamKind::VarKeyword));
                    }
                    _ => params.push(plain(text(inner), kind)),
                }
            }
            _ => {}
        }
    }
    params
}

/// Whether `decorator` (an `@...` node) names the builtin `name` (`staticmethod`, say),
/// however it is spelt: `@name`, `@ name  # why`, `@builtins.name`.
fn names_builtin(decorator: Node<'_>, source: &str, name: &str) -> bool {
    let mut cursor = decorator.walk();
    let expression = decorator
        .named_children(&mut cursor)
        .find(|c| c.kind() != "comment");
    let Some(expression) = expression else {
        return false;
    };
    let spelt: String = source[expression.byte_range()]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    match expression.kind() {
        "identifier" => spelt == name,
        "attribute" => spelt == format!("builtins.{name}"),
        _ => false,
    }
}

/// Whether an expression is a constant whose value is the same wherever it is evaluated:
/// `None`, `True`, `False`, `...`, numbers (signed), strings without interpolation, and tuples
/// of those. A name, a call or a list is not (a name may be shadowed at the call site, and a
/// list would be a new object at every call instead of the one shared default).
fn is_constant(node: Node<'_>, source: &str) -> bool {
    match node.kind() {
        "none" | "true" | "false" | "integer" | "float" | "ellipsis" => true,
        "string" => {
            let mut cursor = node.walk();
            let interpolated = node
                .named_children(&mut cursor)
                .any(|c| c.kind() == "interpolation");
            !interpolated
        }
        "concatenated_string" => {
            let mut cursor = node.walk();
            let parts: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
            parts
                .into_iter()
                .all(|c| c.kind() == "comment" || is_constant(c, source))
        }
        "unary_operator" => {
            let operand = node.child_by_field_name("argument");
            let sign = node
                .child_by_field_name("operator")
                .map(|o| &source[o.byte_range()]);
            matches!(sign, Some("-" | "+"))
                && operand.is_some_and(|o| matches!(o.kind(), "integer" | "float"))
        }
        "tuple" | "parenthesized_expression" => {
            let mut cursor = node.walk();
            let items: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
            items
                .into_iter()
                .all(|c| c.kind() == "comment" || is_constant(c, source))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::parse;

    #[test]
    fn reads_every_parameter_kind() {
        let src = "class A:\n    def f(self, a, /, b: int, c=1, *args, d, e: int = 2, **kw):\n        pass\n";
        let tree = parse(src);
        let sig = find_signature(tree.root_node(), src, "A.f").unwrap();
        let got: Vec<(&str, ParamKind, Option<&str>)> = sig
            .params
            .iter()
            .map(|p| (p.name.as_str(), p.kind, p.default.as_deref()))
            .collect();
        use ParamKind::*;
        assert_eq!(
            got,
            [
                ("a", PositionalOnly, None),
                ("b", PositionalOrKeyword, None),
                ("c", PositionalOrKeyword, Some("1")),
                ("args", VarPositional, None),
                ("d", KeywordOnly, None),
                ("e", KeywordOnly, Some("2")),
                ("kw", VarKeyword, None),
            ]
        );
    }

    #[test]
    fn lookup_failures_are_distinguished() {
        let src = "class A:\n    x = 1\n\ndef g(a, *, b=None):\n    pass\n";
        let tree = parse(src);
        let root = tree.root_node();
        assert_eq!(find_signature(root, src, "A.f"), Err(LookupError::NoMethod));
        // Defined in both branches of an `if`, once inheriting `f`: no one signature.
        let twice = "if ok:\n    class C(Base):\n        pass\nelse:\n    class C:\n        def f(self, a):\n            pass\n";
        let twice_tree = parse(twice);
        assert_eq!(
            find_signature(twice_tree.root_node(), twice, "C.f"),
            Err(LookupError::Ambiguous(2))
        );
        assert!(matches!(
            find_signature(root, src, "B.f"),
            Err(LookupError::NotFound { .. })
        ));
        let g = find_signature(root, src, "g").unwrap();
        assert_eq!(g.params[1].kind, ParamKind::KeywordOnly);
    }
}
