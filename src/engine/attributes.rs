//! The attribute check of an edit's result: every attribute of `self` that an edit newly
//! reads must exist on the class in the release the file belongs to — defined or assigned by
//! the class or a class of its resolution order there (`reach::Program::class_attribute`), or
//! declared in `provides`. A rewrite written for a newer release that also matches an older
//! one (`self.image_token_id` on a trainer that does not have it) is refused there, naming the
//! attribute, instead of an `AttributeError` at the first step.

use std::ops::Range;
use std::path::Path;

use tree_sitter::Node;

use crate::reach::{Attribute, Program};

/// The first `self.name` the edits read that the class does not have in this release, as a
/// refusal's reason and place in `output`.
pub(super) fn unknown_attribute(
    path: &str,
    output: &str,
    root: Node<'_>,
    edits: &[(Range<usize>, &str)],
    provided: &[&str],
) -> Option<(String, Range<usize>)> {
    let reads = new_self_reads(output, root, edits, provided);
    if reads.is_empty() {
        return None;
    }
    let (program, module) = Program::around(Path::new(path), output, root)?;
    for read in reads {
        if let Attribute::Absent { searched } =
            program.class_attribute(&module, &read.class, &read.name)
        {
            return Some((
                format!(
                    "the edit reads `{}.{}`, which no class of `{}`'s resolution order in this release defines or assigns (searched {}): an AttributeError when it runs; where the runtime sets it, declare it in `provides`",
                    read.object,
                    read.name,
                    read.class,
                    searched.join(", ")
                ),
                read.at,
            ));
        }
    }
    None
}

/// One attribute of the instance an edit reads.
struct SelfRead {
    /// The instance's name (the method's first parameter).
    object: String,
    name: String,
    /// The class's qualified name (`Outer.Inner`).
    class: String,
    at: Range<usize>,
}

/// The attributes of a method's instance that the edits read and the text they replaced did
/// not name, that the edit does not guard (`hasattr(self, "x")`, `getattr(self, "x", ...)`)
/// and `provides` does not declare.
fn new_self_reads(
    output: &str,
    root: Node<'_>,
    edits: &[(Range<usize>, &str)],
    provided: &[&str],
) -> Vec<SelfRead> {
    let mut out: Vec<SelfRead> = Vec::new();
    for (range, replaced) in edits {
        if range.is_empty() {
            continue;
        }
        let top = root
            .descendant_for_byte_range(range.start, range.end)
            .unwrap_or(root);
        let mut stack = vec![top];
        while let Some(n) = stack.pop() {
            if n.end_byte() <= range.start || n.start_byte() >= range.end {
                continue;
            }
            let mut cursor = n.walk();
            stack.extend(n.named_children(&mut cursor));
            let Some(read) = self_read(output, n, range) else {
                continue;
            };
            let name = read.name.as_str();
            let known = name.starts_with("__")
                || provided.contains(&name)
                || crate::python::names::word_in(replaced, name)
                || guarded(output, n, &read.object, name)
                || out
                    .iter()
                    .any(|r| r.name == read.name && r.class == read.class);
            if !known {
                out.push(read);
            }
        }
    }
    out.sort_by_key(|r| r.at.start);
    out
}

/// `obj.name` read (not assigned) where `obj` is the first parameter of a plain method of a
/// class, with `name` written by the edit in `range`.
fn self_read(output: &str, n: Node<'_>, range: &Range<usize>) -> Option<SelfRead> {
    if n.kind() != "attribute" {
        return None;
    }
    let object = n.child_by_field_name("object")?;
    let attr = n.child_by_field_name("attribute")?;
    if object.kind() != "identifier"
        || attr.end_byte() <= range.start
        || attr.start_byte() >= range.end
    {
        return None;
    }
    // A target is written, not read (`self.x += 1` reads it too).
    if let Some(p) = n.parent() {
        let target = match p.kind() {
            "assignment" => p
                .child_by_field_name("left")
                .is_some_and(|l| l.id() == n.id()),
            "pattern_list" | "tuple_pattern" | "delete_statement" => true,
            _ => false,
        };
        if target {
            return None;
        }
    }
    let object_name = &output[object.byte_range()];
    let class = method_of(n, output, object_name)?;
    Some(SelfRead {
        object: object_name.to_string(),
        name: output[attr.byte_range()].to_string(),
        class,
        at: attr.byte_range(),
    })
}

/// The qualified name of the class of the method whose first parameter `object` is and that
/// holds `n`; `None` for a static method, a function outside a class, or where a nearer
/// function rebinds the name.
fn method_of(n: Node<'_>, text: &str, object: &str) -> Option<String> {
    let mut at = n.parent();
    while let Some(f) = at {
        if matches!(f.kind(), "function_definition" | "lambda") {
            let first = first_parameter(f, text);
            if first.as_deref() == Some(object) && f.kind() == "function_definition" {
                let decorated = f.parent().filter(|p| p.kind() == "decorated_definition");
                let holder = decorated.unwrap_or(f);
                if let Some(d) = decorated {
                    let text_of = &text[d.byte_range()];
                    if text_of.starts_with("@staticmethod") || text_of.starts_with("@classmethod") {
                        return None;
                    }
                }
                let class = holder
                    .parent()
                    .filter(|b| b.kind() == "block")
                    .and_then(|b| b.parent())
                    .filter(|c| c.kind() == "class_definition")?;
                return Some(qualname(class, text));
            }
            if first.as_deref() == Some(object) || binds_parameter(f, text, object) {
                return None;
            }
        }
        at = f.parent();
    }
    None
}

fn first_parameter(f: Node<'_>, text: &str) -> Option<String> {
    let params = f.child_by_field_name("parameters")?;
    let mut cursor = params.walk();
    let first = params.named_children(&mut cursor).next()?;
    let name = match first.kind() {
        "identifier" => first,
        "typed_parameter" => first.named_child(0)?,
        "default_parameter" | "typed_default_parameter" => first.child_by_field_name("name")?,
        _ => return None,
    };
    Some(text[name.byte_range()].to_string())
}

fn binds_parameter(f: Node<'_>, text: &str, name: &str) -> bool {
    f.child_by_field_name("parameters")
        .is_some_and(|p| crate::python::names::word_in(&text[p.byte_range()], name))
}

/// `Outer.Inner` for a class nested in classes (a class in a function: its own name).
fn qualname(class: Node<'_>, text: &str) -> String {
    let mut names = Vec::new();
    let mut at = Some(class);
    while let Some(c) = at {
        if c.kind() == "class_definition"
            && let Some(n) = c.child_by_field_name("name")
        {
            names.push(text[n.byte_range()].to_string());
        } else if c.kind() == "function_definition" {
            break;
        }
        at = c.parent();
    }
    names.reverse();
    names.join(".")
}

/// Whether the method holding `n` asks for the attribute before reading it.
fn guarded(text: &str, n: Node<'_>, object: &str, name: &str) -> bool {
    let mut at = n.parent();
    while let Some(f) = at {
        if f.kind() == "function_definition" {
            let body = &text[f.byte_range()];
            return [
                format!("hasattr({object}, \"{name}\")"),
                format!("hasattr({object}, '{name}')"),
                format!("getattr({object}, \"{name}\""),
                format!("getattr({object}, '{name}'"),
            ]
            .iter()
            .any(|g| body.contains(g.as_str()));
        }
        at = f.parent();
    }
    false
}
