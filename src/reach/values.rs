//! What an expression may evaluate to, as far as the release's own source says: modules,
//! functions, classes and their instances, followed through imports, assignments, bases (the
//! method resolution order), `self.x = ...` in a class's methods, annotations, return
//! annotations, literal tables and `getattr` with a literal name. What cannot be followed is
//! `Opaque`; what lies outside the tree (torch, the standard library, builtins) is `Outside`.

use std::rc::Rc;
use std::sync::Arc;

use super::Program;
use super::model::{Binding, Expr, Facts, Kind, Local, Unit};

/// How deep one evaluation may go: real chains are a few links long, and a cycle must end.
const MAX_DEPTH: usize = 24;

/// A class or a unit of a module.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id {
    /// The module's absolute name.
    pub module: Rc<str>,
    /// The class's or unit's index in the module's facts; [`TOP`] for its module-level code.
    pub index: usize,
}

/// The index standing for a module's module-level code.
pub const TOP: usize = usize::MAX;

/// One thing an expression may be.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Value {
    Module(Rc<str>),
    Function(Id),
    Class(Id),
    Instance(Id),
    /// `super()` in a method of this class.
    Super(Id),
    Table(Rc<[Value]>),
    Opaque,
    Outside,
}

/// Where an expression is read: a module, and the unit whose locals it sees.
#[derive(Clone, Copy)]
pub(super) struct Scope<'f> {
    pub facts: &'f Arc<Facts>,
    pub unit: Option<usize>,
}

impl Scope<'_> {
    fn unit(&self) -> Option<&Unit> {
        self.unit.and_then(|u| unit_of(self.facts, u))
    }
}

/// The unit `index` of `facts` ([`TOP`]: its module-level code).
pub(super) fn unit_of(facts: &Facts, index: usize) -> Option<&Unit> {
    if index == TOP {
        facts.top.as_ref()
    } else {
        facts.units.get(index)
    }
}

pub(super) fn push_unique(out: &mut Vec<Value>, values: impl IntoIterator<Item = Value>) {
    for v in values {
        if !out.contains(&v) {
            out.push(v);
        }
    }
}

impl Program {
    /// What `e`, read in `scope`, may be.
    pub(super) fn eval(&self, scope: Scope<'_>, e: &Expr, depth: usize) -> Vec<Value> {
        if depth > MAX_DEPTH {
            return vec![Value::Opaque];
        }
        let d = depth + 1;
        match e {
            Expr::Name(n) => self.name(scope, n, d),
            Expr::Attr(object, name) => {
                let mut out = Vec::new();
                for v in self.eval(scope, object, d) {
                    push_unique(&mut out, self.attr(&v, name, d));
                }
                out
            }
            Expr::GetAttr(object, Some(name)) => {
                self.eval(scope, &Expr::Attr(object.clone(), name.clone()), d)
            }
            Expr::GetAttr(_, None) => vec![Value::Opaque],
            // Pairs: only an item is followed (see `loop_targets`).
            Expr::Enumerate(_) => vec![Value::Outside],
            Expr::Call(callee) => {
                // `TABLE.get(key)` is an item of the table.
                if let Expr::Attr(object, get) = callee.as_ref()
                    && get == "get"
                {
                    let tables = self.eval(scope, object, d);
                    if !tables.is_empty() && tables.iter().all(|t| matches!(t, Value::Table(_))) {
                        return self.items(&tables);
                    }
                }
                let mut out = Vec::new();
                for v in self.eval(scope, callee, d) {
                    push_unique(&mut out, self.result(&v, d));
                }
                out
            }
            Expr::Item(object) => {
                let values = self.eval(scope, object, d);
                self.items(&values)
            }
            Expr::Super => match scope.unit().and_then(|u| u.class) {
                Some(class) => vec![Value::Super(Id {
                    module: scope.facts.name.as_str().into(),
                    index: class,
                })],
                None => vec![Value::Opaque],
            },
            Expr::Table(items) => {
                let mut values = Vec::new();
                for item in items {
                    push_unique(&mut values, self.eval(scope, item, d));
                }
                vec![Value::Table(values.into())]
            }
            Expr::Union(parts) => {
                let mut out = Vec::new();
                for p in parts {
                    push_unique(&mut out, self.eval(scope, p, d));
                }
                out
            }
            Expr::Other => vec![Value::Opaque],
        }
    }

    fn items(&self, tables: &[Value]) -> Vec<Value> {
        let mut out = Vec::new();
        for t in tables {
            match t {
                Value::Table(items) => push_unique(&mut out, items.iter().cloned()),
                Value::Outside => push_unique(&mut out, [Value::Outside]),
                _ => push_unique(&mut out, [Value::Opaque]),
            }
        }
        out
    }

    /// A name read in `scope`: the unit's local, else the module's global (a class body's
    /// names are not seen from its methods, as in Python).
    fn name(&self, scope: Scope<'_>, name: &str, depth: usize) -> Vec<Value> {
        if let Some(unit) = scope.unit()
            && let Some(locals) = unit.locals.get(name)
        {
            // Remembered per unit and name: `x = f(x)` written ten times must not branch
            // ten ways at each of them.
            let key = (
                Id {
                    module: scope.facts.name.as_str().into(),
                    index: scope.unit.unwrap_or(TOP),
                },
                name.to_string(),
            );
            if let Some(known) = self.locals.borrow().get(&key) {
                return known.clone();
            }
            self.locals.borrow_mut().insert(key.clone(), Vec::new());
            let mut out = Vec::new();
            for local in locals {
                push_unique(&mut out, self.local(scope, unit, local, depth));
            }
            self.locals.borrow_mut().insert(key, out.clone());
            return out;
        }
        self.global(scope.facts, name, depth)
    }

    fn local(&self, scope: Scope<'_>, unit: &Unit, local: &Local, depth: usize) -> Vec<Value> {
        let module: Rc<str> = scope.facts.name.as_str().into();
        match local {
            Local::Param { position: 0, .. }
                if unit.class.is_some() && unit.kind != Kind::Static =>
            {
                let id = Id {
                    module,
                    index: unit.class.unwrap_or_default(),
                };
                vec![if unit.kind == Kind::ClassMethod {
                    Value::Class(id)
                } else {
                    Value::Instance(id)
                }]
            }
            Local::Param {
                annotation: Some(t),
                ..
            }
            | Local::Typed(t) => self.instances(scope, t, depth),
            Local::Param { .. } | Local::Opaque => vec![Value::Opaque],
            Local::Builtin => vec![Value::Outside],
            Local::Import(b) => self.binding(scope.facts, b, depth),
            Local::Assigned(e) => self.eval(scope, e, depth),
        }
    }

    /// The instances of the types an annotation names.
    fn instances(&self, scope: Scope<'_>, t: &Expr, depth: usize) -> Vec<Value> {
        let types = self.eval(
            Scope {
                unit: None,
                ..scope
            },
            t,
            depth,
        );
        if types.is_empty() {
            return vec![Value::Opaque];
        }
        types
            .into_iter()
            .map(|v| match v {
                Value::Class(c) => Value::Instance(c),
                Value::Outside => Value::Outside,
                _ => Value::Opaque,
            })
            .collect()
    }

    /// A module-level name of `facts`, through its imports; remembered per module.
    pub(super) fn global(&self, facts: &Arc<Facts>, name: &str, depth: usize) -> Vec<Value> {
        let key = (facts.name.clone(), name.to_string());
        if let Some(known) = self.globals.borrow().get(&key) {
            return known.clone();
        }
        // A cycle (`a = b; b = a`, modules importing each other) reads as nothing.
        self.globals.borrow_mut().insert(key.clone(), Vec::new());
        let values = self.global_uncached(facts, name, depth);
        self.globals.borrow_mut().insert(key, values.clone());
        values
    }

    fn global_uncached(&self, facts: &Arc<Facts>, name: &str, depth: usize) -> Vec<Value> {
        let Some(bindings) = facts.bindings.get(name) else {
            let mut out = Vec::new();
            for star in &facts.stars {
                if let Some(found) = self.load(star)
                    && (found.bindings.contains_key(name) || !found.stars.is_empty())
                {
                    push_unique(&mut out, self.global(&found, name, depth));
                }
            }
            return if out.is_empty() {
                vec![Value::Outside]
            } else {
                out
            };
        };
        let mut out = Vec::new();
        for b in bindings {
            push_unique(&mut out, self.binding(facts, b, depth));
        }
        out
    }

    /// What one binding of a module-level name (or an import inside a unit) may be.
    fn binding(&self, facts: &Arc<Facts>, b: &Binding, depth: usize) -> Vec<Value> {
        let module: Rc<str> = facts.name.as_str().into();
        match b {
            Binding::Function(u) => vec![Value::Function(Id {
                module: module.clone(),
                index: *u,
            })],
            Binding::Class(c) => vec![Value::Class(Id {
                module: module.clone(),
                index: *c,
            })],
            Binding::Module(m) => vec![self.module_value(m)],
            Binding::From { module: m, name: n } => self.member(m, n, depth),
            Binding::Value(e) => self.eval(Scope { facts, unit: None }, e, depth),
            Binding::Opaque => vec![Value::Opaque],
        }
    }

    fn module_value(&self, name: &str) -> Value {
        if self.load(name).is_some() {
            Value::Module(name.into())
        } else {
            Value::Outside
        }
    }

    /// `from module import name`: the module's global, else its submodule.
    fn member(&self, module: &str, name: &str, depth: usize) -> Vec<Value> {
        let Some(facts) = self.load(module) else {
            return vec![Value::Outside];
        };
        let sub = format!("{module}.{name}");
        if !facts.bindings.contains_key(name) && self.load(&sub).is_some() {
            return vec![Value::Module(sub.into())];
        }
        let found = self.global(&facts, name, depth);
        if found == [Value::Outside] && self.load(&sub).is_some() {
            return vec![Value::Module(sub.into())];
        }
        found
    }

    /// `value.name`.
    pub(super) fn attr(&self, value: &Value, name: &str, depth: usize) -> Vec<Value> {
        match value {
            Value::Module(m) => self.member(m, name, depth),
            Value::Class(c) => self.lookup(c, name, false, depth),
            Value::Instance(c) => self.lookup(c, name, true, depth),
            Value::Super(c) => {
                let mro = self.mro(c);
                let mut out = Vec::new();
                for next in mro.iter().skip(1) {
                    match next {
                        Some(k) => {
                            let found = self.own(k, name, true, depth);
                            if !found.is_empty() {
                                return found;
                            }
                        }
                        None => {
                            out.push(Value::Outside);
                            return out;
                        }
                    }
                }
                vec![Value::Outside]
            }
            Value::Table(_) | Value::Function(_) => vec![Value::Opaque],
            Value::Opaque => vec![Value::Opaque],
            Value::Outside => vec![Value::Outside],
        }
    }

    /// What calling `value` returns.
    fn result(&self, value: &Value, depth: usize) -> Vec<Value> {
        match value {
            Value::Class(c) => vec![Value::Instance(c.clone())],
            Value::Function(f) => {
                if let Some(known) = self.results.borrow().get(f) {
                    return known.clone();
                }
                self.results.borrow_mut().insert(f.clone(), Vec::new());
                let out = self.returned(f, depth);
                self.results.borrow_mut().insert(f.clone(), out.clone());
                out
            }
            Value::Outside => vec![Value::Outside],
            _ => vec![Value::Opaque],
        }
    }

    /// What function `f` returns: its annotation's instances, else what its `return`
    /// statements return.
    fn returned(&self, f: &Id, depth: usize) -> Vec<Value> {
        let Some(facts) = self.load(&f.module) else {
            return vec![Value::Opaque];
        };
        let Some(unit) = unit_of(&facts, f.index) else {
            return vec![Value::Opaque];
        };
        if let Some(t) = &unit.returns {
            let scope = Scope {
                facts: &facts,
                unit: None,
            };
            let typed = self.instances(scope, t, depth);
            if !typed.iter().all(|v| *v == Value::Opaque) {
                return typed;
            }
        }
        let scope = Scope {
            facts: &facts,
            unit: Some(f.index),
        };
        let mut out = Vec::new();
        for e in &unit.returned {
            push_unique(&mut out, self.eval(scope, e, depth + 1));
        }
        if out.is_empty() {
            out.push(Value::Opaque);
        }
        out
    }

    /// The units a call of `value` runs first, and whether some of it cannot be followed.
    pub(super) fn callees(&self, value: &Value, out: &mut Vec<Id>) -> bool {
        let mut units = |values: Vec<Value>| {
            let mut opaque = false;
            for v in values {
                match v {
                    Value::Function(f) => out.push(f),
                    Value::Opaque => opaque = true,
                    _ => {}
                }
            }
            opaque
        };
        match value {
            Value::Function(f) => {
                out.push(f.clone());
                false
            }
            Value::Class(c) => {
                let mut opaque = false;
                for init in ["__new__", "__init__", "__post_init__"] {
                    opaque |= units(self.lookup(c, init, false, 0));
                }
                opaque
            }
            Value::Instance(c) => {
                let call = self.lookup(c, "__call__", true, 0);
                // torch's `Module.__call__` (a base outside the tree) runs `forward`.
                if call.iter().all(|v| matches!(v, Value::Outside)) {
                    units(self.lookup(c, "forward", true, 0))
                } else {
                    units(call)
                }
            }
            Value::Opaque => true,
            _ => false,
        }
    }
}
