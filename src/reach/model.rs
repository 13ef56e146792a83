//! What one module says about calls, as owned data: the expressions, bindings, units and
//! classes call resolution follows (read by `facts`, evaluated by `values`).

use std::collections::HashMap;

/// An expression, reduced to what call resolution can follow.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Expr {
    /// A name.
    Name(String),
    /// `value.name`.
    Attr(Box<Expr>, String),
    /// The result of calling the expression.
    Call(Box<Expr>),
    /// `value[...]`: an item of a table.
    Item(Box<Expr>),
    /// `getattr(value, "name")`; `None` where the name is computed.
    GetAttr(Box<Expr>, Option<String>),
    /// `super()` or `super(C, self)`.
    Super,
    /// `enumerate(xs)`: pairs of a count and an item of `xs`.
    Enumerate(Box<Expr>),
    /// A dict, list, tuple or set display: its values.
    Table(Vec<Expr>),
    /// Any of these (an annotation's `Optional[X]`/`X | Y`, `a or b`, `a if c else b`).
    Union(Vec<Expr>),
    /// Anything else.
    Other,
}

/// How a module-level name is bound (every binding the module may make, in any branch).
#[derive(Debug, Clone)]
pub(super) enum Binding {
    /// A `def` of this module (a unit).
    Function(usize),
    /// A `class` of this module.
    Class(usize),
    /// `import a.b` (binding `a`) or `import a.b as x`: the module, absolute.
    Module(String),
    /// `from m import name`: `m` absolute.
    From { module: String, name: String },
    /// `name = expr`.
    Value(Expr),
    /// What cannot be followed (a `for` target, tuple unpacking, `global` writes).
    Opaque,
}

/// A name a unit binds: a parameter or an assignment.
#[derive(Debug, Clone)]
pub(super) enum Local {
    /// A parameter, with its annotation; `position` 0 is the first.
    Param {
        annotation: Option<Expr>,
        position: usize,
    },
    /// An assignment (or an annotated one's annotation as a type).
    Assigned(Expr),
    /// `name: T` (with or without a value): the annotation, a type.
    Typed(Expr),
    /// An import inside the unit.
    Import(Binding),
    /// A value whose calls run none of the tree's code: `*args`, `**kwargs`, a function or
    /// class defined inside the unit (its calls are the unit's own).
    Builtin,
    /// A `with`/`except` target, tuple unpacking.
    Opaque,
}

/// One use of a value in a unit: a call, or a function value taken (a callback).
#[derive(Debug, Clone)]
pub(super) struct Use {
    /// The callee, or the value taken.
    pub expr: Expr,
    /// Whether it is called here.
    pub called: bool,
    /// Its line, 1-based.
    pub line: usize,
    /// Its text, shortened, for messages.
    pub text: String,
}

/// How a method is bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A plain function or method (its first parameter is the instance).
    Plain,
    /// `@staticmethod`.
    Static,
    /// `@classmethod` (its first parameter is the class).
    ClassMethod,
}

/// A module-level function or a method of a class (at any depth of classes).
#[derive(Debug, Clone)]
pub(super) struct Unit {
    /// `f`, `Cls.method`, `Outer.Inner.method`.
    pub qualname: String,
    /// The class it is a method of.
    pub class: Option<usize>,
    /// First and last line, 1-based.
    pub lines: (usize, usize),
    pub kind: Kind,
    pub locals: HashMap<String, Vec<Local>>,
    pub uses: Vec<Use>,
    /// The return annotation.
    pub returns: Option<Expr>,
    /// What its `return` statements return (a function returned is called by who calls it).
    pub returned: Vec<Expr>,
}

/// A class defined at module level or in another class.
#[derive(Debug, Clone)]
pub(super) struct Class {
    pub name: String,
    pub bases: Vec<Expr>,
    /// Methods by name (units).
    pub methods: HashMap<String, usize>,
    /// Class-level assignments, and nested classes as `Expr::Other` placeholders (see
    /// `nested`).
    pub attrs: HashMap<String, Vec<Expr>>,
    /// Classes defined in its body, by name.
    pub nested: HashMap<String, usize>,
    /// `self.name = expr` in its methods: the expression and the unit it is read in.
    pub self_attrs: HashMap<String, Vec<(usize, Expr)>>,
    /// `Outer.Inner` for a nested class.
    pub qualname: String,
    /// Its instances may carry attributes no assignment names: a method calls
    /// `setattr(self, name, ...)` with a computed name, or writes `self.__dict__`.
    pub dynamic: bool,
}

/// Everything call resolution needs of one module.
#[derive(Debug, Default)]
pub(super) struct Facts {
    /// Its absolute name.
    pub name: String,
    /// The package relative imports start from.
    pub package: String,
    pub bindings: HashMap<String, Vec<Binding>>,
    /// Modules it star-imports.
    pub stars: Vec<String>,
    pub units: Vec<Unit>,
    pub classes: Vec<Class>,
    /// Its module-level code as a unit of its own (what runs at import).
    pub top: Option<Unit>,
}
