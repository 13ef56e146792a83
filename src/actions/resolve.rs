//! Finding the signature a rule names as Python would find it when the code runs: the name's
//! binding at the end of the module (the last one; every alternative of an `if`/`try`, which
//! must agree), followed through `from … import` (star imports included) into the modules that
//! define it, and a method through the class's bases in C3 order (see `mro`). What cannot be
//! followed exactly is refused, naming why and every place searched — never a guess.

use std::collections::HashMap;
use std::sync::Arc;

use tree_sitter::{Node, Tree};

use super::bindings::{Binding, live_bindings, live_bindings_among};
use super::signature::{LookupError, Signature, read_function};
use super::statements::{Statements, class_node};
use crate::modules::ModuleSource;

/// How many modules one lookup may pass through: real chains are a few links long, and a
/// cycle must end.
pub(super) const MAX_DEPTH: usize = 12;

/// A module read for a lookup, kept parsed for the rest of the file's lookups.
#[derive(Debug)]
pub(super) struct Loaded {
    pub name: String,
    pub text: Arc<str>,
    pub tree: Tree,
}

/// One module as a lookup sees it.
#[derive(Clone, Copy)]
pub(super) struct View<'a> {
    pub root: Node<'a>,
    pub text: &'a str,
    pub name: &'a str,
    /// Whether this is the file being patched (whose signatures can be pointed at).
    pub here: bool,
    /// Where the tree holds only some of the patched file's statements (a region parse): the
    /// file read statement by statement, for its module-level names.
    pub partial: Option<&'a Statements>,
}

impl<'a> View<'a> {
    /// The `class_definition` of this module that starts at byte `at`.
    pub(super) fn class_at(&self, at: usize) -> Option<Node<'a>> {
        match self.partial {
            Some(statements) => statements.class_at(self.text, at),
            None => class_node(self.root, at),
        }
    }
}

/// The bindings of `name` live at the end of module `m` (see `live_bindings`), read from the
/// statements that may make them where `m`'s tree holds only some.
pub(super) fn module_bindings<'t>(m: View<'t>, name: &str) -> Vec<Binding<'t>> {
    match m.partial {
        Some(statements) => live_bindings_among(&statements.binding(m.text, name), m.text, name),
        None => live_bindings(m.root, m.text, name),
    }
}

/// What a module-level name refers to.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Target {
    /// A class: the module it is defined in and where.
    Class(ClassId),
    /// A function, with its signature.
    Function(Signature),
}

/// A class definition: its module's name and the definition's first byte there.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct ClassId {
    pub module: String,
    pub at: usize,
}

/// Signatures already looked up in one file, and where to search for those it lacks.
#[derive(Debug)]
pub struct Signatures<'c> {
    cache: HashMap<String, Result<Signature, LookupError>>,
    context: Option<&'c str>,
    modules: Option<&'c dyn ModuleSource>,
    /// The patched file's path: what its relative imports are resolved against.
    path: &'c str,
    /// Modules by (importer, import), and by their own names.
    loaded: HashMap<String, Result<Arc<Loaded>, String>>,
    pub(super) by_name: HashMap<String, Arc<Loaded>>,
    /// Where the trees the lookups are given hold only some of the file's statements (a region
    /// parse): the file read statement by statement (see `Statements`), made on first use.
    over_regions: bool,
    statements: Option<Arc<Statements>>,
    /// Module-level names that edits planned so far in this file introduce (an outline's
    /// `def`), with the byte range of the site that took each: each site is planned on the
    /// same text, so only this tells a second site (a property's setter beside its getter)
    /// that its name is taken.
    pub(super) introduced: HashMap<String, std::ops::Range<usize>>,
}

/// The name the signature context is known by in messages.
const CONTEXT: &str = "the signature context";

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
            modules,
            path,
            loaded: HashMap::new(),
            by_name: HashMap::new(),
            over_regions: false,
            statements: None,
            introduced: HashMap::new(),
        }
    }

    /// Says the trees the lookups will be given hold only some of the file's statements: the
    /// file is read for its module-level names where they are, not through those trees.
    pub fn over_regions(mut self) -> Self {
        self.over_regions = true;
        self
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
            let statements = self.over_regions.then(|| {
                self.statements
                    .get_or_insert_with(|| Arc::new(Statements::new(source)))
                    .clone()
            });
            let found = self.find(root, source, name, statements.as_deref());
            self.cache.insert(name.to_string(), found);
        }
        &self.cache[name]
    }

    /// `name` looked up in the file (`root`, `source`; `partial` where `root` holds only some
    /// of its statements), its bases and imports, or else in the context.
    fn find(
        &mut self,
        root: Node<'_>,
        source: &str,
        name: &str,
        partial: Option<&Statements>,
    ) -> Result<Signature, LookupError> {
        let here = View {
            root,
            text: source,
            name: self.path,
            here: true,
            partial,
        };
        let mut searched = Vec::new();
        let mut found = self.lookup(here, here, name, &mut searched);
        if matches!(found, Err(LookupError::NotFound { .. }))
            && let Some(context) = self.context
        {
            let loaded = self.by_name.entry(CONTEXT.to_string()).or_insert_with(|| {
                Arc::new(Loaded {
                    name: CONTEXT.to_string(),
                    text: context.into(),
                    tree: crate::python::parse(context),
                })
            });
            let loaded = loaded.clone();
            let there = View {
                root: loaded.tree.root_node(),
                text: &loaded.text,
                name: CONTEXT,
                here: false,
                partial: None,
            };
            found = self.lookup(here, there, name, &mut searched);
        }
        match found {
            Err(LookupError::NotFound { .. }) => Err(LookupError::NotFound { searched }),
            other => other,
        }
        .map(|sig| Signature {
            name: name.to_string(),
            ..sig
        })
    }

    /// `name` looked up from module `m`.
    fn lookup(
        &mut self,
        here: View<'_>,
        m: View<'_>,
        name: &str,
        searched: &mut Vec<String>,
    ) -> Result<Signature, LookupError> {
        let (class, function) = match name.split_once('.') {
            Some((c, f)) => (Some(c), f),
            None => (None, name),
        };
        let targets = self.resolve_name(here, m, class.unwrap_or(function), 0, searched)?;
        let mut found: Vec<Signature> = Vec::new();
        for target in targets {
            let sig = match (target, class) {
                (Target::Function(sig), None) => sig,
                (Target::Class(id), Some(_)) => {
                    self.method_in_mro(here, &id, function, searched)?
                }
                (Target::Class(_), None) => {
                    return Err(refused(format!(
                        "`{function}` names a class, not a function"
                    )));
                }
                (Target::Function(_), Some(c)) => {
                    return Err(refused(format!("`{c}` names a function, not a class")));
                }
            };
            if found.iter().all(|f| f.params != sig.params) {
                found.push(sig);
            }
        }
        match found.len() {
            0 => Err(LookupError::NotFound {
                searched: Vec::new(),
            }),
            1 => Ok(found.remove(0)),
            n => Err(LookupError::Ambiguous(n)),
        }
    }

    /// What the module-level name `name` of module `m` refers to once `m` has run: one target
    /// per binding that may be live there (imports followed). Empty where a star import was
    /// the only candidate and its module does not define the name.
    pub(super) fn resolve_name(
        &mut self,
        here: View<'_>,
        m: View<'_>,
        name: &str,
        depth: usize,
        searched: &mut Vec<String>,
    ) -> Result<Vec<Target>, LookupError> {
        if depth > MAX_DEPTH {
            return Err(refused(format!(
                "`{name}` is imported through more than {MAX_DEPTH} modules"
            )));
        }
        let bindings = module_bindings(m, name);
        let found_any = bindings.iter().any(|b| !matches!(b, Binding::Unbound));
        if !found_any {
            searched.push(format!("{}: no definition or import of `{name}`", m.name));
            return Err(LookupError::NotFound {
                searched: Vec::new(),
            });
        }
        let mut targets = Vec::new();
        for binding in bindings {
            targets.extend(self.targets_of(here, m, name, binding, depth, searched)?);
        }
        Ok(targets)
    }

    /// What one binding of `name` in `m` refers to.
    fn targets_of(
        &mut self,
        here: View<'_>,
        m: View<'_>,
        name: &str,
        binding: Binding<'_>,
        depth: usize,
        searched: &mut Vec<String>,
    ) -> Result<Vec<Target>, LookupError> {
        let mut targets = Vec::new();
        match binding {
            Binding::Unbound => {}
            Binding::Class(node) => targets.push(Target::Class(ClassId {
                module: m.name.to_string(),
                at: node.start_byte(),
            })),
            Binding::Function(def, outer) => {
                targets.push(Target::Function(function_in(m, def, outer, name, false)?));
            }
            Binding::Import {
                module_at,
                original,
                ..
            } => {
                let import: String = m.text[module_at.byte_range()].split_whitespace().collect();
                let original = &m.text[original.byte_range()];
                match self.follow(here, m, &import, original, depth, searched) {
                    Ok(more) => targets.extend(more?),
                    Err(why) => {
                        searched.push(format!("{}: imports `{name}` from {why}", m.name));
                        return Err(LookupError::NotFound {
                            searched: Vec::new(),
                        });
                    }
                }
            }
            Binding::Star { module_at } => {
                let import: String = m.text[module_at.byte_range()].split_whitespace().collect();
                let more = self
                    .follow(here, m, &import, name, depth, searched)
                    .map_err(|why| {
                        refused(format!(
                            "{}: `from {import} import *` may bind `{name}`, and {why}",
                            m.name
                        ))
                    })?;
                match more {
                    Ok(more) => targets.extend(more),
                    // The star import does not bind it: what came before stays.
                    Err(LookupError::NotFound { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
            Binding::Other(statement) => {
                return Err(refused(rebound(m, name, statement)));
            }
        }
        Ok(targets)
    }

    /// `name` as module `import` (imported from `m`) binds it: `Err` where that module cannot
    /// be read, with why.
    fn follow(
        &mut self,
        here: View<'_>,
        m: View<'_>,
        import: &str,
        name: &str,
        depth: usize,
        searched: &mut Vec<String>,
    ) -> Result<Result<Vec<Target>, LookupError>, String> {
        let loaded = self.load(m.name, import)?;
        let there = view_of(&loaded);
        Ok(self.resolve_name(here, there, name, depth + 1, searched))
    }

    /// The module `import` names in the file `importer`, parsed once per file.
    pub(super) fn load(&mut self, importer: &str, import: &str) -> Result<Arc<Loaded>, String> {
        let Some(modules) = self.modules else {
            return Err(format!("`{import}`, which is not searched here"));
        };
        let key = format!("{importer}\0{import}");
        let loaded = self
            .loaded
            .entry(key)
            .or_insert_with(|| modules.module(importer, import).map(parsed))
            .clone();
        if let Ok(l) = &loaded {
            self.by_name
                .entry(l.name.clone())
                .or_insert_with(|| l.clone());
        }
        loaded
    }
}

/// The signature of `def` (held by `outer`) in module `m`, pointed at only in the file being
/// patched.
pub(super) fn function_in(
    m: View<'_>,
    def: Node<'_>,
    outer: Node<'_>,
    name: &str,
    is_method: bool,
) -> Result<Signature, LookupError> {
    let sig = read_function(def, outer, m.text, name, is_method)
        .map_err(|why| refused(format!("{}: {why}", m.name)))?;
    Ok(if m.here {
        sig
    } else {
        Signature { range: None, ..sig }
    })
}

/// Imported modules parsed once per process while their text is the same: every model of a
/// release imports the same few modules, and parsing them again for each importing file cost
/// more than the files themselves. Bounded: past `PARSED_KEPT` modules it starts over.
static PARSED: std::sync::LazyLock<std::sync::Mutex<HashMap<String, Arc<Loaded>>>> =
    std::sync::LazyLock::new(Default::default);
const PARSED_KEPT: usize = 512;

/// `module` parsed, from the process-wide cache where its text is unchanged.
fn parsed(module: crate::modules::Module) -> Arc<Loaded> {
    let lock = || PARSED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(hit) = lock().get(&module.name)
        && (Arc::ptr_eq(&hit.text, &module.text) || hit.text == module.text)
    {
        return hit.clone();
    }
    // Parsed outside the lock: two threads may both parse a module the first time, and
    // neither waits for the other.
    let loaded = Arc::new(Loaded {
        tree: crate::python::parse(&module.text),
        name: module.name.clone(),
        text: module.text,
    });
    let mut cache = lock();
    if cache.len() >= PARSED_KEPT {
        cache.clear();
    }
    cache.insert(module.name, loaded.clone());
    loaded
}

/// A view of a loaded module.
pub(super) fn view_of(loaded: &Loaded) -> View<'_> {
    View {
        root: loaded.tree.root_node(),
        text: &loaded.text,
        name: &loaded.name,
        here: false,
        partial: None,
    }
}

/// A refusal with `reason`.
pub(super) fn refused(reason: String) -> LookupError {
    LookupError::Refused { reason }
}

/// Why a binding the lookup does not follow ends it: where it stands and what it says.
pub(super) fn rebound(m: View<'_>, name: &str, statement: Node<'_>) -> String {
    let first_line = m.text[statement.byte_range()].lines().next().unwrap_or("");
    format!(
        "`{name}` is bound at {}:{} by `{}`, which the lookup does not follow",
        m.name,
        statement.start_position().row + 1,
        first_line.trim()
    )
}

#[cfg(test)]
#[path = "resolve_tests.rs"]
mod tests;
