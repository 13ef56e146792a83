//! What one module says about calls, read from one tree-sitter parse into owned data: its
//! module-level bindings, its classes, and its units (module-level functions and methods)
//! with every call and function value they use. A function nested in a unit, a lambda or a
//! class defined inside one is part of that unit: what it calls runs only when the unit runs.

use std::collections::HashMap;

use tree_sitter::Node;

use super::model::{Binding, Class, Expr, Facts, Kind, Local, Unit, Use};
use super::syntax::{
    annotation, expr, import_bindings, is_first_param, is_value_place, kind_of, loop_targets,
    setattr_on_self, short, target_names, undecorate,
};
use crate::python::definition_name;

impl Facts {
    /// Reads the module `name` (a package's `__init__` when `package`) from `text`.
    pub fn read(name: &str, is_package: bool, text: &str) -> Facts {
        Facts::read_tree(
            name,
            is_package,
            text,
            crate::python::parse(text).root_node(),
        )
    }

    /// As [`Facts::read`], of `text` already parsed as `root` (an edit's output, whose tree
    /// the edit check holds).
    pub fn read_tree(name: &str, is_package: bool, text: &str, root: Node<'_>) -> Facts {
        let package = if is_package {
            name.to_string()
        } else {
            name.rsplit_once('.')
                .map_or(String::new(), |(p, _)| p.to_string())
        };
        let mut facts = Facts {
            name: name.to_string(),
            package,
            ..Facts::default()
        };
        let mut top = new_unit(String::new(), None, root, Kind::Plain);
        let mut reader = Reader {
            text,
            facts: &mut facts,
        };
        reader.module_block(root, &mut top);
        facts.top = Some(top);
        facts
    }

    /// The unit whose lines hold `line`.
    pub fn unit_at(&self, line: usize) -> Option<usize> {
        self.units
            .iter()
            .position(|u| u.lines.0 <= line && line <= u.lines.1)
    }
}

fn new_unit(qualname: String, class: Option<usize>, node: Node<'_>, kind: Kind) -> Unit {
    Unit {
        qualname,
        class,
        lines: (node.start_position().row + 1, node.end_position().row + 1),
        kind,
        locals: HashMap::new(),
        uses: Vec::new(),
        returns: None,
        returned: Vec::new(),
    }
}

struct Reader<'a> {
    text: &'a str,
    facts: &'a mut Facts,
}

impl Reader<'_> {
    fn src(&self, node: Node<'_>) -> &str {
        &self.text[node.byte_range()]
    }

    /// Module-level statements, into compound statements (their every branch may bind).
    fn module_block(&mut self, block: Node<'_>, top: &mut Unit) {
        let mut cursor = block.walk();
        for stmt in block.named_children(&mut cursor) {
            self.module_statement(stmt, top);
        }
    }

    fn module_statement(&mut self, stmt: Node<'_>, top: &mut Unit) {
        match stmt.kind() {
            "function_definition" | "decorated_definition" | "class_definition" => {
                let (def, decorators) = undecorate(stmt);
                for d in &decorators {
                    self.uses_in(*d, top);
                }
                let Some(name) = definition_name(def, self.text).map(str::to_string) else {
                    return;
                };
                let binding = if def.kind() == "class_definition" {
                    Binding::Class(self.class(def, name.clone(), None, top))
                } else {
                    let kind = kind_of(&decorators, self.text);
                    Binding::Function(self.unit(def, name.clone(), None, kind, &decorators))
                };
                self.bind(name, binding);
            }
            "import_statement" | "import_from_statement" | "future_import_statement" => {
                for (name, binding) in self.import(stmt) {
                    self.bind(name, binding);
                }
            }
            "expression_statement" => {
                self.uses_in(stmt, top);
                if let Some(a) = stmt.named_child(0) {
                    self.module_assignment(a);
                }
            }
            "block" => self.module_block(stmt, top),
            "if_statement"
            | "try_statement"
            | "with_statement"
            | "for_statement"
            | "while_statement"
            | "elif_clause"
            | "else_clause"
            | "except_clause"
            | "finally_clause"
            | "except_group_clause" => {
                if stmt.kind() == "for_statement"
                    && let Some(left) = stmt.child_by_field_name("left")
                {
                    for name in target_names(left, self.text) {
                        self.bind(name, Binding::Opaque);
                    }
                }
                let mut cursor = stmt.walk();
                for child in stmt.named_children(&mut cursor) {
                    if matches!(
                        child.kind(),
                        "block"
                            | "elif_clause"
                            | "else_clause"
                            | "except_clause"
                            | "finally_clause"
                            | "except_group_clause"
                    ) {
                        self.module_statement(child, top);
                    } else if !matches!(child.kind(), "comment") {
                        self.uses_in(child, top);
                    }
                }
            }
            _ => self.uses_in(stmt, top),
        }
    }

    fn module_assignment(&mut self, a: Node<'_>) {
        if a.kind() != "assignment" {
            return;
        }
        let Some(left) = a.child_by_field_name("left") else {
            return;
        };
        let right = a.child_by_field_name("right");
        match (left.kind(), right) {
            ("identifier", Some(r)) => {
                let value = expr(r, self.text);
                self.bind(self.src(left).to_string(), Binding::Value(value));
            }
            ("identifier", None) => {
                let name = self.src(left).to_string();
                self.bind(name, Binding::Opaque);
            }
            _ => {
                for name in target_names(left, self.text) {
                    self.bind(name, Binding::Opaque);
                }
            }
        }
    }

    fn bind(&mut self, name: String, binding: Binding) {
        self.facts.bindings.entry(name).or_default().push(binding);
    }

    /// The bindings of one import statement (absolute module names).
    fn import(&mut self, stmt: Node<'_>) -> Vec<(String, Binding)> {
        let (bindings, stars) = import_bindings(stmt, self.text, &self.facts.package);
        self.facts.stars.extend(stars);
        bindings
    }

    /// Reads a class (module level or nested in `outer`), its methods and nested classes.
    fn class(
        &mut self,
        def: Node<'_>,
        qualname: String,
        outer: Option<usize>,
        top: &mut Unit,
    ) -> usize {
        let index = self.facts.classes.len();
        let name = definition_name(def, self.text)
            .unwrap_or_default()
            .to_string();
        let mut bases = Vec::new();
        if let Some(args) = def.child_by_field_name("superclasses") {
            let mut cursor = args.walk();
            for arg in args.named_children(&mut cursor) {
                if arg.kind() != "keyword_argument" && arg.kind() != "comment" {
                    bases.push(expr(arg, self.text));
                }
            }
        }
        self.facts.classes.push(Class {
            name: name.clone(),
            qualname: qualname.clone(),
            dynamic: false,
            bases,
            methods: HashMap::new(),
            attrs: HashMap::new(),
            nested: HashMap::new(),
            self_attrs: HashMap::new(),
        });
        if let Some(o) = outer {
            self.facts.classes[o].nested.insert(name, index);
        }
        if let Some(body) = def.child_by_field_name("body") {
            self.class_body(body, index, &qualname, top);
        }
        index
    }

    /// A class body's `if` or `try` (and its clauses): each branch read as the body it is in.
    fn class_branches(
        &mut self,
        stmt: Node<'_>,
        index: usize,
        qualname: &str,
        top: &mut Unit,
    ) -> bool {
        const BRANCHES: &[&str] = &[
            "block",
            "elif_clause",
            "else_clause",
            "except_clause",
            "finally_clause",
        ];
        if !matches!(stmt.kind(), "if_statement" | "try_statement")
            && !BRANCHES.contains(&stmt.kind())
        {
            return false;
        }
        if let Some(c) = stmt.child_by_field_name("condition") {
            self.uses_in(c, top);
        }
        let mut cursor = stmt.walk();
        let parts: Vec<Node<'_>> = stmt.named_children(&mut cursor).collect();
        for part in parts {
            if BRANCHES.contains(&part.kind()) {
                self.class_body(part, index, qualname, top);
            }
        }
        true
    }

    /// The statements of a class's body (and of the branches of an `if` or `try` there).
    fn class_body(&mut self, body: Node<'_>, index: usize, qualname: &str, top: &mut Unit) {
        let mut cursor = body.walk();
        for stmt in body.named_children(&mut cursor) {
            if self.class_branches(stmt, index, qualname, top) {
                continue;
            }
            let (inner, decorators) = undecorate(stmt);
            match inner.kind() {
                "function_definition" => {
                    let Some(m) = definition_name(inner, self.text).map(str::to_string) else {
                        continue;
                    };
                    let kind = kind_of(&decorators, self.text);
                    let unit = self.unit(
                        inner,
                        format!("{qualname}.{m}"),
                        Some(index),
                        kind,
                        &decorators,
                    );
                    self.facts.classes[index].methods.insert(m, unit);
                }
                "class_definition" => {
                    for d in &decorators {
                        self.uses_in(*d, top);
                    }
                    let Some(n) = definition_name(inner, self.text).map(str::to_string) else {
                        continue;
                    };
                    self.class(inner, format!("{qualname}.{n}"), Some(index), top);
                }
                _ => {
                    // Class-level code runs when the class is defined (at import).
                    self.uses_in(stmt, top);
                    if stmt.kind() == "expression_statement"
                        && let Some(a) = stmt.named_child(0)
                        && a.kind() == "assignment"
                        && let Some(l) = a.child_by_field_name("left")
                        && l.kind() == "identifier"
                    {
                        // `x: int` (a dataclass field) names an attribute with no value.
                        let value = a
                            .child_by_field_name("right")
                            .map_or(Expr::Other, |r| expr(r, self.text));
                        let key = self.src(l).to_string();
                        self.facts.classes[index]
                            .attrs
                            .entry(key)
                            .or_default()
                            .push(value);
                    }
                }
            }
        }
    }

    /// Reads one unit: its parameters, locals and uses (nested definitions included).
    fn unit(
        &mut self,
        def: Node<'_>,
        qualname: String,
        class: Option<usize>,
        kind: Kind,
        decorators: &[Node<'_>],
    ) -> usize {
        let mut unit = new_unit(qualname, class, def, kind);
        // A site on a decorator line belongs to the function it decorates.
        if let Some(first) = decorators.first() {
            unit.lines.0 = unit.lines.0.min(first.start_position().row + 1);
        }
        // A decorator runs at definition, and its wrapper is what callers reach: the wrapper
        // calls the function, so a use of the unit is a use of its decorators too.
        for d in decorators {
            self.uses_in(*d, &mut unit);
        }
        if let Some(params) = def.child_by_field_name("parameters") {
            self.params(params, &mut unit);
        }
        unit.returns = def
            .child_by_field_name("return_type")
            .map(|r| annotation(r, self.text));
        if let Some(body) = def.child_by_field_name("body") {
            self.body(body, &mut unit);
        }
        self.facts.units.push(unit);
        self.facts.units.len() - 1
    }

    fn params(&mut self, params: Node<'_>, unit: &mut Unit) {
        let mut cursor = params.walk();
        let mut position = 0;
        for p in params.named_children(&mut cursor) {
            let (name, ann) = match p.kind() {
                "identifier" => (Some(p), None),
                "typed_parameter" => (
                    p.named_child(0).filter(|n| n.kind() == "identifier"),
                    p.child_by_field_name("type"),
                ),
                "default_parameter" | "typed_default_parameter" => {
                    if let Some(v) = p.child_by_field_name("value") {
                        self.uses_in(v, unit);
                    }
                    (p.child_by_field_name("name"), p.child_by_field_name("type"))
                }
                "list_splat_pattern" | "dictionary_splat_pattern" => {
                    // `*args` is a tuple, `**kwargs` a dict: what they call is not the tree's.
                    if let Some(name) = p.named_child(0) {
                        self.local(name, Local::Builtin, unit);
                    }
                    continue;
                }
                _ => (None, None),
            };
            if let Some(name) = name {
                unit.locals
                    .entry(self.src(name).to_string())
                    .or_default()
                    .push(Local::Param {
                        annotation: ann.map(|a| annotation(a, self.text)),
                        position,
                    });
                position += 1;
            }
        }
    }

    /// Every statement below `node`: locals, `self.x = ...` and uses.
    fn body(&mut self, node: Node<'_>, unit: &mut Unit) {
        // Each node with its parent: `Node::parent` walks down from the root each time.
        let mut stack = vec![(node, node.parent())];
        while let Some((n, parent)) = stack.pop() {
            self.binds(n, unit);
            if n.kind() == "call" {
                self.call(n, unit);
            } else if is_value_place(n, parent) {
                self.taken(n, unit);
            }
            let mut cursor = n.walk();
            let children: Vec<Node<'_>> = n.named_children(&mut cursor).collect();
            stack.extend(children.into_iter().rev().map(|c| (c, Some(n))));
        }
    }

    /// What node `n` of a unit's body binds (a local, `self.x`) or returns.
    fn binds(&mut self, n: Node<'_>, unit: &mut Unit) {
        match n.kind() {
            "assignment" => self.assignment(n, unit),
            "augmented_assignment" => {
                if let Some(l) = n.child_by_field_name("left")
                    && l.kind() == "identifier"
                {
                    self.local(l, Local::Opaque, unit);
                }
            }
            "for_statement" | "for_in_clause" => {
                if let Some(l) = n.child_by_field_name("left") {
                    let items = n.child_by_field_name("right").map(|r| expr(r, self.text));
                    for (name, local) in loop_targets(l, items, self.text) {
                        unit.locals.entry(name).or_default().push(local);
                    }
                }
            }
            "as_pattern" | "except_clause" | "with_item" => {
                if let Some(alias) = n.child_by_field_name("alias") {
                    for name in target_names(alias, self.text) {
                        unit.locals.entry(name).or_default().push(Local::Opaque);
                    }
                }
            }
            "named_expression" => {
                if let (Some(l), Some(v)) = (
                    n.child_by_field_name("name"),
                    n.child_by_field_name("value"),
                ) {
                    let value = expr(v, self.text);
                    self.local(l, Local::Assigned(value), unit);
                }
            }
            "function_definition" | "class_definition" => {
                // Its calls are the unit's own (read below): calling it adds nothing.
                if let Some(name) = n.child_by_field_name("name") {
                    self.local(name, Local::Builtin, unit);
                }
            }
            "import_statement" | "import_from_statement" => {
                for (name, binding) in self.import(n) {
                    unit.locals
                        .entry(name)
                        .or_default()
                        .push(Local::Import(binding));
                }
            }
            "return_statement" => {
                if let Some(v) = n.named_child(0) {
                    unit.returned.push(expr(v, self.text));
                }
            }
            _ => {}
        }
    }

    fn local(&self, name: Node<'_>, local: Local, unit: &mut Unit) {
        unit.locals
            .entry(self.src(name).to_string())
            .or_default()
            .push(local);
    }

    fn assignment(&mut self, a: Node<'_>, unit: &mut Unit) {
        let Some(left) = a.child_by_field_name("left") else {
            return;
        };
        let right = a.child_by_field_name("right").map(|r| expr(r, self.text));
        let typed = a
            .child_by_field_name("type")
            .map(|t| annotation(t, self.text));
        match left.kind() {
            "identifier" => {
                if let Some(t) = typed {
                    self.local(left, Local::Typed(t), unit);
                }
                if let Some(r) = right {
                    self.local(left, Local::Assigned(r), unit);
                }
            }
            "attribute" => {
                // `self.x = expr` in a method: the class's instances carry `x`.
                let (Some(object), Some(attr)) = (
                    left.child_by_field_name("object"),
                    left.child_by_field_name("attribute"),
                ) else {
                    return;
                };
                let Some(class) = unit.class else {
                    return;
                };
                if object.kind() == "identifier"
                    && is_first_param(unit, self.src(object))
                    && let Some(r) = right.or(typed)
                {
                    let at = self.facts.units.len();
                    let key = self.src(attr).to_string();
                    self.facts.classes[class]
                        .self_attrs
                        .entry(key)
                        .or_default()
                        .push((at, r));
                }
            }
            _ => {
                for name in target_names(left, self.text) {
                    unit.locals.entry(name).or_default().push(Local::Opaque);
                }
            }
        }
    }

    fn call(&mut self, call: Node<'_>, unit: &mut Unit) {
        let Some(f) = call.child_by_field_name("function") else {
            return;
        };
        let callee = expr(f, self.text);
        if let Some(class) = unit.class {
            self.note_setattr(call, class, unit);
        }
        unit.uses.push(Use {
            expr: callee,
            called: true,
            line: call.start_position().row + 1,
            text: short(self.src(f)),
        });
    }

    /// `setattr(self, "name", v)` in a method: the instances carry `name`; with a computed
    /// name (or `self.__dict__` written), any attribute.
    fn note_setattr(&mut self, call: Node<'_>, class: usize, unit: &Unit) {
        match setattr_on_self(call, self.text, |n| is_first_param(unit, n)) {
            Some(Some(name)) => {
                let at = self.facts.units.len();
                self.facts.classes[class]
                    .self_attrs
                    .entry(name)
                    .or_default()
                    .push((at, Expr::Other));
            }
            Some(None) => self.facts.classes[class].dynamic = true,
            None => {}
        }
    }

    fn taken(&mut self, n: Node<'_>, unit: &mut Unit) {
        unit.uses.push(Use {
            expr: expr(n, self.text),
            called: false,
            line: n.start_position().row + 1,
            text: short(self.src(n)),
        });
    }

    /// The uses in an expression or statement outside any unit body's bookkeeping (module-
    /// level code, decorators, defaults).
    fn uses_in(&mut self, node: Node<'_>, unit: &mut Unit) {
        // Each node with its parent: `Node::parent` walks down from the root each time.
        let mut stack = vec![(node, node.parent())];
        while let Some((n, parent)) = stack.pop() {
            if n.kind() == "call" {
                self.call(n, unit);
            } else if is_value_place(n, parent) {
                self.taken(n, unit);
            }
            if matches!(n.kind(), "function_definition" | "class_definition") {
                continue;
            }
            let mut cursor = n.walk();
            let children: Vec<Node<'_>> = n.named_children(&mut cursor).collect();
            stack.extend(children.into_iter().rev().map(|c| (c, Some(n))));
        }
    }
}
