//! Other modules' sources, for what the file being patched imports: a signature the file does
//! not define is followed through its `from … import` statements (and a class's bases) into
//! the module that does.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A module found for an import: where it was read from (for messages) and its text.
#[derive(Debug, Clone)]
pub struct Module {
    /// The path (or module name) shown in messages, and the `importer` of its own imports.
    pub name: String,
    /// Its source text.
    pub text: Arc<str>,
}

/// Finds the modules a file imports.
pub trait ModuleSource: Send + Sync + fmt::Debug {
    /// The module `import` (as written after `from`, leading dots included) names in the file
    /// `importer`; `Err` says where it was looked for.
    fn module(&self, importer: &str, import: &str) -> Result<Module, String>;
}

/// Splits `..pkg.mod` into its level (the number of leading dots) and the dotted rest.
fn split_relative(import: &str) -> (usize, &str) {
    let rest = import.trim_start_matches('.');
    (import.len() - rest.len(), rest)
}

/// Modules on disk: relative imports from the importer's folder, absolute ones from every
/// folder above the importer (a release unpacked anywhere holds its own package root) and from
/// the given roots (`--site-packages`).
#[derive(Debug, Default)]
pub struct FsModules {
    roots: Vec<PathBuf>,
}

impl FsModules {
    /// Looks absolute imports up in `roots` as well as above each importer.
    pub fn new(roots: Vec<PathBuf>) -> Self {
        Self { roots }
    }

    /// Where `import` may be, in the order Python looks, and further folders above the
    /// importer that Python finds only if they are on its path (see `module`).
    fn candidates(&self, importer: &str, import: &str) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let (level, rest) = split_relative(import);
        let parts: Vec<&str> = rest.split('.').filter(|p| !p.is_empty()).collect();
        let under = |base: &Path| {
            let mut module = base.to_path_buf();
            module.extend(&parts);
            // A package folder wins over a module of the same name, as in Python's finder.
            [module.join("__init__.py"), module.with_extension("py")]
        };
        let importer_dir = Path::new(importer).parent().unwrap_or(Path::new(""));
        if level > 0 {
            let mut base = importer_dir.to_path_buf();
            for _ in 1..level {
                base.pop();
            }
            let found = if parts.is_empty() {
                vec![base.join("__init__.py")]
            } else {
                under(&base).to_vec()
            };
            return (found, Vec::new());
        }
        // Python 3 has no implicit relative imports: an absolute name is looked up on its
        // path, where the importer's own top-level package was found (the folder above the
        // outermost `__init__.py`), then in the given roots in order. Folders inside the
        // importer's package are never searched.
        let absolute = std::path::absolute(importer_dir).unwrap_or_default();
        let root = absolute
            .ancestors()
            .find(|dir| !dir.join("__init__.py").is_file())
            .unwrap_or(&absolute)
            .to_path_buf();
        let first = std::iter::once(root.clone())
            .chain(self.roots.iter().cloned())
            .flat_map(|base| under(&base))
            .collect();
        let further = root.ancestors().skip(1).flat_map(under).collect();
        (first, further)
    }
}

impl ModuleSource for FsModules {
    /// A module at the first place Python looks that holds it. Failing those, one found in a
    /// single folder further above the importer (a namespace package's root, or a release
    /// unpacked below its path entry) is taken; one found in two is refused, since which of
    /// them Python imports depends on a path regraft does not know.
    fn module(&self, importer: &str, import: &str) -> Result<Module, String> {
        let (first, further) = self.candidates(importer, import);
        if let Some(found) = first.iter().find_map(|path| read(path)) {
            return Ok(found);
        }
        let mut above = further.iter().filter_map(|path| read(path));
        match (above.next(), above.next()) {
            (Some(one), None) => return Ok(one),
            (Some(one), Some(two)) => {
                return Err(format!(
                    "`{import}` is both {} and {}: which one Python imports depends on its path (name the folder with --site-packages)",
                    one.name, two.name
                ));
            }
            _ => {}
        }
        let (level, _) = split_relative(import);
        // Named by its module file, the likelier of the two a reader looks for.
        let named = first
            .iter()
            .find(|c| !c.ends_with("__init__.py"))
            .or(first.first());
        Err(match (level, named) {
            (1.., Some(first)) => format!("`{import}`: no file {}", first.display()),
            _ => format!("`{import}`: not found above the file or in --site-packages"),
        })
    }
}

/// The module file at `path`, if it is one and reads as text.
fn read(path: &Path) -> Option<Module> {
    if !path.is_file() {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    Some(Module {
        name: path.display().to_string(),
        text: text.into(),
    })
}

/// Modules given by name (the Python API's `context` mapping): relative imports are resolved
/// against the dotted name of the module being patched.
#[derive(Debug, Default)]
pub struct MapModules {
    /// The dotted name of the module being patched (`transformers.models.x.modeling_x`).
    pub current: String,
    /// Module name → source.
    pub sources: HashMap<String, Arc<str>>,
    /// Whether the module being patched is a package (its `__init__.py`): its relative
    /// imports resolve inside it, as its `__package__` is itself.
    pub current_is_package: bool,
}

impl MapModules {
    /// The absolute module name `import` stands for in `importer`; `package`: the importer is
    /// a package, whose relative imports start from itself rather than its parent.
    fn absolute(importer: &str, import: &str, package: bool) -> String {
        let (level, rest) = split_relative(import);
        if level == 0 {
            return rest.to_string();
        }
        let mut base: Vec<&str> = importer.split('.').collect();
        for _ in 0..level - usize::from(package) {
            base.pop();
        }
        base.extend(rest.split('.').filter(|p| !p.is_empty()));
        base.join(".")
    }

    /// Whether the module `name` is a package: the one being patched, said so, or one with a
    /// submodule among the sources.
    fn is_package(&self, name: &str) -> bool {
        (name == self.current && self.current_is_package)
            || self.sources.keys().any(|k| {
                k.len() > name.len() && k.starts_with(name) && k[name.len()..].starts_with('.')
            })
    }
}

impl ModuleSource for MapModules {
    fn module(&self, importer: &str, import: &str) -> Result<Module, String> {
        let importer = if self.sources.contains_key(importer) {
            importer
        } else {
            &self.current
        };
        let name = Self::absolute(importer, import, self.is_package(importer));
        match self.sources.get(&name) {
            Some(text) => Ok(Module {
                name,
                text: text.clone(),
            }),
            None => Err(format!("`{import}`: no module `{name}` in the context")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_imports_climb_one_folder_per_extra_dot() {
        let fs = FsModules::default();
        let (got, _) = fs.candidates("t/models/qwen3/modeling_qwen3.py", "..qwen2.modeling_qwen2");
        // A package folder first, as Python's finder looks for one before a module.
        assert_eq!(
            got[..2],
            [
                PathBuf::from("t/models/qwen2/modeling_qwen2/__init__.py"),
                PathBuf::from("t/models/qwen2/modeling_qwen2.py")
            ]
        );
        let (got, _) = fs.candidates("t/models/qwen3/modeling_qwen3.py", ".configuration_qwen3");
        assert_eq!(
            got[1],
            PathBuf::from("t/models/qwen3/configuration_qwen3.py")
        );
    }

    #[test]
    fn absolute_imports_are_looked_up_where_python_looks() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("lib");
        let file = |rel: &str, text: &str| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        file("pkg/__init__.py", "");
        file("pkg/sub/__init__.py", "");
        file("pkg/sub/m.py", "from util import Layer\n");
        // Python 3 never finds this one for `import util`: it is inside the package.
        file("pkg/util.py", "decoy = 1\n");
        file("util.py", "real = 1\n");
        let importer = root.join("pkg/sub/m.py");
        let fs = FsModules::default();
        let found = fs.module(importer.to_str().unwrap(), "util").unwrap();
        assert_eq!(&*found.text, "real = 1\n");
        // Not beside the package: found once further up, taken; found twice, refused.
        std::fs::remove_file(root.join("util.py")).unwrap();
        std::fs::write(dir.path().join("util.py"), "above = 1\n").unwrap();
        let found = fs.module(importer.to_str().unwrap(), "util").unwrap();
        assert_eq!(&*found.text, "above = 1\n");
        let nested = dir.path().join("outer");
        std::fs::create_dir_all(nested.join("lib2")).unwrap();
        std::fs::write(nested.join("util.py"), "one = 1\n").unwrap();
        std::fs::write(dir.path().join("util.py"), "two = 1\n").unwrap();
        std::fs::write(nested.join("lib2/m.py"), "").unwrap();
        let deep = nested.join("lib2/sub/m.py");
        std::fs::create_dir_all(deep.parent().unwrap()).unwrap();
        let error = fs.module(deep.to_str().unwrap(), "util").unwrap_err();
        assert!(error.contains("depends on its path"), "{error}");
        // A root given in order comes before anything further up.
        let fs = FsModules::new(vec![nested.clone()]);
        let found = fs.module(deep.to_str().unwrap(), "util").unwrap();
        assert_eq!(&*found.text, "one = 1\n");
    }

    #[test]
    fn mapped_relative_imports_resolve_against_the_current_module() {
        assert_eq!(
            MapModules::absolute("t.models.a.modeling_a", "..b.modeling_b", false),
            "t.models.b.modeling_b"
        );
        assert_eq!(MapModules::absolute("x", "pkg.mod", false), "pkg.mod");
        // In a package's `__init__`, `.x` is a submodule of the package itself.
        assert_eq!(
            MapModules::absolute("t.models.a", ".modeling_a", true),
            "t.models.a.modeling_a"
        );
        let map = MapModules {
            current: "t.models.a".into(),
            sources: [("t.models.a.modeling_a".to_string(), Arc::from("x = 1\n"))].into(),
            current_is_package: false,
        };
        assert_eq!(
            map.module("t.models.a", ".modeling_a").unwrap().name,
            "t.models.a.modeling_a"
        );
    }
}
