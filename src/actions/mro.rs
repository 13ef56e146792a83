//! A method looked up as Python looks it up: through the class's method resolution order (C3
//! linearisation of its bases, each base resolved like any module-level name). A base that
//! cannot be followed (`nn.Module` from a package outside the search) is known by name only:
//! the lookup refuses to read past it, and where such a base sits anywhere in the hierarchy a
//! method found further along is taken only through a chain of single bases, whose order no
//! unknown base can change.

use std::collections::HashMap;
use std::sync::Arc as Rc;

use tree_sitter::Node;

use super::bindings::{Binding, live_bindings};
use super::resolve::{
    ClassId, Loaded, MAX_DEPTH, Signatures, Target, View, function_in, module_bindings, rebound,
    refused, view_of,
};
use super::signature::{LookupError, Signature};
use crate::python::{definition_name, significant_children};

/// One class of a hierarchy.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Class {
    /// A class whose definition was found.
    Known(ClassId),
    /// A base the lookup cannot follow, as written.
    Unknown(String),
    /// `object`, or `Generic`/`Protocol`/`ABC` imported from `typing` or `abc`: they define
    /// only dunder methods.
    Inert(String),
}

/// The bases that define no method but dunders, and the modules they come from.
const INERT: &[(&str, &str)] = &[
    ("Generic", "typing"),
    ("Generic", "typing_extensions"),
    ("Protocol", "typing"),
    ("Protocol", "typing_extensions"),
    ("ABC", "abc"),
];

/// A module by name: the file being patched, or one loaded.
enum Source<'h> {
    Here(View<'h>),
    There(Rc<Loaded>),
}

impl Source<'_> {
    fn view(&self) -> View<'_> {
        match self {
            Source::Here(v) => *v,
            Source::There(l) => view_of(l),
        }
    }
}

impl Signatures<'_> {
    fn source<'h>(&self, here: View<'h>, module: &str) -> Option<Source<'h>> {
        if module == here.name {
            return Some(Source::Here(here));
        }
        self.by_name.get(module).cloned().map(Source::There)
    }

    /// The signature of `method` as instances of class `id` find it.
    pub(super) fn method_in_mro(
        &mut self,
        here: View<'_>,
        id: &ClassId,
        method: &str,
        searched: &mut Vec<String>,
    ) -> Result<Signature, LookupError> {
        let mut bases: HashMap<Class, Vec<Class>> = HashMap::new();
        let start = Class::Known(id.clone());
        let order = self.linearize(here, &start, &mut bases, 0, searched)?;
        // What calling the class runs goes through its metaclass's `__call__` first, which may
        // take other arguments: a constructor's signature under a metaclass is not trusted.
        if let Some((meta, module)) = self.metaclass_in(here, &order) {
            if matches!(method, "__init__" | "__new__") {
                return Err(refused(format!(
                    "a class of this hierarchy has the metaclass `{meta}`, whose `__call__` decides what constructing it takes"
                )));
            }
            // An instance made by calling the class may be of another class altogether.
            if self.metaclass_calls(here, &module, &meta) {
                return Err(refused(format!(
                    "a class of this hierarchy has the metaclass `{meta}`, whose `__call__` may make instances of another class, whose `{method}` this is not (or it is not found, so may)"
                )));
            }
        }
        let dunder = method.starts_with("__");
        let exact = order.iter().all(|c| match c {
            Class::Known(_) => true,
            Class::Inert(_) => !dunder,
            Class::Unknown(_) => false,
        });
        for (i, class) in order.iter().enumerate() {
            let cid = match class {
                Class::Known(cid) => cid,
                Class::Inert(_) if !dunder => continue,
                Class::Inert(written) | Class::Unknown(written) => {
                    // Not found yet: what else searching finds (the signature context at run
                    // time) may still know this base.
                    searched.push(format!(
                        "base `{written}` is not followed (its module is not searched), and it may define `{method}`"
                    ));
                    return Err(LookupError::NotFound {
                        searched: Vec::new(),
                    });
                }
            };
            let Some(found) = self.own_method(here, cid, method)? else {
                continue;
            };
            // With an unknown base somewhere, only a chain of single bases fixes the order.
            let chain = order[..i]
                .iter()
                .zip(&order[1..=i])
                .all(|(c, next)| bases.get(c).is_some_and(|b| b.len() == 1 && &b[0] == next));
            if !exact && !chain {
                let unknown: Vec<String> = order
                    .iter()
                    .filter_map(|c| match c {
                        Class::Unknown(w) | Class::Inert(w) => Some(format!("`{w}`")),
                        Class::Known(_) => None,
                    })
                    .collect();
                return Err(refused(format!(
                    "`{method}` is found through several bases, and the order Python gives them depends on {}, which is not followed",
                    unknown.join(", ")
                )));
            }
            return Ok(found);
        }
        Err(LookupError::NoMethod)
    }

    /// The first `metaclass=` written in the headers of the known classes of `order` (but
    /// `ABCMeta`, whose `__call__` is `type`'s).
    fn metaclass_in(&self, here: View<'_>, order: &[Class]) -> Option<(String, String)> {
        order.iter().find_map(|c| {
            let Class::Known(id) = c else { return None };
            let source = self.source(here, &id.module)?;
            let m = source.view();
            let list = m.class_at(id.at)?.child_by_field_name("superclasses")?;
            significant_children(list).into_iter().find_map(|k| {
                let name = k.child_by_field_name("name")?;
                let value = k.child_by_field_name("value")?;
                let value: String = m.text[value.byte_range()].split_whitespace().collect();
                (k.kind() == "keyword_argument"
                    && &m.text[name.byte_range()] == "metaclass"
                    && !value.ends_with("ABCMeta"))
                .then(|| (value, id.module.clone()))
            })
        })
    }

    /// Whether the metaclass `meta`, written in a class header of `module`, or a class of its
    /// hierarchy defines `__call__` (then calling a class may return anything); one that is
    /// not found counts as doing so.
    fn metaclass_calls(&mut self, here: View<'_>, module: &str, meta: &str) -> bool {
        let Some(source) = self.source(here, module) else {
            return true;
        };
        let m = source.view();
        let mut searched = Vec::new();
        let Ok(Some(id)) = self.class_named(here, m, meta, &mut searched) else {
            return true;
        };
        let mut bases = HashMap::new();
        let Ok(order) = self.linearize(here, &Class::Known(id), &mut bases, 0, &mut searched)
        else {
            return true;
        };
        order.iter().any(|c| match c {
            Class::Known(cid) => !matches!(self.own_method(here, cid, "__call__"), Ok(None)),
            Class::Inert(_) => false,
            Class::Unknown(written) => written != "type" && !written.ends_with("ABCMeta"),
        })
    }

    /// `method` as the class body of `id` itself binds it: `None` where it does not.
    fn own_method(
        &mut self,
        here: View<'_>,
        id: &ClassId,
        method: &str,
    ) -> Result<Option<Signature>, LookupError> {
        let source = self
            .source(here, &id.module)
            .expect("a known class's module is loaded");
        let m = source.view();
        let class = m
            .class_at(id.at)
            .expect("a known class is where it was found");
        let Some(body) = class.child_by_field_name("body") else {
            return Ok(None);
        };
        let bindings = live_bindings(body, m.text, method);
        if bindings == [Binding::Unbound] {
            return Ok(None);
        }
        let class_name = definition_name(class, m.text).unwrap_or_default();
        let full = format!("{class_name}.{method}");
        let mut found: Option<Signature> = None;
        for binding in bindings {
            let sig = match binding {
                Binding::Function(def, outer) => function_in(m, def, outer, &full, true)?,
                Binding::Unbound => {
                    return Err(refused(format!(
                        "`{full}` is defined only under a condition in {}",
                        m.name
                    )));
                }
                Binding::Other(statement) => {
                    return Err(refused(rebound(m, &full, statement)));
                }
                _ => return Err(refused(format!("`{full}` is not a method in {}", m.name))),
            };
            let sig = if m.here {
                sig
            } else {
                Signature { range: None, ..sig }
            };
            match &found {
                Some(f) if f.params != sig.params => return Err(LookupError::Ambiguous(2)),
                Some(_) => {}
                None => found = Some(sig),
            }
        }
        Ok(found)
    }

    /// The C3 linearisation of `class`; each known class's bases recorded in `bases`.
    fn linearize(
        &mut self,
        here: View<'_>,
        class: &Class,
        bases: &mut HashMap<Class, Vec<Class>>,
        depth: usize,
        searched: &mut Vec<String>,
    ) -> Result<Vec<Class>, LookupError> {
        if depth > MAX_DEPTH {
            return Err(refused(format!(
                "the class hierarchy is deeper than {MAX_DEPTH} (or has a cycle)"
            )));
        }
        let Class::Known(id) = class else {
            return Ok(vec![class.clone()]);
        };
        let direct = self.bases_of(here, id, searched)?;
        bases.insert(class.clone(), direct.clone());
        let mut lists = Vec::new();
        for base in &direct {
            lists.push(self.linearize(here, base, bases, depth + 1, searched)?);
        }
        lists.push(direct);
        let mut out = vec![class.clone()];
        loop {
            lists.retain(|l| !l.is_empty());
            if lists.is_empty() {
                return Ok(out);
            }
            let head = lists
                .iter()
                .map(|l| &l[0])
                .find(|h| !lists.iter().any(|l| l[1..].contains(h)))
                .cloned()
                .ok_or_else(|| {
                    refused("its bases have no consistent method resolution order (Python raises TypeError)".into())
                })?;
            for l in &mut lists {
                if l[0] == head {
                    l.remove(0);
                }
            }
            out.push(head);
        }
    }

    /// The bases of class `id`, each resolved where it can be.
    fn bases_of(
        &mut self,
        here: View<'_>,
        id: &ClassId,
        searched: &mut Vec<String>,
    ) -> Result<Vec<Class>, LookupError> {
        let source = self
            .source(here, &id.module)
            .expect("a known class's module is loaded");
        let m = source.view();
        let class = m
            .class_at(id.at)
            .expect("a known class is where it was found");
        let Some(list) = class.child_by_field_name("superclasses") else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for base in significant_children(list) {
            let base = match base.kind() {
                "(" | ")" | "," | "keyword_argument" | "dictionary_splat" => continue,
                // `Base[T]`: the class is `Base`.
                "subscript" => base.child_by_field_name("value").unwrap_or(base),
                _ => base,
            };
            let written: String = m.text[base.byte_range()].split_whitespace().collect();
            let resolved = match base.kind() {
                "identifier" => self.class_named(here, m, &written, searched)?,
                "attribute" => self.class_in_module(here, m, &written, searched)?,
                _ => None,
            };
            let class = match resolved {
                Some(id) => Class::Known(id),
                None if is_inert(m, &written) => Class::Inert(written),
                None => Class::Unknown(written),
            };
            out.push(class);
        }
        Ok(out)
    }

    /// The class the module-level `name` of `m` is, where it is one class; `None` where it is
    /// not found; a refusal where it may be several or is rebound.
    fn class_named(
        &mut self,
        here: View<'_>,
        m: View<'_>,
        name: &str,
        searched: &mut Vec<String>,
    ) -> Result<Option<ClassId>, LookupError> {
        let targets = match self.resolve_name(here, m, name, 0, searched) {
            Ok(t) => t,
            Err(LookupError::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut classes: Vec<ClassId> = Vec::new();
        for t in targets {
            match t {
                Target::Class(id) if !classes.contains(&id) => classes.push(id),
                Target::Class(_) => {}
                Target::Function(_) => {
                    return Err(refused(format!("base `{name}` is a function")));
                }
            }
        }
        match classes.len() {
            0 => Ok(None),
            1 => Ok(classes.pop()),
            n => Err(refused(format!(
                "base `{name}` may be any of {n} classes, depending on how the module ran"
            ))),
        }
    }

    /// `pkg.Class` where `pkg` is a module the file imports (`from . import pkg`, `import
    /// a.b as pkg`): the class in that module; `None` where the module is not searched.
    fn class_in_module(
        &mut self,
        here: View<'_>,
        m: View<'_>,
        written: &str,
        searched: &mut Vec<String>,
    ) -> Result<Option<ClassId>, LookupError> {
        let Some((module_path, class)) = written.rsplit_once('.') else {
            return Ok(None);
        };
        let first = module_path.split('.').next().unwrap_or(module_path);
        let bindings = module_bindings(m, first);
        let [binding] = bindings.as_slice() else {
            return Ok(None);
        };
        let rest = &module_path[first.len()..];
        let import = match binding {
            Binding::Import {
                module_at,
                original,
                ..
            } => {
                let from: String = m.text[module_at.byte_range()].split_whitespace().collect();
                let sep = if from.ends_with('.') { "" } else { "." };
                format!("{from}{sep}{}{rest}", &m.text[original.byte_range()])
            }
            Binding::Other(statement) if statement.kind() == "import_statement" => {
                match aliased_module(*statement, m.text, first) {
                    Some(module) => format!("{module}{rest}"),
                    None => return Ok(None),
                }
            }
            _ => return Ok(None),
        };
        let Ok(loaded) = self.load(m.name, &import) else {
            searched.push(format!(
                "{}: base `{written}`: module `{import}` not searched",
                m.name
            ));
            return Ok(None);
        };
        let there = view_of(&loaded);
        self.class_named(here, there, class, searched)
    }
}

/// Whether the base written `written` in `m` is `object` (not rebound there) or one of
/// `INERT` imported from its own module (`typing.Generic` written so, or imported by name).
fn is_inert(m: View<'_>, written: &str) -> bool {
    let (first, last) = match written.split_once('.') {
        Some((module, name)) => (module, name),
        None => (written, written),
    };
    let bindings = module_bindings(m, first);
    if written == "object" {
        return bindings == [Binding::Unbound];
    }
    let from = match bindings.as_slice() {
        [
            Binding::Import {
                module_at,
                original,
                ..
            },
        ] if first == written => {
            (&m.text[original.byte_range()] == last).then(|| &m.text[module_at.byte_range()])
        }
        [Binding::Other(s)] if s.kind() == "import_statement" && first != written => {
            aliased_module_is(*s, m.text, first)
        }
        _ => None,
    };
    from.is_some_and(|module| INERT.iter().any(|(n, mo)| *n == last && *mo == module))
}

/// The module `import module` binds to `name`, where it binds it unaliased.
fn aliased_module_is<'a>(statement: Node<'_>, text: &'a str, name: &str) -> Option<&'a str> {
    let mut cursor = statement.walk();
    let names: Vec<Node<'_>> = statement
        .children_by_field_name("name", &mut cursor)
        .collect();
    names
        .into_iter()
        .find(|n| n.kind() == "dotted_name" && &text[n.byte_range()] == name)
        .map(|n| &text[n.byte_range()])
}

/// The module an `import` statement binds to `name`: `import a.b as name` → `a.b`; `import
/// name.x` → `name`.
fn aliased_module(statement: Node<'_>, text: &str, name: &str) -> Option<String> {
    let mut cursor = statement.walk();
    let names: Vec<Node<'_>> = statement
        .children_by_field_name("name", &mut cursor)
        .collect();
    names
        .into_iter()
        .find_map(|imported| match imported.kind() {
            "aliased_import" => {
                let alias = imported.child_by_field_name("alias")?;
                let module = imported.child_by_field_name("name")?;
                (&text[alias.byte_range()] == name).then(|| text[module.byte_range()].to_string())
            }
            _ => {
                let dotted = &text[imported.byte_range()];
                (dotted.split('.').next() == Some(name)).then(|| name.to_string())
            }
        })
}
