//! Names an edit introduces must resolve: a template that writes `torch.float32` into a module
//! that never imports `torch` parses, compiles, and fails with `NameError` when it runs. After
//! each step, every name the new code reads (not present in the text it replaced, not bound by
//! the new code itself, not a builtin) must be a name the rest of the file holds in code — a
//! definition, an import, a parameter, an assignment — or the edit is refused naming it.
//!
//! What is checked: that a scope the edit can see binds the name, as Python resolves it
//! (`scopes`): the enclosing functions, a class body only for code standing directly in it,
//! the module (including `global` declarations), the builtins. A mention in a comment or a
//! string binds nothing; a local of another function is out of sight. The check applies to a
//! file that is closed before the edit — every name it reads it binds somewhere, or is a
//! builtin, as a complete module is. A file that reads names it never binds (a class's source
//! patched at run time apart from its module, a fragment, a module that gets names injected)
//! gives no ground to judge, and is not checked; nor is one with a star import or `globals()`.

use std::ops::Range;

use std::collections::HashMap;

use tree_sitter::Node;

mod builtins;
mod capture;
mod module_level;
mod scopes;
mod unbound;

pub use capture::{Capture, rename_capture};
pub use module_level::{first_shadowed, module_binding_sites};

/// Whether `name` is one of Python's builtins (which a module-level binding of it shadows).
pub fn is_builtin(name: &str) -> bool {
    BUILTINS.contains(&name)
}

use builtins::BUILTINS;

/// A node's parent. tree-sitter's `Node::parent` searches down from the root, through every
/// earlier sibling at each level: a walk of a whole module that asks it for each identifier
/// costs the identifiers times the module's statements. A walk that knows the parents passes
/// them in instead.
type Parent<'p, 't> = &'p dyn Fn(Node<'t>) -> Option<Node<'t>>;

/// Whether identifier `node` is read (not a binding, attribute, keyword or parameter name).
fn is_read(node: Node<'_>) -> bool {
    is_read_under(node, &|n| n.parent())
}

fn is_read_under<'t>(node: Node<'t>, parent_of: Parent<'_, 't>) -> bool {
    let Some(parent) = parent_of(node) else {
        return true;
    };
    let field_is = |field: &str| {
        parent
            .child_by_field_name(field)
            .is_some_and(|c| c.id() == node.id())
    };
    match parent.kind() {
        "attribute" => !field_is("attribute"),
        "keyword_argument" => !field_is("name"),
        "function_definition" | "class_definition" => !field_is("name"),
        "parameters"
        | "lambda_parameters"
        | "default_parameter"
        | "typed_parameter"
        | "typed_default_parameter"
        | "list_splat_pattern"
        | "dictionary_splat_pattern" => field_is("value") || field_is("type"),
        "dotted_name"
        | "aliased_import"
        | "import_statement"
        | "import_from_statement"
        | "global_statement"
        | "nonlocal_statement" => false,
        _ => true,
    }
}

/// Whether identifier `node` is bound where it stands: an assignment or `for`/`with`/`except`
/// target, a walrus, a parameter, a definition's name, an import.
pub(crate) fn is_binding(node: Node<'_>) -> bool {
    is_binding_under(node, &|n| n.parent())
}

fn is_binding_under<'t>(node: Node<'t>, parent_of: Parent<'_, 't>) -> bool {
    let mut child = node;
    let mut parent = parent_of(node);
    while let Some(p) = parent {
        let under = |field: &str| {
            p.child_by_field_name(field)
                .is_some_and(|c| c.id() == child.id())
        };
        match p.kind() {
            "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
                return under("left");
            }
            "named_expression" => return under("name"),
            "as_pattern" | "except_clause" => return under("alias"),
            "as_pattern_target" => return true,
            "function_definition" | "class_definition" => return under("name"),
            "parameters"
            | "lambda_parameters"
            | "default_parameter"
            | "typed_parameter"
            | "typed_default_parameter" => return !under("value") && !under("type"),
            "import_statement" | "import_from_statement" | "aliased_import" => return true,
            "type_alias_statement" => return under("left"),
            // `case y:`, `case [y, *rest]`, `case {"k": y}`, `case P(x=y)`: captures. A dotted
            // name of more than one part is a value pattern (`Color.RED`), not a capture.
            "dotted_name" => {
                let mut cursor = p.walk();
                let single = p.named_children(&mut cursor).count() == 1;
                let in_case = parent_of(p).is_some_and(|g| {
                    matches!(
                        g.kind(),
                        "case_pattern" | "keyword_pattern" | "splat_pattern" | "dict_pattern"
                    ) || g.kind().ends_with("_pattern")
                });
                return single && in_case;
            }
            "splat_pattern" => return true,
            "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "list_splat_pattern"
            | "dictionary_splat_pattern"
            | "parenthesized_expression"
            | "tuple"
            | "list"
            // `type X = …`: the name stands in a `type` node.
            | "type" => {}
            _ => return false,
        }
        child = p;
        parent = parent_of(p);
    }
    false
}

/// A name an edit reads that no scope it can see binds: a `NameError` when it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unresolved {
    /// The name.
    pub name: String,
    /// Where the edit reads it, in the output.
    pub at: Range<usize>,
    /// The scopes searched, innermost first ("function `f`", "the module").
    pub searched: Vec<String>,
    /// The scopes that do bind it, out of its sight.
    pub bound_in: Vec<String>,
}

/// The whole-file trees a caller already holds, saving a parse each (`None`: parsed here).
#[derive(Clone, Copy, Default)]
pub struct Whole<'t> {
    /// A parse of the whole input.
    pub input: Option<Node<'t>>,
    /// A parse of the whole output.
    pub output: Option<Node<'t>>,
}

/// The first name an edit reads that no scope it stands in binds (see [`unresolved`]).
pub fn first_unresolved(
    texts: (&str, &str),
    root: Node<'_>,
    edits: &[(Range<usize>, &str)],
    provided: &[&str],
    whole: Whole<'_>,
) -> Option<Unresolved> {
    unresolved(texts, root, edits, provided, whole)
        .into_iter()
        .next()
}

/// Every name the edits read that no scope it stands in binds, each at its first such read,
/// first reads first: a rule author declares them all from one run. `edits` are the edits'
/// ranges in `output` with the text each replaced; `root` is a parse of (at least) the edited
/// statements of `output`.
pub fn unresolved(
    (input, output): (&str, &str),
    root: Node<'_>,
    edits: &[(Range<usize>, &str)],
    provided: &[&str],
    whole: Whole<'_>,
) -> Vec<Unresolved> {
    let mut candidates = new_reads(output, root, edits);
    // Names the runtime puts in the module (a rule's `provides`) are bound there.
    candidates.retain(|(name, _)| !provided.contains(&name.as_str()));
    if candidates.is_empty() || output.contains("import *") || output.contains("globals()") {
        return Vec::new();
    }
    let input_tree = crate::python::Held::or_parse(whole.input, input);
    if !is_closed(input, input_tree.root()) {
        return Vec::new();
    }
    let mut found: Vec<Unresolved> = Vec::new();
    let output_tree = crate::python::Held::or_parse(whole.output, output);
    let root = output_tree.root();
    // The scopes binding a name, and where the module deletes it for good, found once per
    // name (each search reads the whole text).
    let mut binders_of: HashMap<String, (Vec<Node<'_>>, Option<usize>)> = HashMap::new();
    for (name, at) in candidates {
        let Some(read) = root.descendant_for_byte_range(at.start, at.end) else {
            continue;
        };
        let chain = scopes::visible_from(read);
        let (binders, deleted) = binders_of
            .entry(name.clone())
            .or_insert_with(|| {
                let found = binders(root, output, &name);
                (found, unbound::deleted_at(root, output, &name))
            })
            .clone();
        let sees = |b: &Node<'_>| {
            chain.iter().any(|c| c.id() == b.id())
                && (b.id() != root.id()
                    || deleted.is_none_or(|d| unbound::sees_before_del(read, &chain, d)))
        };
        if binders.iter().any(sees) || unbound::in_except_clause_binding(read, output, &name) {
            continue;
        }
        let describe = |scopes: &[Node<'_>]| {
            let mut named: Vec<String> = Vec::new();
            for s in scopes {
                let d = scopes::describe(*s, output);
                if !named.contains(&d) {
                    named.push(d);
                }
            }
            named
        };
        if found.iter().any(|f| f.name == name) {
            continue;
        }
        let mut searched = describe(&chain);
        searched.push("the builtins".into());
        found.push(Unresolved {
            name,
            at,
            searched,
            bound_in: describe(&binders),
        });
    }
    found
}

/// The names the edits read that they did not read before and do not bind themselves, nor are
/// builtins: `(name, where)` in `output`, first reads first.
fn new_reads(
    output: &str,
    root: Node<'_>,
    edits: &[(Range<usize>, &str)],
) -> Vec<(String, Range<usize>)> {
    let mut candidates: Vec<(String, Range<usize>)> = Vec::new();
    // One read per name and scope is judged: reads of one name in different scopes may find
    // different bindings (`[y for y in r] + [y]`).
    let mut judged: std::collections::HashSet<(&str, usize)> = std::collections::HashSet::new();
    for (range, replaced) in edits {
        if range.is_empty() {
            continue;
        }
        let mut bound: Vec<&str> = Vec::new();
        let mut read: Vec<Node<'_>> = Vec::new();
        let mut cursor = root.walk();
        let top = root
            .descendant_for_byte_range(range.start, range.end)
            .unwrap_or(root);
        let mut stack = vec![top];
        while let Some(n) = stack.pop() {
            if n.end_byte() <= range.start || n.start_byte() >= range.end {
                continue;
            }
            // An identifier the edit only partly wrote counts too: edits are narrowed to what
            // they change, so `list(x)` → `listing(x)` writes `ing` alone.
            if n.kind() == "identifier" && n.start_byte() < range.end && range.start < n.end_byte()
            {
                if is_binding(n) {
                    bound.push(&output[n.byte_range()]);
                } else if is_read(n) {
                    read.push(n);
                }
            }
            stack.extend(n.children(&mut cursor));
        }
        read.sort_by_key(|n| n.start_byte());
        for n in read {
            let name = &output[n.byte_range()];
            let scope = scopes::scope_of(n).id();
            let known = BUILTINS.contains(&name)
                || bound.contains(&name)
                || word_in(replaced, name)
                || judged.contains(&(name, scope));
            if !known {
                judged.insert((name, scope));
                candidates.push((name.to_string(), n.byte_range()));
            }
        }
    }
    candidates
}

/// The identifier nodes of `root` (a parse of `text`) spelt `name`: each whole-word
/// occurrence of it in the text that is an identifier (not one inside a string or comment).
/// One search for every reader of names here, found by the text (a walk of the whole tree
/// per name would cost far more on a large module).
pub fn identifiers_named<'t, 's>(
    root: Node<'t>,
    text: &'s str,
    name: &'s str,
) -> impl Iterator<Item = Node<'t>> + use<'t, 's> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name).filter_map(move |(at, _)| {
        let end = at + name.len();
        if text[..at].chars().next_back().is_some_and(is_word)
            || text[end..].chars().next().is_some_and(is_word)
        {
            return None;
        }
        let node = root.descendant_for_byte_range(at, end)?;
        (node.kind() == "identifier" && node.byte_range() == (at..end)).then_some(node)
    })
}

/// The scopes that bind `name` anywhere in `text`: assignments and other targets, parameters,
/// definitions, imports, and `global` declarations (binding it in the module).
fn binders<'t>(root: Node<'t>, text: &str, name: &str) -> Vec<Node<'t>> {
    let mut out: Vec<Node<'t>> = Vec::new();
    for node in identifiers_named(root, text, name) {
        let scope = if node
            .parent()
            .is_some_and(|p| p.kind() == "global_statement")
        {
            // `global X` binds X in the module only where its function assigns X: a bare
            // declaration binds nothing.
            if !assigns_in(scopes::scope_of(node), text, name) {
                continue;
            }
            root
        } else if unbound::is_except_alias(node) {
            // Bound only inside its clause (see `in_except_clause_binding`).
            continue;
        } else if scopes::import_binds(node).unwrap_or_else(|| is_binding(node)) {
            let scope = scopes::scope_of(node);
            if scope.kind() == "function_definition"
                && scopes::declares_elsewhere(scope, name, text)
            {
                continue;
            }
            scope
        } else {
            continue;
        };
        if !out.iter().any(|s| s.id() == scope.id()) {
            out.push(scope);
        }
    }
    out
}

/// Whether `scope` itself (not a nested scope) binds `name`.
fn assigns_in(scope: Node<'_>, text: &str, name: &str) -> bool {
    let mut stack = vec![scope];
    let mut cursor = scope.walk();
    while let Some(n) = stack.pop() {
        if n.kind() == "identifier"
            && &text[n.byte_range()] == name
            && is_binding(n)
            && scopes::scope_of(n).id() == scope.id()
        {
            return true;
        }
        stack.extend(n.children(&mut cursor));
    }
    false
}

/// Whether every name `text` reads is one it binds somewhere (in any scope) or a builtin.
fn is_closed(text: &str, root: Node<'_>) -> bool {
    let mut bound = std::collections::HashSet::new();
    let mut read = Vec::new();
    // A cursor walk keeps the path from the root: each parent is the node before it there
    // (see `Parent`).
    let mut path = vec![root];
    let mut cursor = root.walk();
    'walk: loop {
        let n = cursor.node();
        if n.kind() == "identifier" {
            let name = &text[n.byte_range()];
            let parent_of = |c: Node<'_>| {
                let at = path.iter().rposition(|p| p.id() == c.id())?;
                at.checked_sub(1).map(|i| path[i])
            };
            if is_binding_under(n, &parent_of) || in_import_under(n, &parent_of) {
                bound.insert(name);
            } else if is_read_under(n, &parent_of) {
                read.push(name);
            }
        }
        if cursor.goto_first_child() {
            path.push(cursor.node());
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                *path.last_mut().expect("the path holds the cursor's node") = cursor.node();
                continue 'walk;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
            path.pop();
        }
    }
    read.iter()
        .all(|r| bound.contains(r) || BUILTINS.contains(r))
}

/// Whether identifier `node` is a name an import binds (`import a.b` binds `a`).
fn in_import(node: Node<'_>) -> bool {
    in_import_under(node, &|n| n.parent())
}

fn in_import_under<'t>(node: Node<'t>, parent_of: Parent<'_, 't>) -> bool {
    let mut n = node;
    while let Some(p) = parent_of(n) {
        match p.kind() {
            "import_statement" | "import_from_statement" => return true,
            "dotted_name" | "aliased_import" => n = p,
            _ => return false,
        }
    }
    false
}

/// Whether `text` holds `name` as a whole word.
pub fn word_in(text: &str, name: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        !text[..at].chars().next_back().is_some_and(is_word)
            && !text[at + name.len()..].chars().next().is_some_and(is_word)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(output: &str, edit: &str, replaced: &str) -> Option<String> {
        let at = output.find(edit).unwrap();
        let input = output.replacen(edit, replaced, 1);
        let tree = crate::python::parse(output);
        first_unresolved(
            (&input, output),
            tree.root_node(),
            &[(at..at + edit.len(), replaced)],
            &[],
            Whole::default(),
        )
        .map(|u| u.name)
    }

    #[test]
    fn a_name_nothing_provides_is_found() {
        let out = "def f(x):\n    return x.to(torch.float32)\n";
        assert_eq!(check(out, "x.to(torch.float32)", "x"), Some("torch".into()));
        let imported = format!("import torch\n{out}");
        assert_eq!(check(&imported, "x.to(torch.float32)", "x"), None);
        // Builtins, names bound by the new code, attributes and keywords need nothing.
        let own = "def f(x):\n    y = len(x)\n    return g(y, key=y).shape\n";
        assert_eq!(
            check(own, "y = len(x)\n    return g(y, key=y).shape", "return x"),
            Some("g".into())
        );
        let star = format!("from torch import *\n{out}");
        assert_eq!(check(&star, "x.to(torch.float32)", "x"), None);
        // A file that reads a name it never binds (a class apart from its module) is open.
        let open = "def f(x):\n    return nn.relu(x.to(torch.float32))\n";
        assert_eq!(check(open, "x.to(torch.float32)", "x"), None);
    }

    #[test]
    fn a_new_name_that_extends_an_old_one_is_checked() {
        // The edit narrowed to what it changes writes `ing` after `list`.
        let output = "def f(x):\n    return listing(x)\n";
        let at = output.find("ing(").unwrap();
        let input = "def f(x):\n    return list(x)\n";
        let tree = crate::python::parse(output);
        let found = first_unresolved(
            (input, output),
            tree.root_node(),
            &[(at..at + 3, "")],
            &[],
            Whole::default(),
        );
        assert_eq!(found.map(|u| u.name), Some("listing".into()));
    }

    #[test]
    fn a_name_must_be_bound_in_a_scope_the_edit_sees() {
        let edit = "x.to(torch.float32)";
        // A mention in a comment or a docstring binds nothing.
        let comment = "# torch is not needed here\ndef f(x):\n    \"\"\"Like torch.\"\"\"\n    return x.to(torch.float32)\n";
        assert_eq!(check(comment, edit, "x"), Some("torch".into()));
        // A local of another function, or a class attribute read from a method, is out of sight.
        let other = "def g():\n    import torch\n\ndef f(x):\n    return x.to(torch.float32)\n";
        assert_eq!(check(other, edit, "x"), Some("torch".into()));
        let class =
            "class C:\n    torch = None\n    def f(self, x):\n        return x.to(torch.float32)\n";
        assert_eq!(check(class, edit, "x"), Some("torch".into()));
        // Bound where Python finds it: the function, an enclosing function, the module (also
        // through `global`), a comprehension, an `except … as`, a class body read in place.
        for seen in [
            "def f(x):\n    import torch\n    return x.to(torch.float32)\n",
            "def o():\n    import torch\n    def f(x):\n        return x.to(torch.float32)\n",
            "def f(x):\n    return x.to(torch.float32)\nimport torch\n",
            "def g():\n    global torch\n    torch = 1\ndef f(x):\n    return x.to(torch.float32)\n",
            "def f(x):\n    try:\n        pass\n    except E as torch:\n        return x.to(torch.float32)\n",
            "class C:\n    torch = None\n    y = x.to(torch.float32)\n",
        ] {
            assert_eq!(check(seen, edit, "x"), None, "{seen}");
        }
        let comp = "def f(xs):\n    return [x.to(torch.float32) for torch in xs for x in xs]\n";
        assert_eq!(check(comp, edit, "x"), None);
        // A comprehension's first iterable is read in the enclosing scope.
        let first = "def f(x):\n    return [1 for torch in x.to(torch.float32)]\n";
        assert_eq!(check(first, edit, "x"), Some("torch".into()));
    }
}
