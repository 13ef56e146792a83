//! CPython's symbol-table errors for `global` and `nonlocal`, which ruff's semantic checker
//! does not report: a name declared after the scope used or bound it, a parameter declared,
//! an annotated name declared, a name both global and nonlocal, `nonlocal` at module level, and
//! a `nonlocal` no enclosing function binds. Written here because no crate implements
//! CPython's symtable over ruff's AST; it follows `Python/symtable.c`.

use std::collections::HashSet;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, ExprContext, Stmt};
use ruff_text_size::{Ranged, TextRange};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Module,
    Class,
    Function,
}

/// What one scope saw so far, in source order.
struct Scope {
    kind: Kind,
    parent: Option<usize>,
    params: HashSet<String>,
    bound: HashSet<String>,
    used: HashSet<String>,
    annotated: HashSet<String>,
    globals: HashSet<String>,
    nonlocals: Vec<(String, TextRange)>,
}

impl Scope {
    fn new(kind: Kind, parent: Option<usize>) -> Self {
        Scope {
            kind,
            parent,
            params: HashSet::new(),
            bound: HashSet::new(),
            used: HashSet::new(),
            annotated: HashSet::new(),
            globals: HashSet::new(),
            nonlocals: Vec::new(),
        }
    }

    fn declared(&self, name: &str) -> bool {
        self.globals.contains(name) || self.nonlocals.iter().any(|(n, _)| n == name)
    }
}

/// The walk: a tree of scopes and the errors found on the way.
struct Declarations {
    scopes: Vec<Scope>,
    current: usize,
    errors: Vec<(TextRange, String)>,
}

/// Every `global`/`nonlocal` error CPython's symbol table reports in `body`, a module's.
pub fn declaration_errors(body: &[Stmt]) -> Vec<(TextRange, String)> {
    let mut walk = Declarations {
        scopes: vec![Scope::new(Kind::Module, None)],
        current: 0,
        errors: Vec::new(),
    };
    walk.visit_body(body);
    walk.unbound_nonlocals();
    walk.errors.sort_by_key(|(r, _)| r.start());
    walk.errors
}

impl Declarations {
    fn scope(&mut self) -> &mut Scope {
        &mut self.scopes[self.current]
    }

    fn bind(&mut self, name: &str) {
        self.scope().bound.insert(name.to_string());
    }

    /// Runs `inside` in a new scope of `kind` with `params`.
    fn nested(&mut self, kind: Kind, params: Vec<String>, inside: impl FnOnce(&mut Self)) {
        let mut scope = Scope::new(kind, Some(self.current));
        scope.params = params.into_iter().collect();
        self.scopes.push(scope);
        let outer = std::mem::replace(&mut self.current, self.scopes.len() - 1);
        inside(self);
        self.current = outer;
    }

    fn declare(&mut self, name: &str, range: TextRange, global: bool) {
        let what = if global { "global" } else { "nonlocal" };
        let scope = &self.scopes[self.current];
        let error = if scope.params.contains(name) {
            Some(format!("name '{name}' is parameter and {what}"))
        } else if scope.used.contains(name) {
            Some(format!("name '{name}' is used prior to {what} declaration"))
        } else if scope.annotated.contains(name) {
            Some(format!("annotated name '{name}' can't be {what}"))
        } else if scope.bound.contains(name) {
            Some(format!(
                "name '{name}' is assigned to before {what} declaration"
            ))
        } else if (global && scope.nonlocals.iter().any(|(n, _)| n == name))
            || (!global && scope.globals.contains(name))
        {
            Some(format!("name '{name}' is nonlocal and global"))
        } else if !global && scope.kind == Kind::Module {
            Some("nonlocal declaration not allowed at module level".to_string())
        } else {
            None
        };
        if let Some(message) = error {
            self.errors.push((range, message));
        }
        let scope = self.scope();
        if global {
            scope.globals.insert(name.to_string());
        } else {
            scope.nonlocals.push((name.to_string(), range));
        }
    }

    /// `nonlocal x` where no enclosing function binds `x` (class scopes are skipped; a
    /// function declaring it `nonlocal` too passes the search outward).
    fn unbound_nonlocals(&mut self) {
        for scope in &self.scopes {
            if scope.kind == Kind::Module {
                continue;
            }
            for (name, range) in &scope.nonlocals {
                let mut at = scope.parent;
                let found = loop {
                    let Some(i) = at else { break false };
                    let outer = &self.scopes[i];
                    match outer.kind {
                        Kind::Module => break false,
                        Kind::Class => {}
                        Kind::Function if outer.globals.contains(name) => break false,
                        Kind::Function if outer.nonlocals.iter().any(|(n, _)| n == name) => {}
                        Kind::Function
                            if outer.params.contains(name) || outer.bound.contains(name) =>
                        {
                            break true;
                        }
                        Kind::Function => {}
                    }
                    at = outer.parent;
                };
                if !found {
                    self.errors
                        .push((*range, format!("no binding for nonlocal '{name}' found")));
                }
            }
        }
    }
}

/// The names a parameter list binds.
fn parameter_names(parameters: Option<&ast::Parameters>) -> Vec<String> {
    parameters.map_or_else(Vec::new, |p| {
        p.iter()
            .map(|a| a.as_parameter().name.to_string())
            .collect()
    })
}

impl<'a> Visitor<'a> for Declarations {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Global(g) => {
                for name in &g.names {
                    self.declare(name.as_str(), name.range(), true);
                }
            }
            Stmt::Nonlocal(n) => {
                for name in &n.names {
                    self.declare(name.as_str(), name.range(), false);
                }
            }
            Stmt::FunctionDef(def) => {
                for decorator in &def.decorator_list {
                    self.visit_decorator(decorator);
                }
                visitor::walk_parameters(self, &def.parameters);
                if let Some(returns) = &def.returns {
                    self.visit_annotation(returns);
                }
                self.bind(def.name.as_str());
                let params = parameter_names(Some(&def.parameters));
                self.nested(Kind::Function, params, |s| s.visit_body(&def.body));
            }
            Stmt::ClassDef(class) => {
                for decorator in &class.decorator_list {
                    self.visit_decorator(decorator);
                }
                if let Some(arguments) = &class.arguments {
                    self.visit_arguments(arguments);
                }
                self.bind(class.name.as_str());
                self.nested(Kind::Class, Vec::new(), |s| s.visit_body(&class.body));
            }
            Stmt::Import(import) => {
                for alias in &import.names {
                    let bound = alias.asname.as_ref().map_or_else(
                        || alias.name.as_str().split('.').next().unwrap_or(""),
                        |a| a.as_str(),
                    );
                    self.bind(bound);
                }
            }
            Stmt::ImportFrom(import) => {
                for alias in &import.names {
                    self.bind(alias.asname.as_ref().unwrap_or(&alias.name).as_str());
                }
            }
            Stmt::AnnAssign(assign) => {
                if let Expr::Name(name) = assign.target.as_ref()
                    && assign.simple
                {
                    let id = name.id.as_str();
                    if self.scopes[self.current].declared(id) {
                        let what = match self.scopes[self.current].globals.contains(id) {
                            true => "global",
                            false => "nonlocal",
                        };
                        self.errors
                            .push((name.range, format!("annotated name '{id}' can't be {what}")));
                    }
                    self.scope().annotated.insert(id.to_string());
                }
                visitor::walk_stmt(self, stmt);
            }
            _ => visitor::walk_stmt(self, stmt),
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Name(name) => {
                let id = name.id.as_str().to_string();
                match name.ctx {
                    ExprContext::Load => self.scope().used.insert(id),
                    _ => self.scope().bound.insert(id),
                };
            }
            Expr::Lambda(lambda) => {
                if let Some(parameters) = &lambda.parameters {
                    visitor::walk_parameters(self, parameters);
                }
                let params = parameter_names(lambda.parameters.as_deref());
                self.nested(Kind::Function, params, |s| s.visit_expr(&lambda.body));
            }
            Expr::ListComp(ast::ExprListComp {
                elt, generators, ..
            })
            | Expr::SetComp(ast::ExprSetComp {
                elt, generators, ..
            })
            | Expr::Generator(ast::ExprGenerator {
                elt, generators, ..
            }) => {
                self.comprehension(generators, &[&**elt]);
            }
            Expr::DictComp(ast::ExprDictComp {
                key,
                value,
                generators,
                ..
            }) => {
                let parts: Vec<&Expr> = key.as_deref().into_iter().chain([&**value]).collect();
                self.comprehension(generators, &parts);
            }
            _ => visitor::walk_expr(self, expr),
        }
    }

    fn visit_except_handler(&mut self, handler: &'a ast::ExceptHandler) {
        let ast::ExceptHandler::ExceptHandler(h) = handler;
        if let Some(name) = &h.name {
            self.bind(name.as_str());
        }
        visitor::walk_except_handler(self, handler);
    }
}

impl Declarations {
    /// A comprehension: its first iterable in the enclosing scope, the rest in its own.
    fn comprehension(&mut self, generators: &[ast::Comprehension], parts: &[&Expr]) {
        let Some((first, _)) = generators.split_first() else {
            return;
        };
        self.visit_expr(&first.iter);
        self.nested(Kind::Function, Vec::new(), |s| {
            for (i, generator) in generators.iter().enumerate() {
                if i > 0 {
                    s.visit_expr(&generator.iter);
                }
                s.visit_expr(&generator.target);
                for condition in &generator.ifs {
                    s.visit_expr(condition);
                }
            }
            for part in parts {
                s.visit_expr(part);
            }
        });
    }
}
