//! Classes as call resolution sees them: the resolution order (bases through the release's
//! imports), attributes found along it, and the subclasses that may override a method.

use std::collections::HashMap;
use std::rc::Rc;

use super::Program;
use super::values::{Id, Scope, Value, push_unique};

impl Program {
    /// `name` on class `c` (or its instances): the first class of its resolution order that
    /// defines it, and every override in a subclass (the call may be dispatched there).
    pub(super) fn lookup(&self, c: &Id, name: &str, instance: bool, depth: usize) -> Vec<Value> {
        let key = (c.clone(), name.to_string(), instance);
        if let Some(known) = self.lookups.borrow().get(&key) {
            return known.clone();
        }
        // A cycle (an attribute assigned from itself) reads as nothing.
        self.lookups.borrow_mut().insert(key.clone(), Vec::new());
        let out = self.lookup_uncached(c, name, instance, depth);
        self.lookups.borrow_mut().insert(key, out.clone());
        out
    }

    fn lookup_uncached(&self, c: &Id, name: &str, instance: bool, depth: usize) -> Vec<Value> {
        let mut out = Vec::new();
        for k in self.mro(c).iter() {
            match k {
                Some(k) => {
                    let found = self.own(k, name, instance, depth);
                    if !found.is_empty() {
                        out = found;
                        break;
                    }
                }
                None => {
                    out.push(Value::Outside);
                    break;
                }
            }
        }
        if out.is_empty() {
            // A special method no class of the tree defines is `object`'s; any other name
            // may be set where this cannot see (`setattr`, a metaclass).
            out.push(if name.starts_with("__") && name.ends_with("__") {
                Value::Outside
            } else {
                Value::Opaque
            });
        }
        // Only an instance's method is dispatched by its type: a class's own attribute (its
        // constructor, a class method called on it) is the one its resolution order finds.
        if instance
            && out
                .iter()
                .any(|v| matches!(v, Value::Function(_) | Value::Outside))
        {
            for sub in self.subclasses(c).iter() {
                if let Some(facts) = self.load(&sub.module)
                    && let Some(&m) = facts.classes[sub.index].methods.get(name)
                {
                    push_unique(
                        &mut out,
                        [Value::Function(Id {
                            module: sub.module.clone(),
                            index: m,
                        })],
                    );
                }
            }
        }
        out
    }

    /// `name` as class `k` itself defines it (empty where it does not).
    pub(super) fn own(&self, k: &Id, name: &str, instance: bool, depth: usize) -> Vec<Value> {
        let Some(facts) = self.load(&k.module) else {
            return Vec::new();
        };
        let class = &facts.classes[k.index];
        if let Some(&m) = class.methods.get(name) {
            return vec![Value::Function(Id {
                module: k.module.clone(),
                index: m,
            })];
        }
        if let Some(&n) = class.nested.get(name) {
            return vec![Value::Class(Id {
                module: k.module.clone(),
                index: n,
            })];
        }
        let mut out = Vec::new();
        let top = Scope {
            facts: &facts,
            unit: None,
        };
        for e in class.attrs.get(name).into_iter().flatten() {
            push_unique(&mut out, self.eval(top, e, depth + 1));
        }
        if instance {
            for (unit, e) in class.self_attrs.get(name).into_iter().flatten() {
                let scope = Scope {
                    facts: &facts,
                    unit: Some(*unit),
                };
                push_unique(&mut out, self.eval(scope, e, depth + 1));
            }
        }
        out
    }

    /// Class `c`'s resolution order, `c` first: left to right, depth first, each class once
    /// (C3 where no diamond reorders it); `None` for a base outside the tree, after which
    /// nothing can be known.
    pub(super) fn mro(&self, c: &Id) -> Rc<Vec<Option<Id>>> {
        if let Some(known) = self.mros.borrow().get(c) {
            return known.clone();
        }
        self.mros
            .borrow_mut()
            .insert(c.clone(), Rc::new(vec![Some(c.clone())]));
        let mut order = vec![Some(c.clone())];
        if let Some(facts) = self.load(&c.module) {
            let scope = Scope {
                facts: &facts,
                unit: None,
            };
            for base in &facts.classes[c.index].bases {
                for v in self.eval(scope, base, 0) {
                    match v {
                        Value::Class(b) => {
                            for k in self.mro(&b).iter() {
                                if !order.contains(k) {
                                    order.push(k.clone());
                                }
                            }
                        }
                        _ => {
                            if !order.contains(&None) {
                                order.push(None);
                            }
                        }
                    }
                }
            }
        }
        // An outside base ends what can be known: keep one `None`, last among what precedes.
        if let Some(at) = order.iter().position(Option::is_none) {
            let mut known: Vec<Option<Id>> =
                order.iter().filter(|k| k.is_some()).cloned().collect();
            known.insert(at.min(known.len()), None);
            order = known;
        }
        let order = Rc::new(order);
        self.mros.borrow_mut().insert(c.clone(), order.clone());
        order
    }

    /// Every class of the tree whose resolution order holds `c` (but `c`): candidates by
    /// the names their headers write, each confirmed by resolving its bases.
    fn subclasses(&self, c: &Id) -> Rc<Vec<Id>> {
        if let Some(known) = self.subs.borrow().get(c) {
            return known.clone();
        }
        let mut found: Vec<Id> = Vec::new();
        let mut names = vec![self.class_name(c)];
        let mut seen: HashMap<String, ()> = HashMap::new();
        while let Some(name) = names.pop() {
            if seen.insert(name.clone(), ()).is_some() {
                continue;
            }
            let candidates = self
                .headers()
                .get(&name)
                .map(Vec::as_slice)
                .unwrap_or_default();
            let modules: Vec<&str> = candidates.iter().map(|(m, _)| m.as_str()).collect();
            self.preload(&modules);
            for (module, class) in candidates {
                let Some(facts) = self.load(module) else {
                    continue;
                };
                for (index, k) in facts.classes.iter().enumerate() {
                    if &k.name != class {
                        continue;
                    }
                    let id = Id {
                        module: module.as_str().into(),
                        index,
                    };
                    if id != *c && !found.contains(&id) && self.mro(&id).contains(&Some(c.clone()))
                    {
                        found.push(id);
                        names.push(class.clone());
                    }
                }
            }
        }
        let found = Rc::new(found);
        self.subs.borrow_mut().insert(c.clone(), found.clone());
        found
    }

    fn class_name(&self, c: &Id) -> String {
        self.load(&c.module)
            .map(|f| f.classes[c.index].name.clone())
            .unwrap_or_default()
    }
}
