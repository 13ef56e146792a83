//! What CPython's `compile()` rejects beyond its grammar: the semantic syntax errors of its
//! symbol table and compiler (a keyword argument repeated, a starred assignment target alone,
//! a duplicate parameter, `return` outside a function, …), as ruff's parser checks them
//! (`SemanticSyntaxChecker`), and CPython's nesting limits (100 levels of indentation, 200
//! nested brackets, 20 statically nested blocks).
//!
//! The checker needs to know the scope each node stands in; the visitor below keeps that, as
//! ruff's own test harness for the checker does (ruff keeps it in its linter, which is not a
//! library). A statement checked on its own, out of its enclosing function and loops, is
//! checked in the most permissive context, so only errors that do not depend on context are
//! reported for it.

use std::cell::RefCell;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, PythonVersion};
use ruff_python_parser::semantic_errors::{
    LazyImportContext, SemanticSyntaxChecker, SemanticSyntaxContext, SemanticSyntaxError,
};
use ruff_python_parser::{Mode, ParseOptions, parse_unchecked};
use ruff_text_size::Ranged;

/// The oldest Python whose rules the checker applies (the same as `cpython::VERSION`).
const VERSION: (u8, u8) = (3, 9);

/// One error, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileError {
    /// Where.
    pub range: std::ops::Range<usize>,
    /// What CPython would say, in ruff's words (or CPython's, for the limits).
    pub message: String,
}

/// CPython's tokenizer limit on indentation levels (`MAXINDENT`).
pub const MAX_INDENT: usize = 100;
/// CPython's tokenizer limit on nested brackets (`MAXLEVEL`).
pub const MAX_BRACKETS: usize = 200;
/// CPython's compiler limit on nested `for`/`while`/`try`/`with` blocks (`CO_MAXBLOCKS`).
pub const MAX_BLOCKS: usize = 20;
/// How deep statements and expressions may nest. CPython 3.11's compiler raises
/// `RecursionError` at about 3,000 levels (`1+1+…` of 2,994 terms), other versions lower; past
/// this the check stops descending (its own recursion must stay well inside a thread's stack)
/// and the text is refused.
pub const MAX_DEPTH: usize = 1000;

#[derive(Clone, Copy)]
enum Scope {
    Module,
    Function { is_async: bool },
    Comprehension { is_async: bool },
    Class,
}

struct Context<'a> {
    checker: SemanticSyntaxChecker,
    errors: RefCell<Vec<SemanticSyntaxError>>,
    source: &'a str,
    scopes: Vec<Scope>,
    /// Loops enclosing the node, in its function (reset by a function or class).
    loops: Vec<usize>,
    /// Nested `for`/`while`/`try`/`with` blocks enclosing the node.
    blocks: usize,
    deepest_block: Option<ruff_text_size::TextRange>,
    /// How deep the node being visited nests, and the first node past `MAX_DEPTH`.
    depth: usize,
    too_deep: Option<ruff_text_size::TextRange>,
    /// Checking a statement out of its context: every context-dependent rule passes.
    detached: bool,
}

impl SemanticSyntaxContext for Context<'_> {
    fn future_annotations_or_stub(&self) -> bool {
        false
    }
    fn lazy_import_context(&self) -> Option<LazyImportContext> {
        None
    }
    fn python_version(&self) -> PythonVersion {
        let (major, minor) = VERSION;
        PythonVersion { major, minor }
    }
    fn report_semantic_error(&self, error: SemanticSyntaxError) {
        self.errors.borrow_mut().push(error);
    }
    fn source(&self) -> &str {
        self.source
    }
    fn global(&self, _name: &str) -> Option<ruff_text_size::TextRange> {
        None
    }
    fn has_nonlocal_binding(&self, _name: &str) -> bool {
        true
    }
    fn in_async_context(&self) -> bool {
        self.detached
            || match self.scopes.last() {
                Some(Scope::Function { is_async } | Scope::Comprehension { is_async }) => *is_async,
                _ => false,
            }
    }
    fn in_sync_comprehension(&self) -> bool {
        self.scopes
            .iter()
            .any(|s| matches!(s, Scope::Comprehension { is_async: false }))
    }
    fn in_class_body_comprehension(&self) -> bool {
        for scope in self.scopes.iter().rev() {
            match scope {
                Scope::Comprehension { .. } => {}
                Scope::Class => return true,
                Scope::Module | Scope::Function { .. } => return false,
            }
        }
        false
    }
    fn in_module_scope(&self) -> bool {
        !self.detached && self.scopes.len() == 1
    }
    fn in_function_scope(&self) -> bool {
        self.detached || matches!(self.scopes.last(), Some(Scope::Function { .. }))
    }
    fn in_notebook(&self) -> bool {
        false
    }
    fn in_await_allowed_context(&self) -> bool {
        self.detached
            || self
                .scopes
                .iter()
                .rev()
                .find(|s| !matches!(s, Scope::Comprehension { .. }))
                .is_some_and(|s| matches!(s, Scope::Function { .. }))
    }
    fn in_yield_allowed_context(&self) -> bool {
        self.detached || matches!(self.scopes.last(), Some(Scope::Function { .. }))
    }
    fn in_generator_context(&self) -> bool {
        // `return value` in a generator is legal since Python 3.3: never an error here.
        false
    }
    fn in_loop_context(&self) -> bool {
        self.detached || self.loops.last().is_some_and(|&n| n > 0)
    }
    fn is_bound_parameter(&self, _name: &str) -> bool {
        false
    }
}

impl Context<'_> {
    fn check_stmt(&mut self, stmt: &ast::Stmt) {
        let mut checker = std::mem::take(&mut self.checker);
        checker.visit_stmt(stmt, self);
        self.checker = checker;
    }
    fn check_expr(&mut self, expr: &ast::Expr) {
        let mut checker = std::mem::take(&mut self.checker);
        checker.visit_expr(expr, self);
        self.checker = checker;
    }
    fn in_scope(&mut self, scope: Scope, f: impl FnOnce(&mut Self)) {
        self.scopes.push(scope);
        self.loops.push(0);
        f(self);
        self.loops.pop();
        self.scopes.pop();
    }
    fn in_block(
        &mut self,
        range: ruff_text_size::TextRange,
        is_loop: bool,
        f: impl FnOnce(&mut Self),
    ) {
        self.blocks += 1;
        if self.blocks > MAX_BLOCKS && self.deepest_block.is_none() {
            self.deepest_block = Some(range);
        }
        if is_loop && let Some(n) = self.loops.last_mut() {
            *n += 1;
        }
        f(self);
        if is_loop && let Some(n) = self.loops.last_mut() {
            *n -= 1;
        }
        self.blocks -= 1;
    }
}

impl Visitor<'_> for Context<'_> {
    fn visit_stmt(&mut self, stmt: &ast::Stmt) {
        if self.deeper(stmt.range()) {
            return;
        }
        // Deep nesting would overflow a thread's stack (2 MiB for rayon's and the tests'):
        // stacker moves on to a heap segment as the stack runs low.
        stacker::maybe_grow(64 << 10, 1 << 20, || self.visit_stmt_within(stmt));
        self.depth -= 1;
    }

    fn visit_expr(&mut self, expr: &ast::Expr) {
        if self.deeper(expr.range()) {
            return;
        }
        stacker::maybe_grow(64 << 10, 1 << 20, || self.visit_expr_within(expr));
        self.depth -= 1;
    }
}

impl Context<'_> {
    /// Enters one more level; `true` (and nothing entered) past `MAX_DEPTH`.
    fn deeper(&mut self, range: ruff_text_size::TextRange) -> bool {
        if self.depth >= MAX_DEPTH {
            self.too_deep.get_or_insert(range);
            return true;
        }
        self.depth += 1;
        false
    }

    fn visit_stmt_within(&mut self, stmt: &ast::Stmt) {
        self.check_stmt(stmt);
        match stmt {
            ast::Stmt::ClassDef(ast::StmtClassDef {
                arguments,
                body,
                decorator_list,
                type_params,
                ..
            }) => {
                for decorator in decorator_list {
                    self.visit_decorator(decorator);
                }
                if let Some(type_params) = type_params {
                    self.visit_type_params(type_params);
                }
                if let Some(arguments) = arguments {
                    self.visit_arguments(arguments);
                }
                self.in_scope(Scope::Class, |me| me.visit_body(body));
            }
            ast::Stmt::FunctionDef(def) => {
                let scope = Scope::Function {
                    is_async: def.is_async,
                };
                self.in_scope(scope, |me| visitor::walk_stmt(me, stmt));
            }
            ast::Stmt::For(ast::StmtFor {
                target,
                iter,
                body,
                orelse,
                ..
            }) => {
                self.visit_expr(iter);
                self.visit_expr(target);
                self.in_block(stmt.range(), true, |me| me.visit_body(body));
                self.visit_body(orelse);
            }
            ast::Stmt::While(ast::StmtWhile {
                test, body, orelse, ..
            }) => {
                self.visit_expr(test);
                self.in_block(stmt.range(), true, |me| me.visit_body(body));
                self.visit_body(orelse);
            }
            ast::Stmt::Try(_) | ast::Stmt::With(_) => {
                self.in_block(stmt.range(), false, |me| visitor::walk_stmt(me, stmt));
            }
            _ => visitor::walk_stmt(self, stmt),
        }
    }

    fn visit_expr_within(&mut self, expr: &ast::Expr) {
        self.check_expr(expr);
        match expr {
            ast::Expr::Lambda(_) => {
                let scope = Scope::Function { is_async: false };
                self.in_scope(scope, |me| visitor::walk_expr(me, expr));
            }
            ast::Expr::ListComp(ast::ExprListComp {
                elt, generators, ..
            })
            | ast::Expr::SetComp(ast::ExprSetComp {
                elt, generators, ..
            })
            | ast::Expr::Generator(ast::ExprGenerator {
                elt, generators, ..
            }) => {
                for comprehension in generators {
                    self.visit_comprehension(comprehension);
                }
                let is_async = generators.iter().any(|g| g.is_async);
                self.scopes.push(Scope::Comprehension { is_async });
                self.visit_expr(elt);
                self.scopes.pop();
            }
            ast::Expr::DictComp(ast::ExprDictComp {
                key,
                value,
                generators,
                ..
            }) => {
                for comprehension in generators {
                    self.visit_comprehension(comprehension);
                }
                let is_async = generators.iter().any(|g| g.is_async);
                self.scopes.push(Scope::Comprehension { is_async });
                if let Some(key) = key {
                    self.visit_expr(key);
                }
                self.visit_expr(value);
                self.scopes.pop();
            }
            _ => visitor::walk_expr(self, expr),
        }
    }
}

/// Runs `f`, which parses `text` with ruff, on a stack deep enough for it: ruff's syntax tree
/// is dropped recursively, a frame chain per level, and a long `1+1+…` (as deep as half the
/// text's length) would overflow a 2 MiB thread stack. A large text gets a stack sized to it
/// (reserved, touched only as deep as it goes).
pub fn on_stack_for<T>(text: &str, f: impl FnOnce() -> T) -> T {
    if text.len() > 16 << 10 {
        let size = (text.len() * 256).clamp(8 << 20, 1 << 30);
        return stacker::grow(size, f);
    }
    f()
}

/// Every error CPython's compiler (not only its parser) reports in `text`, which parses; a
/// `detached` text is one statement checked out of its context (see the module doc).
pub fn compile_errors(text: &str, detached: bool) -> Vec<CompileError> {
    on_stack_for(text, || compile_errors_here(text, detached))
}

const TOO_MANY_BRACKETS: &str = "too many nested parentheses (CPython's limit is 200)";
const TOO_MANY_INDENTS: &str = "too many levels of indentation (CPython's limit is 100)";

/// The first of CPython's tokenizer limits `parsed` passes: brackets and indentation levels,
/// counted as the tokenizer counts them.
fn tokenizer_limit(parsed: &ruff_python_parser::Parsed<ast::Mod>) -> Option<CompileError> {
    let range = |r: ruff_text_size::TextRange| usize::from(r.start())..usize::from(r.end());
    let (mut brackets, mut indents) = (0usize, 0usize);
    for token in parsed.tokens().iter() {
        use ruff_python_ast::token::TokenKind as K;
        let message = match token.kind() {
            K::Lpar | K::Lsqb | K::Lbrace => {
                brackets += 1;
                (brackets > MAX_BRACKETS).then_some(TOO_MANY_BRACKETS)
            }
            K::Rpar | K::Rsqb | K::Rbrace => {
                brackets = brackets.saturating_sub(1);
                None
            }
            K::Indent => {
                indents += 1;
                (indents >= MAX_INDENT).then_some(TOO_MANY_INDENTS)
            }
            K::Dedent => {
                indents = indents.saturating_sub(1);
                None
            }
            _ => None,
        };
        if let Some(message) = message {
            return Some(CompileError {
                range: range(token.range()),
                message: message.to_string(),
            });
        }
    }
    None
}

/// `compile_errors`, on the stack the caller already made deep enough (`on_stack_for`).
fn compile_errors_here(text: &str, detached: bool) -> Vec<CompileError> {
    let (major, minor) = VERSION;
    let options =
        ParseOptions::from(Mode::Module).with_target_version(PythonVersion { major, minor });
    compile_errors_of(text, &parse_unchecked(text, options), detached)
}

/// `compile_errors` of `text` as `parsed` (for [`VERSION`], without errors), on a stack deep
/// enough: a caller that parsed the text for its syntax errors need not parse it again.
pub(super) fn compile_errors_of(
    text: &str,
    parsed: &ruff_python_parser::Parsed<ast::Mod>,
    detached: bool,
) -> Vec<CompileError> {
    let range = |r: ruff_text_size::TextRange| usize::from(r.start())..usize::from(r.end());
    let mut out = Vec::new();
    out.extend(tokenizer_limit(parsed));
    let mut context = Context {
        checker: SemanticSyntaxChecker::new(),
        errors: RefCell::default(),
        source: text,
        scopes: vec![Scope::Module],
        loops: vec![0],
        blocks: 0,
        deepest_block: None,
        depth: 0,
        too_deep: None,
        detached,
    };
    if let ast::Mod::Module(module) = parsed.syntax() {
        context.visit_body(&module.body);
        // `global`/`nonlocal` rules depend on the whole scope: not judged out of context.
        if !detached && (text.contains("global") || text.contains("nonlocal")) {
            out.extend(
                super::declarations::declaration_errors(&module.body)
                    .into_iter()
                    .map(|(r, message)| CompileError {
                        range: range(r),
                        message,
                    }),
            );
        }
    }
    if let Some(at) = context.too_deep {
        out.push(CompileError {
            range: range(at),
            message: format!(
                "nested more than {MAX_DEPTH} levels deep: CPython's compiler gives up near 3,000 (RecursionError), some versions sooner"
            ),
        });
    }
    if let Some(block) = context.deepest_block {
        out.push(CompileError {
            range: range(block),
            message: "too many statically nested blocks (CPython's limit is 20)".into(),
        });
    }
    out.extend(
        context
            .errors
            .into_inner()
            .into_iter()
            .map(|e| CompileError {
                range: range(e.range()),
                message: e.to_string(),
            }),
    );
    out.sort_by_key(|e| e.range.start);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejects(text: &str, detached: bool) -> Vec<String> {
        compile_errors(text, detached)
            .into_iter()
            .map(|e| e.message)
            .collect()
    }

    #[test]
    fn what_compile_rejects_and_the_grammar_accepts() {
        for (bad, says) in [
            ("f(a=1, a=2)\n", "duplicate keyword argument"),
            ("*a = b\n", "starred"),
            ("def f(a, a): pass\n", "duplicate parameter"),
            ("a, *b, *c = d\n", "two starred"),
            ("return 1\n", "outside"),
            ("break\n", "outside"),
            ("class C:\n    return 1\n", "outside"),
            ("__debug__ = 1\n", "__debug__"),
        ] {
            let got = rejects(bad, false);
            let found = got.iter().any(|m| m.to_lowercase().contains(says));
            assert!(found, "{bad:?}: {got:?}");
        }
        for good in [
            "def f():\n    return 1\n",
            "for x in y:\n    break\n",
            "f(a=1, b=2)\n",
            "a, *b = c\n",
            "def g():\n    yield 1\n    return 2\n",
            "while x:\n    def f():\n        pass\n    continue\n",
        ] {
            assert_eq!(rejects(good, false), Vec::<String>::new(), "{good:?}");
        }
        // Out of context, only what holds anywhere is checked.
        assert!(rejects("if 1:\n    return x\n", true).is_empty());
        assert!(!rejects("if 1:\n    f(a=1, a=2)\n", true).is_empty());
    }

    #[test]
    fn cpythons_nesting_limits() {
        let nest = |n: usize, head: &str| {
            let mut s = String::new();
            for i in 0..n {
                s += &format!("{}{head}\n", " ".repeat(i));
            }
            s + &format!("{}pass\n", " ".repeat(n))
        };
        assert!(rejects(&nest(20, "for i in x:"), false).is_empty());
        assert_eq!(
            rejects(&nest(21, "for i in x:"), false),
            ["too many statically nested blocks (CPython's limit is 20)"]
        );
        assert!(rejects(&nest(99, "if x:"), false).is_empty());
        assert_eq!(
            rejects(&nest(100, "if x:"), false),
            ["too many levels of indentation (CPython's limit is 100)"]
        );
        let chain = |n: usize| format!("x = {}\n", vec!["1"; n].join("+"));
        assert!(rejects(&chain(900), false).is_empty());
        assert!(rejects(&chain(20_000), false)[0].starts_with("nested more than 1000 levels"));
        let parens = |n: usize| format!("x = {}1{}\n", "(".repeat(n), ")".repeat(n));
        assert!(rejects(&parens(200), false).is_empty());
        assert_eq!(
            rejects(&parens(201), false),
            ["too many nested parentheses (CPython's limit is 200)"]
        );
    }
}
