//! Finding the signature a rule names: in the patched file, through a class's bases, and
//! through the file's `from … import` statements into the modules that define it — never a
//! guess: what cannot be found is an error naming every place searched.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use tree_sitter::{Node, Tree};

use super::signature::{LookupError, Signature, find_signature};
use crate::modules::ModuleSource;
use crate::python::{definition_name, significant_children};

/// How many modules and bases one lookup may pass through: real chains are a few links long,
/// and a cycle must end.
const MAX_DEPTH: usize = 12;

/// A module read for a lookup, kept parsed for the rest of the file's lookups.
#[derive(Debug)]
struct Loaded {
    name: String,
    text: Arc<str>,
    tree: Tree,
}

/// One module as a lookup sees it.
#[derive(Clone, Copy)]
struct View<'a> {
    root: Node<'a>,
    text: &'a str,
    name: &'a str,
    /// Whether this is the file being patched (whose signatures can be pointed at).
    here: bool,
}

/// Signatures already looked up in one file, and where to search for those it lacks.
#[derive(Debug)]
pub struct Signatures<'c> {
    cache: HashMap<String, Result<Signature, LookupError>>,
    context: Option<&'c str>,
    /// The context's tree, parsed the first time the file lacks a signature.
    context_tree: Option<Tree>,
    modules: Option<&'c dyn ModuleSource>,
    /// The patched file's path: what its relative imports are resolved against.
    path: &'c str,
    loaded: HashMap<String, Result<Rc<Loaded>, String>>,
}

impl<'c> Signatures<'c> {
    /// A cache for the file at `path`; `context` is searched for names neither the file nor
    /// its imports define, and `modules` finds what the file imports.
    pub fn new(
        path: &'c str,
        context: Option<&'c str>,
        modules: Option<&'c dyn ModuleSource>,
    ) -> Self {
        Self {
            cache: HashMap::new(),
            context,
            context_tree: None,
            modules,
            path,
            loaded: HashMap::new(),
        }
    }

    /// The signature `name` (`Class.method` or `function`) names, in the file (`root`,
    /// `source`), its bases and imports, or else in the context.
    pub fn get(
        &mut self,
        root: Node<'_>,
        source: &str,
        name: &str,
    ) -> &Result<Signature, LookupError> {
        if !self.cache.contains_key(name) {
            let (class, function) = match name.split_once('.') {
                Some((c, f)) => (Some(c), f),
                None => (None, name),
            };
            let here = View {
                root,
                text: source,
                name: self.path,
                here: true,
            };
            let mut searched = Vec::new();
            let mut visited = HashSet::new();
            let found = self
                .resolve(here, class, function, 0, &mut searched, &mut visited)
                .or_else(|| self.in_context(name, &mut searched))
                .unwrap_or(Err(LookupError::NotFound { searched }))
                .map(|sig| Signature {
                    name: name.to_string(),
                    ..sig
                });
            self.cache.insert(name.to_string(), found);
        }
        &self.cache[name]
    }

    fn in_context(
        &mut self,
        name: &str,
        searched: &mut Vec<String>,
    ) -> Option<Result<Signature, LookupError>> {
        let context = self.context?;
        let tree = self
            .context_tree
            .get_or_insert_with(|| crate::python::parse(context));
        match find_signature(tree.root_node(), context, name) {
            Err(LookupError::NotFound { .. }) => {
                searched.push("the signature context: not there".to_string());
                None
            }
            found => Some(found.map(|sig| Signature { range: None, ..sig })),
        }
    }

    /// `class.function` (or `function`) in the module `m`, following bases and imports;
    /// `None` (with `searched` told why) where it is not found.
    fn resolve(
        &mut self,
        m: View<'_>,
        class: Option<&str>,
        function: &str,
        depth: usize,
        searched: &mut Vec<String>,
        visited: &mut HashSet<(String, String)>,
    ) -> Option<Result<Signature, LookupError>> {
        let wanted = class.unwrap_or(function);
        if depth > MAX_DEPTH || !visited.insert((m.name.to_string(), wanted.to_string())) {
            return None;
        }
        let full = match class {
            Some(c) => format!("{c}.{function}"),
            None => function.to_string(),
        };
        let found = find_signature(m.root, m.text, &full);
        if found.is_ok() || found == Err(LookupError::NoMethod) {
            // A definition the module may replace by an import is not the one that surely runs.
            if let Some((module, _)) = imported(m.root, m.text, wanted) {
                return Some(Err(LookupError::DefinedAndImported { module }));
            }
        }
        match found {
            Ok(sig) if m.here => Some(Ok(sig)),
            Ok(sig) => Some(Ok(Signature { range: None, ..sig })),
            Err(LookupError::NoMethod) => {
                let class = class.unwrap_or_default();
                for base in class_bases(m.root, m.text, class) {
                    let found = match base.rsplit_once('.') {
                        // A base reached through a module attribute (`nn.Module`) is not
                        // followed: its module is outside what an import names by class.
                        Some(_) => {
                            searched.push(format!("{}: base `{base}` not followed", m.name));
                            None
                        }
                        None => {
                            self.resolve(m, Some(&base), function, depth + 1, searched, visited)
                        }
                    };
                    if found.is_some() {
                        return found;
                    }
                }
                searched.push(format!(
                    "{}: class `{class}` does not define `{function}`",
                    m.name
                ));
                None
            }
            Err(LookupError::NotFound { .. }) => {
                let Some((module, original)) = imported(m.root, m.text, wanted) else {
                    searched.push(format!("{}: no definition or import of `{wanted}`", m.name));
                    return None;
                };
                let loaded = match self.load(m.name, &module) {
                    Ok(loaded) => loaded,
                    Err(why) => {
                        searched.push(format!("{}: imports `{wanted}` from {why}", m.name));
                        return None;
                    }
                };
                let there = View {
                    root: loaded.tree.root_node(),
                    text: &loaded.text,
                    name: &loaded.name,
                    here: false,
                };
                let (class, function) = match class {
                    Some(_) => (Some(original.as_str()), function),
                    None => (None, original.as_str()),
                };
                self.resolve(there, class, function, depth + 1, searched, visited)
            }
            Err(e) => Some(Err(e)),
        }
    }

    /// The module `import` names in the file `importer`, parsed once per file.
    fn load(&mut self, importer: &str, import: &str) -> Result<Rc<Loaded>, String> {
        let Some(modules) = self.modules else {
            return Err(format!("`{import}`, which is not searched here"));
        };
        let key = format!("{importer}\0{import}");
        self.loaded
            .entry(key)
            .or_insert_with(|| {
                modules.module(importer, import).map(|m| {
                    let tree = crate::python::parse(&m.text);
                    Rc::new(Loaded {
                        name: m.name,
                        text: m.text,
                        tree,
                    })
                })
            })
            .clone()
    }
}

/// The bases of the one class named `class` in the module, as written (keywords such as
/// `metaclass=` left out), in order.
fn class_bases(root: Node<'_>, text: &str, class: &str) -> Vec<String> {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.kind() == "class_definition" && definition_name(node, text) == Some(class) {
            let Some(list) = node.child_by_field_name("superclasses") else {
                return Vec::new();
            };
            return significant_children(list)
                .into_iter()
                .filter(|b| matches!(b.kind(), "identifier" | "attribute"))
                .map(|b| text[b.byte_range()].split_whitespace().collect())
                .collect();
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    Vec::new()
}

/// Where the module imports the name `name` from: the module as written after `from` and the
/// name it has there (`from ..a.b import Orig as name`). Imports at the top level, and in
/// `if`/`try` blocks there, count.
fn imported(root: Node<'_>, text: &str, name: &str) -> Option<(String, String)> {
    let mut statements = significant_children(root);
    let mut i = 0;
    while i < statements.len() {
        let statement = statements[i];
        i += 1;
        match statement.kind() {
            "if_statement" | "try_statement" | "else_clause" | "elif_clause" | "except_clause"
            | "finally_clause" | "block" => {
                statements.extend(significant_children(statement));
                continue;
            }
            "import_from_statement" => {}
            _ => continue,
        }
        let Some(module) = statement.child_by_field_name("module_name") else {
            continue;
        };
        let mut cursor = statement.walk();
        for imported in statement.children_by_field_name("name", &mut cursor) {
            let (original, bound) = match imported.kind() {
                "aliased_import" => (
                    imported.child_by_field_name("name"),
                    imported.child_by_field_name("alias"),
                ),
                _ => (Some(imported), Some(imported)),
            };
            let (Some(original), Some(bound)) = (original, bound) else {
                continue;
            };
            if &text[bound.byte_range()] == name {
                let module: String = text[module.byte_range()].split_whitespace().collect();
                return Some((module, text[original.byte_range()].to_string()));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modules::MapModules;
    use crate::python::parse;

    fn modules(entries: &[(&str, &str)]) -> MapModules {
        MapModules {
            current: "pkg.b.mod_b".to_string(),
            sources: entries
                .iter()
                .map(|(k, v)| (k.to_string(), Arc::from(*v)))
                .collect(),
        }
    }

    #[test]
    fn follows_bases_and_imports_into_other_modules() {
        let a = "class Base:\n    def forward(self, x, mask=None):\n        pass\n";
        let b = "from ..a.mod_a import Base as Parent\n\nclass Child(Parent):\n    pass\n";
        let map = modules(&[("pkg.a.mod_a", a)]);
        let tree = parse(b);
        let mut sigs = Signatures::new("pkg.b.mod_b", None, Some(&map));
        let sig = sigs
            .get(tree.root_node(), b, "Child.forward")
            .clone()
            .unwrap();
        let names: Vec<&str> = sig.params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["x", "mask"]);
        assert_eq!(sig.range, None);
    }

    #[test]
    fn a_missing_signature_names_every_place_searched() {
        let b = "from ..a.mod_a import Base\n\nclass Child(Base, nn.Module):\n    pass\n";
        let map = modules(&[]);
        let tree = parse(b);
        let mut sigs = Signatures::new("pkg.b.mod_b", None, Some(&map));
        let Err(LookupError::NotFound { searched }) =
            sigs.get(tree.root_node(), b, "Child.forward")
        else {
            panic!("expected a failed lookup");
        };
        assert_eq!(
            searched,
            &[
                "pkg.b.mod_b: imports `Base` from `..a.mod_a`: no module `pkg.a.mod_a` in the context",
                "pkg.b.mod_b: base `nn.Module` not followed",
                "pkg.b.mod_b: class `Child` does not define `forward`",
            ]
        );
    }
}
