//! Whether renaming some occurrences of a name keeps every read bound as before: the renamed
//! ones to what the old name was bound to, every other read of the new name to what it was
//! bound to. A rename onto a name a nearer scope binds would merge the two (`x` → `y` where
//! `y` is another local), and renamed bindings would capture reads of the new name that saw
//! an outer binding or a builtin (`a` → `len` where the function calls `len`).

use std::ops::Range;

use tree_sitter::Node;

use super::{binders, is_binding, is_read, scopes};

/// Where a rename would change what a read is bound to, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// The occurrence whose binding changes, in the text renamed.
    pub at: Range<usize>,
    /// What changes.
    pub why: String,
}

/// The first read whose binding renaming the identifiers at `renamed` from `from` to `to`
/// would change; `root` is a parse of the whole of `text`. Renaming a global read onto another
/// module-level name is the redirect a rename is for, and allowed.
pub fn rename_capture(
    root: Node<'_>,
    text: &str,
    renamed: &[Range<usize>],
    from: &str,
    to: &str,
) -> Option<Capture> {
    let from_binders = binders(root, text, from);
    let to_binders = binders(root, text, to);
    let nodes: Vec<Node<'_>> = renamed
        .iter()
        .filter_map(|r| root.descendant_for_byte_range(r.start, r.end))
        .filter(|n| n.kind() == "identifier")
        .collect();
    // The renamed bindings count too: one spelt otherwise (`ﬁle` is `file` to Python) is not
    // found by its text.
    let mut from_binders = from_binders;
    for n in nodes.iter().filter(|n| is_binding(**n)) {
        let scope = scopes::scope_of(*n);
        let elsewhere =
            scope.kind() == "function_definition" && scopes::declares_elsewhere(scope, from, text);
        if !elsewhere && !from_binders.iter().any(|b| b.id() == scope.id()) {
            from_binders.push(scope);
        }
    }
    let context = Context {
        text,
        from,
        to,
        from_binders: &from_binders,
        to_binders: &to_binders,
    };
    if let Some(capture) = nodes.iter().find_map(|n| context.keeps_binding(*n)) {
        return Some(capture);
    }
    captured_read(root, text, renamed, &nodes, &to_binders, from, to)
}

/// What every renamed occurrence is checked against.
struct Context<'a, 't> {
    text: &'a str,
    from: &'a str,
    to: &'a str,
    from_binders: &'a [Node<'t>],
    to_binders: &'a [Node<'t>],
}

impl Context<'_, '_> {
    /// Why renaming `node` would make it name another binding than before, if it would.
    fn keeps_binding(&self, node: Node<'_>) -> Option<Capture> {
        let (text, from, to) = (self.text, self.from, self.to);
        let is_module = |n: Node<'_>| n.parent().is_none();
        // `obj.from` (renamed with `attributes: true`) names no variable.
        if crate::python::is_attribute_name(node) {
            return None;
        }
        let fail = |why: String| {
            Some(Capture {
                at: node.byte_range(),
                why,
            })
        };
        // `global from` renamed declares `to` global: a module that does not bind `to` leaves
        // every read of it before the function's own assignment a NameError.
        let declared = node
            .parent()
            .is_some_and(|p| matches!(p.kind(), "global_statement" | "nonlocal_statement"));
        let global = node
            .parent()
            .is_some_and(|p| p.kind() == "global_statement");
        if global && !self.to_binders.iter().any(|b| is_module(*b)) {
            return fail(format!(
                "the renamed declaration would make `{to}` global, which the module does not bind: reads of it before this function assigns it raise NameError"
            ));
        }
        let binds = declared || is_binding(node);
        if binds && scopes::scope_of(node).kind() == "class_definition" {
            return fail(format!(
                "`{from}` is bound in a class body, so it is an attribute: renamed, `obj.{from}` elsewhere would no longer find it"
            ));
        }
        if in_self_documenting_fstring(node) {
            return fail(format!(
                "`{from}` stands in an f-string's `{{{from}=}}`, which prints the name itself: renamed, the text would change"
            ));
        }
        let chain = scopes::visible_from(node);
        let nearest = |binders: &[Node<'_>]| {
            chain
                .iter()
                .position(|c| binders.iter().any(|b| b.id() == c.id()))
        };
        let (old, new) = (nearest(self.from_binders), nearest(self.to_binders));
        // A read redirected to a `to` nothing binds is the name check's to find, on the output
        // (another rule of the step may bind it).
        let j = new?;
        let merges = match old {
            None => !is_module(chain[j]),
            // Two module-level names: a read is the redirect a rename is for; a binding
            // (`global` then assignment) would write the other name.
            Some(i) => j <= i && !(is_module(chain[i]) && is_module(chain[j]) && !binds),
        };
        if merges {
            return fail(format!(
                "`{to}` is already bound in {}, which this `{from}` would then name: two names merged",
                scopes::describe(chain[j], text)
            ));
        }
        None
    }
}

/// Whether identifier `node` stands in a self-documenting f-string field (`f"{x=}"`), which
/// prints its expression's text.
fn in_self_documenting_fstring(node: Node<'_>) -> bool {
    let mut at = node.parent();
    while let Some(n) = at {
        if n.kind() == "interpolation" {
            let mut cursor = n.walk();
            return n.children(&mut cursor).any(|c| c.kind() == "=");
        }
        at = n.parent();
    }
    false
}

/// The first read of `to` (outside `renamed`) that a binding the rename makes would capture:
/// one that saw an outer binding, or a builtin.
fn captured_read(
    root: Node<'_>,
    text: &str,
    renamed: &[Range<usize>],
    nodes: &[Node<'_>],
    to_binders: &[Node<'_>],
    from: &str,
    to: &str,
) -> Option<Capture> {
    let is_module = |n: Node<'_>| n.parent().is_none();
    let nearest = |chain: &[Node<'_>]| {
        chain
            .iter()
            .position(|c| to_binders.iter().any(|b| b.id() == c.id()))
    };
    // Scopes where the rename binds `to` anew: reads of `to` they enclose would see them.
    let mut binding_scopes: Vec<Node<'_>> = Vec::new();
    for node in nodes.iter().filter(|n| is_binding(**n)) {
        let scope = scopes::scope_of(*node);
        if !binding_scopes.iter().any(|s| s.id() == scope.id()) {
            binding_scopes.push(scope);
        }
    }
    for read in super::identifiers_named(root, text, to) {
        let at = read.byte_range();
        if renamed
            .iter()
            .any(|r| r.start <= at.start && at.end <= r.end)
            || !is_read(read)
        {
            continue;
        }
        let chain = scopes::visible_from(read);
        let current = nearest(&chain);
        for scope in &binding_scopes {
            let Some(k) = chain.iter().position(|c| c.id() == scope.id()) else {
                continue;
            };
            let captured = match current {
                None => true,
                Some(c) => k < c && !(is_module(chain[k]) && is_module(chain[c])),
            };
            if captured {
                return Some(Capture {
                    at: read.byte_range(),
                    why: format!(
                        "this `{to}` would be bound by the renamed `{from}` of {} instead of {}",
                        scopes::describe(*scope, text),
                        current.map_or("the builtins".to_string(), |c| scopes::describe(
                            chain[c], text
                        ))
                    ),
                });
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The capture (its `why`) of renaming every `from` inside `def f`.
    fn rename_in_f(text: &str, from: &str, to: &str) -> Option<String> {
        let tree = crate::python::parse(text);
        let f = text.find("def f").unwrap();
        let is_word = |c: char| c.is_alphanumeric() || c == '_';
        let renamed: Vec<Range<usize>> = text
            .match_indices(from)
            .map(|(at, _)| at..at + from.len())
            .filter(|r| r.start > f)
            .filter(|r| !text[..r.start].ends_with(is_word) && !text[r.end..].starts_with(is_word))
            .collect();
        rename_capture(tree.root_node(), text, &renamed, from, to).map(|c| c.why)
    }

    #[test]
    fn a_rename_never_merges_two_bindings_nor_captures_a_read() {
        let text = "G = 1\nH = 2\ndef f(a):\n    x = a\n    y = len(a)\n    return x, y, G\n";
        // Onto a fresh name, or a global read onto another module-level name: kept.
        assert_eq!(rename_in_f(text, "x", "fresh"), None);
        assert_eq!(rename_in_f(text, "G", "H"), None);
        // Onto another local: merged.
        assert!(
            rename_in_f(text, "x", "y")
                .unwrap()
                .contains("already bound")
        );
        // A global read onto a local: the local would answer it.
        assert!(
            rename_in_f(text, "G", "x")
                .unwrap()
                .contains("already bound")
        );
        // A parameter onto a builtin the function reads: that read is captured.
        assert!(
            rename_in_f(text, "a", "len")
                .unwrap()
                .contains("instead of the builtins")
        );
        // `global G` renamed onto a name the module never binds.
        let declared = "G = 1\ndef f():\n    global G\n    G = G + 1\n";
        assert!(
            rename_in_f(declared, "G", "fresh")
                .unwrap()
                .contains("does not bind")
        );
    }

    #[test]
    fn renames_a_hostile_reading_found_are_refused() {
        // A `global` binding onto another module name would write that name.
        let global = "x = 5\ndef f():\n    global x\n    x += 1\n    return x\ny = 0\n";
        assert!(
            rename_in_f(global, "x", "y")
                .unwrap()
                .contains("two names merged")
        );
        // A match capture binds: renaming onto it merges two names.
        let case = "def f(v, x):\n    match v:\n        case y:\n            pass\n    return x\n";
        assert!(
            rename_in_f(case, "x", "y")
                .unwrap()
                .contains("two names merged")
        );
        // `f"{x=}"` prints the name.
        let fstring = "def f(x):\n    return f\"{x=}\"\n";
        assert!(
            rename_in_f(fstring, "x", "y")
                .unwrap()
                .contains("prints the name")
        );
        // A class-level name is an attribute.
        let class = "class A:\n    def f(self):\n        pass\n    x = 1\n";
        assert!(rename_in_f(class, "x", "y").unwrap().contains("attribute"));
    }
}
