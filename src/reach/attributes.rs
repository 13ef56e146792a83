//! Whether instances of a class have an attribute in one release: a method, a class-level
//! name (a dataclass field), a nested class, or `self.name = ...` / `setattr(self, "name", ...)`
//! in a method of the class or of a class of its resolution order. What a template reads of
//! `self` must be there in the release it lands in, or it is an `AttributeError` at run time.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tree_sitter::Node;

use super::Program;
use super::model::Facts;
use super::values::{Id, Value};

/// What a release says of one attribute of a class's instances.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attribute {
    /// Defined or assigned by the class or a class of its resolution order.
    Found,
    /// Cannot be known: a base outside the release (torch's `nn.Module`), `__getattr__`,
    /// a computed `setattr`, or a class the facts do not hold.
    Unknown,
    /// No class of its resolution order, all of them in the release, has it.
    Absent {
        /// The classes searched, `module.Class`, the class first.
        searched: Vec<String>,
    },
}

impl Program {
    /// The release holding `file` (the folder above its outermost package) with the module
    /// `file` is read from `text` instead of the disk (an edit's output), and that module's
    /// name; `None` where `file` is not a file of a package on disk (a test case, stdin, a
    /// loose script: no release to ask). `tree` is the parse of `text`.
    pub fn around(file: &Path, text: &str, tree: Node<'_>) -> Option<(Program, String)> {
        let file = super::plain(file);
        let dir = file.parent()?;
        if !file.is_file() || !dir.join("__init__.py").is_file() {
            return None;
        }
        let mut root: PathBuf = dir.to_path_buf();
        while root.join("__init__.py").is_file() {
            match root.parent() {
                Some(up) => root = up.to_path_buf(),
                None => break,
            }
        }
        let program = Program::new(&root);
        let module = program.module_of(&file)?;
        let is_package = file.file_name().is_some_and(|n| n == "__init__.py");
        program.modules.borrow_mut().insert(
            module.clone(),
            Some(Arc::new(Facts::read_tree(&module, is_package, text, tree))),
        );
        Some((program, module))
    }

    /// Whether instances of class `qualname` of `module` have attribute `name`.
    pub fn class_attribute(&self, module: &str, qualname: &str, name: &str) -> Attribute {
        let Some(facts) = self.load(module) else {
            return Attribute::Unknown;
        };
        let Some(index) = facts.classes.iter().position(|c| c.qualname == qualname) else {
            return Attribute::Unknown;
        };
        let class = Id {
            module: module.into(),
            index,
        };
        let mut searched = Vec::new();
        for k in self.mro(&class).iter() {
            let Some(k) = k else {
                return Attribute::Unknown;
            };
            let Some(facts) = self.load(&k.module) else {
                return Attribute::Unknown;
            };
            let c = &facts.classes[k.index];
            if c.dynamic
                || c.methods.contains_key("__getattr__")
                || c.methods.contains_key("__getattribute__")
            {
                return Attribute::Unknown;
            }
            if c.methods.contains_key(name)
                || c.attrs.contains_key(name)
                || c.nested.contains_key(name)
                || c.self_attrs.contains_key(name)
            {
                return Attribute::Found;
            }
            searched.push(format!("{}.{}", k.module, c.qualname));
        }
        // A base whose value cannot be read leaves the order unknown.
        if facts.classes[index].bases.iter().any(|b| {
            self.eval(
                super::values::Scope {
                    facts: &facts,
                    unit: None,
                },
                b,
                0,
            )
            .iter()
            .any(|v| !matches!(v, Value::Class(_)))
        }) {
            return Attribute::Unknown;
        }
        Attribute::Absent { searched }
    }
}
