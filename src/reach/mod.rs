//! Reachability: whether a release's own code calls the function a rule edits, from the entry
//! points the rule names (`reached_from`). A patch that applies to code upstream no longer
//! runs is drift too: it fails as `unreached`, with the entry points and, where the calls
//! could not be followed, the places that stopped it.
//!
//! Calls are followed through the release's source only: imports, assignments, bases (the
//! method resolution order) and overrides in subclasses, `self.x = ...` in the class's
//! methods, annotations, literal tables (registries) and `getattr` with a literal. Modules are
//! read lazily, one tree-sitter parse each, so a question about one loader reads the few dozen
//! modules on its way, not the release.

use std::cell::{OnceCell, RefCell};
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

mod attributes;
mod cache;
mod classes;
mod facts;
mod model;

mod syntax;
mod values;

pub use attributes::Attribute;
use model::Facts;
use values::{Id, Scope, TOP, Value, unit_of};

/// A module bigger than this is not read (a generated table, not code that calls).
const MAX_MODULE_BYTES: u64 = 8 << 20;

/// How many places that stopped the search a verdict keeps.
const MAX_PLACES: usize = 5;

/// The source of one release, read as calls are followed.
pub struct Program {
    /// The folder holding the release's top-level packages.
    root: PathBuf,
    modules: RefCell<HashMap<String, Option<Arc<Facts>>>>,
    globals: RefCell<HashMap<(String, String), Vec<Value>>>,
    mros: RefCell<HashMap<Id, Rc<Vec<Option<Id>>>>>,
    subs: RefCell<HashMap<Id, Rc<Vec<Id>>>>,
    /// An attribute of a class or its instances, by class, name and whether of an instance.
    lookups: RefCell<HashMap<(Id, String, bool), Vec<Value>>>,
    /// What calling a function returns.
    results: RefCell<HashMap<Id, Vec<Value>>>,
    /// A unit's local name.
    locals: RefCell<HashMap<(Id, String), Vec<Value>>>,
    index: OnceCell<Index>,
}

/// What a scan of every file's text says, without parsing: which classes name which bases
/// (for overrides in subclasses), and which names some `def` defines (a call on a value that
/// cannot be followed matters only if the tree defines a method of its name).
#[derive(Default)]
struct Index {
    /// A base's last name → the modules and classes whose header writes it.
    subclasses: HashMap<String, Vec<(String, String)>>,
    /// Every name a `def` of the tree defines.
    defined: HashSet<String>,
}

/// What the scan of one file found: each class header's (base name, module, class), and the
/// names its `def`s define.
type Scanned = (Vec<(String, String, String)>, Vec<String>);

/// A place where the search met a call it could not follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The file, relative to the release's folder.
    pub file: String,
    /// Its line, 1-based.
    pub line: usize,
    /// The callee as written.
    pub text: String,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{} `{}`", self.file, self.line, self.text)
    }
}

/// What reachability found for one rule's edits on one release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every edited function is reached; the path to the first, entry first.
    Reached { path: Vec<String> },
    /// Some edited function is reached by no path.
    Unreached {
        /// The edited functions no path reaches (`module.qualname`).
        functions: Vec<String>,
        /// Entry points the release does not define.
        missing_entries: Vec<String>,
        /// Calls on the way that could not be followed, and how many there were in all.
        unfollowed: Vec<Place>,
        unfollowed_count: usize,
    },
}

impl Verdict {
    /// The verdict in one line, as a matrix cell's message says it.
    pub fn message(&self, entries: &[String]) -> String {
        match self {
            Verdict::Reached { path } => format!("reached: {}", path.join(" → ")),
            Verdict::Unreached {
                functions,
                missing_entries,
                unfollowed,
                unfollowed_count,
            } => {
                let mut out = format!(
                    "no call from {} reaches {}",
                    entries.join(", "),
                    functions.join(", ")
                );
                if !missing_entries.is_empty() {
                    out.push_str(&format!(
                        "; this release does not define {}",
                        missing_entries.join(", ")
                    ));
                }
                if *unfollowed_count > 0 {
                    let shown: Vec<String> = unfollowed.iter().map(ToString::to_string).collect();
                    out.push_str(&format!(
                        "; {unfollowed_count} call(s) on the way could not be followed: {}{}",
                        shown.join(", "),
                        if *unfollowed_count > shown.len() {
                            ", …"
                        } else {
                            ""
                        }
                    ));
                }
                out
            }
        }
    }
}

impl Program {
    /// The release whose top-level packages `root` holds.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: plain(&root.into()),
            modules: RefCell::default(),
            globals: RefCell::default(),
            mros: RefCell::default(),
            subs: RefCell::default(),
            lookups: RefCell::default(),
            locals: RefCell::default(),
            results: RefCell::default(),
            index: OnceCell::new(),
        }
    }

    /// The release folder for a target folder `dir` and the package an entry names: `dir`
    /// itself when it holds the package, its parent when `dir` is the package.
    pub fn root_for(dir: &Path, package: &str) -> PathBuf {
        if dir.join(package).is_dir() || dir.join(format!("{package}.py")).is_file() {
            return dir.to_path_buf();
        }
        let mut at = Some(dir);
        while let Some(d) = at {
            if d.file_name().is_some_and(|n| n == package) {
                return match d.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => PathBuf::from("."),
                };
            }
            at = d.parent();
        }
        dir.to_path_buf()
    }

    /// The module a file of the release is (its path relative to the root, or absolute).
    pub fn module_of(&self, file: &Path) -> Option<String> {
        module_name(&self.root, file)
    }

    fn file_of(&self, module: &str) -> Option<(PathBuf, bool)> {
        file_of(&self.root, module)
    }

    /// The facts of module `name`, read the first time; `None` where the release has no
    /// such module (it lies outside: torch, the standard library).
    fn load(&self, name: &str) -> Option<Arc<Facts>> {
        if let Some(known) = self.modules.borrow().get(name) {
            return known.clone();
        }
        let facts = self.read(name);
        self.modules
            .borrow_mut()
            .insert(name.to_string(), facts.clone());
        facts
    }

    /// Reads the modules of `names` not read yet, in parallel (a class's subclasses are
    /// confirmed in every module whose headers name it: hundreds, on a release's models).
    fn preload(&self, names: &[&str]) {
        use rayon::prelude::*;
        let wanted: Vec<&str> = {
            let known = self.modules.borrow();
            let mut wanted: Vec<&str> = names
                .iter()
                .copied()
                .filter(|n| !known.contains_key(*n))
                .collect();
            wanted.sort_unstable();
            wanted.dedup();
            wanted
        };
        if wanted.len() < 2 {
            return;
        }
        let root = self.root.as_path();
        let read: Vec<(String, Option<Arc<Facts>>)> = wanted
            .par_iter()
            .map(|n| (n.to_string(), read_module(root, n)))
            .collect();
        let mut modules = self.modules.borrow_mut();
        for (name, facts) in read {
            modules.entry(name).or_insert_with(|| facts);
        }
    }

    fn read(&self, name: &str) -> Option<Arc<Facts>> {
        read_module(&self.root, name)
    }

    /// The modules the search has read so far.
    pub fn modules_read(&self) -> usize {
        self.modules
            .borrow()
            .values()
            .filter(|m| m.is_some())
            .count()
    }

    fn index(&self) -> &Index {
        self.index.get_or_init(|| {
            use rayon::prelude::*;
            let headers = regex::Regex::new(r"(?m)^[ \t]*class[ \t]+(\w+)[ \t]*\(([^)]*)\)")
                .expect("a valid regex");
            let defs = regex::Regex::new(r"(?m)^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)")
                .expect("a valid regex");
            let root = self.root.as_path();
            let scanned: Vec<Scanned> = python_files(root)
                .par_iter()
                .filter_map(|file| {
                    let bytes = std::fs::read(file).ok()?;
                    let text = String::from_utf8_lossy(&bytes);
                    let module = module_name(root, file)?;
                    let mut classes = Vec::new();
                    for c in headers.captures_iter(&text) {
                        for base in c[2].split(',') {
                            let base = base.trim();
                            if base.contains('=') {
                                continue;
                            }
                            let last = base.rsplit('.').next().unwrap_or(base);
                            let last = last.split('[').next().unwrap_or(last).trim();
                            classes.push((last.to_string(), module.clone(), c[1].to_string()));
                        }
                    }
                    let names = defs
                        .captures_iter(&text)
                        .map(|d| d[1].to_string())
                        .collect();
                    Some((classes, names))
                })
                .collect();
            let mut index = Index::default();
            for (classes, names) in scanned {
                for (base, module, class) in classes {
                    index
                        .subclasses
                        .entry(base)
                        .or_default()
                        .push((module, class));
                }
                index.defined.extend(names);
            }
            index
        })
    }

    /// A base's name → the classes whose header writes it.
    fn headers(&self) -> &HashMap<String, Vec<(String, String)>> {
        &self.index().subclasses
    }

    /// The units an entry point names (`pkg.module.Class.method`, `pkg.module.function`, a
    /// class: its constructor), or `None` where the release does not define it.
    fn entry(&self, dotted: &str) -> Option<Vec<Id>> {
        let parts: Vec<&str> = dotted.split('.').collect();
        for cut in (1..=parts.len()).rev() {
            let module = parts[..cut].join(".");
            if self.load(&module).is_none() {
                continue;
            }
            let mut values = vec![Value::Module(module.as_str().into())];
            for part in &parts[cut..] {
                values = values
                    .iter()
                    .flat_map(|v| self.attr(v, part, 0))
                    .filter(|v| !matches!(v, Value::Opaque | Value::Outside))
                    .collect();
            }
            let mut out = Vec::new();
            for v in &values {
                self.callees(v, &mut out);
            }
            return (!out.is_empty()).then_some(out);
        }
        None
    }

    /// Where the function (or method, or class's constructor) `dotted` names is defined: its
    /// file and its first line, for each unit; `None` where the release
    /// does not define it.
    pub fn sites_of(&self, dotted: &str) -> Option<Vec<(PathBuf, usize)>> {
        let ids = self.entry(dotted)?;
        let mut out = Vec::new();
        for id in ids {
            let facts = self.load(&id.module)?;
            let unit = unit_of(&facts, id.index)?;
            let (file, _) = self.file_of(&id.module)?;
            out.push((file, unit.lines.0));
        }
        Some(out)
    }

    /// Whether calls from `entries` reach every unit holding one of `sites` (files as given,
    /// relative to the root or absolute, and 1-based lines).
    pub fn reach(&self, entries: &[String], sites: &[(PathBuf, usize)]) -> Verdict {
        let mut targets: Vec<(Id, String)> = Vec::new();
        // A site outside the release cannot be shown reached: said, never taken as reached.
        let mut strays: Vec<String> = Vec::new();
        for (file, line) in sites {
            let facts = self.module_of(file).and_then(|m| Some((self.load(&m)?, m)));
            let Some((facts, module)) = facts else {
                let stray = format!(
                    "{} (not a module of the release in {})",
                    file.display(),
                    self.root.display()
                );
                if !strays.contains(&stray) {
                    strays.push(stray);
                }
                continue;
            };
            // Code at module or class level runs at import: reached by importing.
            let Some(unit) = facts.unit_at(*line) else {
                continue;
            };
            let id = Id {
                module: module.as_str().into(),
                index: unit,
            };
            if !targets.iter().any(|(t, _)| *t == id) {
                targets.push((id, format!("{module}.{}", facts.units[unit].qualname)));
            }
        }
        let mut missing_entries = Vec::new();
        let mut start = Vec::new();
        for e in entries {
            match self.entry(e) {
                Some(ids) => start.extend(ids),
                None => missing_entries.push(e.clone()),
            }
        }
        let search = self.search(start);
        let mut unreached: Vec<String> = targets
            .iter()
            .filter(|(t, _)| !search.parents.contains_key(t))
            .map(|(_, name)| name.clone())
            .collect();
        unreached.extend(strays);
        if unreached.is_empty() {
            let path = match targets.first() {
                Some((t, _)) => search.path(t, self),
                None => Vec::new(),
            };
            return Verdict::Reached { path };
        }
        let unfollowed_count = search.unfollowed.len();
        let mut unfollowed = search.unfollowed;
        unfollowed.truncate(MAX_PLACES);
        Verdict::Unreached {
            functions: unreached,
            missing_entries,
            unfollowed,
            unfollowed_count,
        }
    }

    /// Every unit calls from `start` reach, with the caller each was first reached from.
    fn search(&self, start: Vec<Id>) -> Search {
        let mut search = Search::default();
        let mut queue = VecDeque::new();
        for id in start {
            if !search.parents.contains_key(&id) {
                search.parents.insert(id.clone(), None);
                queue.push_back(id);
            }
        }
        let mut seen_places = HashSet::new();
        while let Some(id) = queue.pop_front() {
            let Some(facts) = self.load(&id.module) else {
                continue;
            };
            let Some(unit) = unit_of(&facts, id.index) else {
                continue;
            };
            let scope = Scope {
                facts: &facts,
                unit: Some(id.index),
            };
            for u in &unit.uses {
                let mut out = Vec::new();
                let mut opaque = false;
                for v in self.eval(scope, &u.expr, 0) {
                    if u.called {
                        opaque |= self.callees(&v, &mut out);
                    } else if let Value::Function(f) = v {
                        out.push(f);
                    }
                }
                if opaque
                    && u.called
                    && self.may_define(&u.expr)
                    && seen_places.insert((id.clone(), u.line))
                {
                    search.unfollowed.push(Place {
                        file: self.relative_file(&id.module),
                        line: u.line,
                        text: u.text.clone(),
                    });
                }
                for callee in out {
                    if callee.index != TOP && !search.parents.contains_key(&callee) {
                        search
                            .parents
                            .insert(callee.clone(), Some((id.clone(), u.line)));
                        queue.push_back(callee);
                    }
                }
            }
        }
        search
    }

    /// Whether a call the search cannot follow may run the tree's code: a method call counts
    /// only where some `def` of the tree has its name (`x.view(...)` on a tensor does not).
    fn may_define(&self, callee: &model::Expr) -> bool {
        match callee {
            model::Expr::Attr(_, name) | model::Expr::GetAttr(_, Some(name)) => {
                self.index().defined.contains(name)
            }
            _ => true,
        }
    }

    fn relative_file(&self, module: &str) -> String {
        match self.file_of(module) {
            Some((path, _)) => {
                crate::targets::glob_path(path.strip_prefix(&self.root).unwrap_or(&path))
            }
            None => module.to_string(),
        }
    }

    fn qualified(&self, id: &Id) -> String {
        match self
            .load(&id.module)
            .and_then(|f| unit_of(&f, id.index).map(|u| u.qualname.clone()))
        {
            Some(q) => format!("{}.{q}", id.module),
            None => id.module.to_string(),
        }
    }
}

/// What one search found.
#[derive(Default)]
struct Search {
    /// Each unit reached, and the unit and line it was first called from (`None`: an entry).
    parents: HashMap<Id, Option<(Id, usize)>>,
    /// Calls that could not be followed, in the order met.
    unfollowed: Vec<Place>,
}

impl Search {
    /// The chain of calls from an entry to `to`, entry first.
    fn path(&self, to: &Id, program: &Program) -> Vec<String> {
        let mut chain = vec![program.qualified(to)];
        let mut at = to;
        while let Some(Some((parent, _))) = self.parents.get(at) {
            chain.push(program.qualified(parent));
            at = parent;
            if chain.len() > self.parents.len() {
                break;
            }
        }
        chain.reverse();
        chain
    }
}

/// Every `.py` file below `root`, symbolic links to folders not followed (a loop must end).
fn python_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() && path.extension().is_some_and(|e| e == "py") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The facts of module `name` of the release at `root`; `None` where it has no such module.
fn read_module(root: &Path, name: &str) -> Option<Arc<Facts>> {
    if name.is_empty() || !name.split('.').all(crate::python::is_identifier) {
        return None;
    }
    let (path, is_package) = file_of(root, name)?;
    let meta = std::fs::metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > MAX_MODULE_BYTES {
        return None;
    }
    let stamp: cache::Stamp = (meta.len(), meta.modified().ok());
    if let Some(facts) = cache::cached(&path, stamp, name) {
        return Some(facts);
    }
    let bytes = std::fs::read(&path).ok()?;
    let facts = Arc::new(Facts::read(
        name,
        is_package,
        &String::from_utf8_lossy(&bytes),
    ));
    cache::remember(path, stamp, name, facts.clone());
    Some(facts)
}

/// The file of module `name` below `root`, and whether it is a package's `__init__`.
fn file_of(root: &Path, module: &str) -> Option<(PathBuf, bool)> {
    let mut base = root.to_path_buf();
    base.extend(module.split('.'));
    let package = base.join("__init__.py");
    if package.is_file() {
        return Some((package, true));
    }
    let file = base.with_extension("py");
    file.is_file().then_some((file, false))
}

/// The module a file of the release at `root` is (its path relative to the root, or absolute).
fn module_name(root: &Path, file: &Path) -> Option<String> {
    let file = if file.is_relative() && root.is_absolute() {
        plain(file)
    } else {
        file.to_path_buf()
    };
    let rel = file.strip_prefix(root).ok()?;
    let stem = rel.to_str()?.strip_suffix(".py")?;
    let mut parts: Vec<&str> = stem.split(['/', '\\']).filter(|p| !p.is_empty()).collect();
    if parts.last() == Some(&"__init__") {
        parts.pop();
    }
    (!parts.is_empty()).then(|| parts.join("."))
}

/// `path` made absolute (against the working directory) without `.` components, so a file
/// named as `./pkg/m.py` or `/abs/pkg/m.py` is found below a root named either way.
pub(crate) fn plain(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    absolute
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}
