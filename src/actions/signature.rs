//! Python function signatures, read from the syntax tree of the file being patched.

use std::ops::Range;

use tree_sitter::Node;

use crate::python::significant_children;

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
    /// The name is bound in a way the lookup cannot follow exactly (rebound, decorated,
    /// behind a base it cannot read): `reason` says how.
    Refused {
        /// Why, with the place.
        reason: String,
    },
}

/// Decorators known to keep the signature callers bind against (they wrap with
/// `functools.wraps` and pass every argument through, or only document or cache): a function
/// under any other decorator may be called with other parameters, and is refused. A name
/// matches written whole or as the last part of a dotted name.
pub const SIGNATURE_KEEPING_DECORATORS: &[&str] = &[
    "staticmethod",
    "classmethod",
    "builtins.staticmethod",
    "builtins.classmethod",
    "abstractmethod",
    "abc.abstractmethod",
    "functools.wraps",
    "wraps",
    "torch.no_grad",
    "torch.inference_mode",
    "torch.enable_grad",
    "torch.jit.unused",
    "torch.jit.ignore",
    "torch.compiler.disable",
    "torch._dynamo.disable",
    "auto_docstring",
    "can_return_tuple",
    "check_model_inputs",
    "deprecate_kwarg",
    "dynamic_rope_update",
    "replace_return_docstrings",
    "add_start_docstrings",
    "add_start_docstrings_to_model_forward",
    "add_end_docstrings",
    "add_code_sample_docstrings",
    "compile_compatible_method_lru_cache",
    "use_kernel_forward_from_hub",
];

/// The signature of the function `def` (held by `outer`, its `decorated_definition` or
/// itself); `Err` says which decorator may change it.
pub fn read_function(
    def: Node<'_>,
    outer: Node<'_>,
    source: &str,
    name: &str,
    is_method: bool,
) -> Result<Signature, String> {
    if outer.kind() == "decorated_definition" {
        for decorator in significant_children(outer)
            .into_iter()
            .filter(|n| n.kind() == "decorator")
        {
            let written = decorator_name(decorator, source);
            // `x.staticmethod` is not the builtin, whose effect on `self` is read below.
            let suffix_ok = |k: &str| !k.contains('.') && !k.ends_with("method");
            let known = SIGNATURE_KEEPING_DECORATORS
                .iter()
                .any(|k| written == *k || suffix_ok(k) && written.ends_with(&format!(".{k}")));
            if !known {
                return Err(format!(
                    "`{name}` is decorated with `@{written}`, which may change its signature (known to keep it: {})",
                    SIGNATURE_KEEPING_DECORATORS.join(", ")
                ));
            }
        }
    }
    Ok(read_signature(def, outer, source, name, is_method))
}

/// A decorator's dotted name, its call's arguments left out (`@torch.no_grad()` →
/// `torch.no_grad`); what is not a dotted name is given whole.
fn decorator_name(decorator: Node<'_>, source: &str) -> String {
    let mut cursor = decorator.walk();
    let Some(mut expression) = decorator
        .named_children(&mut cursor)
        .find(|c| c.kind() != "comment")
    else {
        return String::new();
    };
    if expression.kind() == "call"
        && let Some(function) = expression.child_by_field_name("function")
    {
        expression = function;
    }
    source[expression.byte_range()]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
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
pub(super) fn read_params(list: Node<'_>, source: &str) -> Vec<Param> {
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

    fn decorated(tree: &tree_sitter::Tree) -> Node<'_> {
        crate::python::named_descendants(tree.root_node())
            .find(|n| n.kind() == "decorated_definition")
            .unwrap()
    }

    #[test]
    fn reads_every_parameter_kind() {
        let src = "class A:\n    @torch.no_grad()\n    def f(self, a, /, b: int, c=1, *args, d, e: int = 2, **kw):\n        pass\n";
        let tree = parse(src);
        let outer = decorated(&tree);
        let def = outer.child_by_field_name("definition").unwrap();
        let sig = read_function(def, outer, src, "A.f", true).unwrap();
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
        let other = src.replace("torch.no_grad()", "my_wrapper");
        let tree = parse(&other);
        let outer = decorated(&tree);
        let def = outer.child_by_field_name("definition").unwrap();
        let err = read_function(def, outer, &other, "A.f", true).unwrap_err();
        assert!(
            err.starts_with(
                "`A.f` is decorated with `@my_wrapper`, which may change its signature"
            ),
            "{err}"
        );
    }
}
