"""A second pattern matcher, written apart from regraft's: CPython's ``ast`` and ``tokenize``
turned into a tree of the shape the docs' pattern language describes, and a matcher over it.

regraft matches on tree-sitter's tree; this one never sees tree-sitter. What the two must agree
on is what the docs promise about patterns, stated here in CPython's terms:

* structure is CPython's AST; a leaf (a name, a number, a string) equals one written with the
  same tokens (``'q'`` is not ``"q"``, ``1`` is not ``1.0``);
* parentheses count: ``(a) + 1`` is not ``a + 1``, though ``$X + 1`` finds both (a metavariable
  takes the parentheses with what it binds), and a pattern matches inside parentheses;
* a bare tuple (``a, b``) is not a parenthesized one (a tuple assigned to is one read);
  ``a[1, 2]`` has two subscripts, not a tuple;
* ``a and b and c`` is ``(a and b) and c``; ``a = b = c`` is ``a = (b = c)``;
* keyword arguments of a pattern's call find the call's keywords wherever they stand, the rest
  matches in order; ``$X`` takes any one argument (``*a``, ``k=v`` and ``**d`` too), ``$$$X``
  any run of them; a generator that is a call's only argument is its argument list;
* one metavariable bound twice must bind the same text.

``Tree(source).find(pattern)`` gives the byte ranges of every match. A construct it does not
model raises :class:`NotModeled`, so a caller skips it rather than trusting a guess.
"""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set, Tuple

Span = Tuple[int, int]


class NotModeled(Exception):
    """A construct this reference does not describe."""


@dataclass
class T:
    """One node: its kind, children (or leaf text), byte span and the spans of the parentheses
    wrapped around it, innermost first."""

    kind: str
    children: List["T"] = field(default_factory=list)
    text: Optional[str] = None
    span: Span = (0, 0)
    wraps: List[Span] = field(default_factory=list)
    hidden: List["T"] = field(default_factory=list)
    """Nodes searched for matches but not compared (what an f-string holds)."""
    var: Optional[str] = None
    """For a pattern metavariable: ``"one"`` or ``"many"``; its name in ``text``."""


OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
             ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>",
             ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^", ast.And: "and", ast.Or: "or",
             ast.Not: "not", ast.Invert: "~", ast.UAdd: "+", ast.USub: "-", ast.Eq: "==",
             ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
             ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}

SIGNIFICANT_SKIP = {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT,
                    tokenize.DEDENT, tokenize.ENDMARKER, tokenize.ENCODING}

METAVARIABLE = re.compile(r"\$(\$\$)?([A-Z_][A-Z0-9_]*)")


class Tree:
    """A source file as the reference sees it."""

    def __init__(self, source: str, pattern: bool = False) -> None:
        self.source = source
        self.data = source.encode()
        starts, offset = [0], 0
        for line in self.data.split(b"\n")[:-1]:
            offset += len(line) + 1
            starts.append(offset)
        self.starts = starts
        self.lines = source.split("\n")
        self.pattern = pattern
        self.tokens = self._tokens()
        self.starts_of_tokens = [start for start, _, _ in self.tokens]
        self.after: Dict[int, int] = {}
        """Byte offset of a token's end → index of the next significant token."""
        self.before: Dict[int, int] = {}
        for i, (start, end, _) in enumerate(self.tokens):
            self.after[end] = i + 1
            self.before[start] = i - 1
        self.pairs: Dict[Span, Span] = {}
        """Inner span → outer span of each pair of round brackets that groups."""
        self._owned: Set[int] = set()
        self.round = self._match_brackets()
        self.close_of = {self.tokens[o][0]: self.tokens[i][1] for o, i in self.round}
        module = ast.parse(source)
        self._mark_owned(module)
        self._pair_brackets()
        self.root = self.block(module.body, (0, len(self.data)))

    # --- positions -------------------------------------------------------------------------

    def offset(self, line: int, column: int) -> int:
        return self.starts[line - 1] + column

    def char_offset(self, line: int, column: int) -> int:
        """A tokenize position (character column) as a byte offset."""
        text = self.lines[line - 1] if line - 1 < len(self.lines) else ""
        return self.starts[line - 1] + len(text[:column].encode())

    def span(self, node: ast.AST) -> Span:
        return (self.offset(node.lineno, node.col_offset),
                self.offset(node.end_lineno, node.end_col_offset))

    def text(self, span: Span) -> str:
        return self.data[span[0]:span[1]].decode()

    def _tokens(self) -> List[Tuple[int, int, str]]:
        out = []
        for tok in tokenize.generate_tokens(io.StringIO(self.source).readline):
            if tok.type in SIGNIFICANT_SKIP:
                continue
            out.append((self.char_offset(*tok.start), self.char_offset(*tok.end), tok.string))
        return out

    def token_text(self, span: Span) -> str:
        """The tokens of ``span`` joined by one space: a leaf's text whatever its layout."""
        i = bisect.bisect_left(self.starts_of_tokens, span[0])
        out = []
        while i < len(self.tokens) and self.tokens[i][1] <= span[1]:
            out.append(self.tokens[i][2])
            i += 1
        return " ".join(out)

    def _mark_owned(self, module: ast.AST) -> None:
        """The opening brackets that belong to a call, a definition or a tuple, not grouping."""
        for node in ast.walk(module):
            if isinstance(node, ast.Call):
                i = self.after.get(self.span(node.func)[1])
                while i is not None and self.tokens[i][2] == ")":
                    i += 1
                if i is not None:
                    self._owned.add(self.tokens[i][0])
            elif isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                # The bracket after the name: `def`/`class` stand at the node's start.
                j = bisect.bisect_left(self.starts_of_tokens, self.span(node)[0])
                while j < len(self.tokens) and self.tokens[j][2] != node.name:
                    j += 1
                if j + 1 < len(self.tokens) and self.tokens[j + 1][2] == "(":
                    self._owned.add(self.tokens[j + 1][0])
            elif isinstance(node, (ast.Tuple, ast.GeneratorExp)):
                start, end = self.span(node)
                if self.close_of.get(start) == end:
                    self._owned.add(start)

    def _match_brackets(self) -> List[Tuple[int, int]]:
        """Token indices of each matching pair of round brackets."""
        stack: List[int] = []
        out = []
        for i, (_, _, text) in enumerate(self.tokens):
            if text in ("(", "[", "{"):
                stack.append(i)
            elif text in (")", "]", "}") and stack:
                o = stack.pop()
                if text == ")":
                    out.append((o, i))
        return out

    def _pair_brackets(self) -> None:
        for o, i in self.round:
            if i > o + 1 and self.tokens[o][0] not in self._owned:
                inner = (self.tokens[o + 1][0], self.tokens[i - 1][1])
                self.pairs[inner] = (self.tokens[o][0], self.tokens[i][1])

    def wrapped(self, span: Span) -> List[Span]:
        wraps, current = [], span
        while current in self.pairs:
            current = self.pairs[current]
            wraps.append(current)
        return wraps

    # --- conversion ------------------------------------------------------------------------

    def node(self, kind: str, node: ast.AST, children: Sequence[Optional[T]],
             text: Optional[str] = None) -> T:
        span = self.span(node)
        return T(kind, [c for c in children if c is not None], text, span, self.wrapped(span))

    def leaf(self, kind: str, text: str, span: Span) -> T:
        return T(kind, [], text, span, self.wrapped(span))

    def block(self, statements: Sequence[ast.stmt], span: Span) -> T:
        return T("block", [self.stmt(s) for s in statements], None, span)

    def opaque(self, node: ast.AST) -> T:
        """A node compared by its tokens alone, whose expressions are still searched."""
        t = self.node("opaque:" + type(node).__name__, node, [])
        t.text = self.token_text(t.span)
        t.hidden = [self.any(c) for c in ast.iter_child_nodes(node)]
        return t

    def any(self, node: ast.AST) -> T:
        if isinstance(node, ast.expr):
            return self.expr(node)
        if isinstance(node, ast.stmt):
            return self.stmt(node)
        holder = T("holder:" + type(node).__name__, [], None, (0, 0))
        holder.hidden = [self.any(c) for c in ast.iter_child_nodes(node)]
        return holder

    def stmt(self, node: ast.stmt) -> T:
        e = self.expr
        if isinstance(node, ast.Expr):
            value = e(node.value)
            if value.kind == "expression_list" and not value.wraps:
                # tree-sitter has no tuple node in a statement that is a bare tuple.
                value.kind = "statement_tuple"
            return self.node("expression_statement", node, [value])
        if isinstance(node, ast.Assign):
            value = e(node.value)
            for target in reversed(node.targets):
                value = self.joined("assignment", [e(target), value])
            return value
        if isinstance(node, ast.AugAssign):
            op = OPERATORS[type(node.op)] + "="
            return self.node("augmented_assignment", node, [e(node.target), T("op", [], op),
                                                            e(node.value)])
        if isinstance(node, ast.AnnAssign):
            return self.node("assignment", node, [e(node.target), T("type", [e(node.annotation)]),
                                                  e(node.value) if node.value else None])
        if isinstance(node, ast.Return):
            return self.node("return", node, [e(node.value) if node.value else None])
        if isinstance(node, ast.Assert):
            return self.node("assert", node, [e(node.test), e(node.msg) if node.msg else None])
        if isinstance(node, ast.Raise):
            return self.node("raise", node, [e(node.exc) if node.exc else None,
                                             T("from") if node.cause else None,
                                             e(node.cause) if node.cause else None])
        if isinstance(node, (ast.Pass, ast.Break, ast.Continue, ast.Import, ast.ImportFrom,
                             ast.Global, ast.Nonlocal, ast.Delete)):
            return self.opaque(node)
        # Compound statements: searched, never compared.
        return self.opaque(node)

    def joined(self, kind: str, children: List[T]) -> T:
        """A node CPython does not have (``a and b`` of ``a and b and c``): its span runs from
        its first child to its last."""
        span = (children[0].wraps[-1][0] if children[0].wraps else children[0].span[0],
                children[-1].wraps[-1][1] if children[-1].wraps else children[-1].span[1])
        return T(kind, children, None, span, self.wrapped(span))

    def expr(self, node: ast.expr) -> T:
        e = self.expr
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.Constant):
            return self.leaf("constant", self.token_text(self.span(node)), self.span(node))
        if isinstance(node, ast.JoinedStr):
            t = self.leaf("fstring", self.token_text(self.span(node)), self.span(node))
            t.hidden = [e(v.value) for v in node.values if isinstance(v, ast.FormattedValue)]
            for v in node.values:
                if isinstance(v, ast.FormattedValue) and v.format_spec is not None:
                    t.hidden.append(e(v.format_spec))
            return t
        if isinstance(node, ast.BinOp):
            return self.node("binary", node, [e(node.left), T("op", [], OPERATORS[type(node.op)]),
                                              e(node.right)])
        if isinstance(node, ast.UnaryOp):
            return self.node("unary", node, [T("op", [], OPERATORS[type(node.op)]),
                                             e(node.operand)])
        if isinstance(node, ast.BoolOp):
            op = T("op", [], OPERATORS[type(node.op)])
            values = [e(v) for v in node.values]
            joined = values[0]
            for value in values[1:]:
                joined = self.joined("boolean", [joined, op, value])
            return joined
        if isinstance(node, ast.Compare):
            children = [e(node.left)]
            for op, right in zip(node.ops, node.comparators):
                children += [T("op", [], OPERATORS[type(op)]), e(right)]
            return self.node("compare", node, children)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Attribute):
            end = self.span(node)[1]
            attr = T("attribute_name", [], node.attr, (end - len(node.attr.encode()), end))
            return self.node("attribute", node, [e(node.value), attr])
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.Slice):
            parts = [node.lower, node.upper, node.step]
            return self.node("slice", node, [e(p) if p else T("empty") for p in parts])
        if isinstance(node, ast.IfExp):
            return self.node("conditional", node, [e(node.body), e(node.test), e(node.orelse)])
        if isinstance(node, ast.Lambda):
            return self.node("lambda", node, [self.parameters(node.args), e(node.body)])
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return self.node(self.sequence_kind(node), node, [e(x) for x in node.elts])
        if isinstance(node, ast.Dict):
            items = [T("dictionary_splat", [e(v)]) if k is None else T("pair", [e(k), e(v)])
                     for k, v in zip(node.keys, node.values)]
            return self.node("dictionary", node, items)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            head = ([T("pair", [e(node.key), e(node.value)])] if isinstance(node, ast.DictComp)
                    else [e(node.elt)])
            clauses = []
            for g in node.generators:
                clauses.append(T("async_for" if g.is_async else "for", [e(g.target), e(g.iter)]))
                clauses += [T("if", [e(c)]) for c in g.ifs]
            return self.node(type(node).__name__, node, head + clauses)
        if isinstance(node, ast.Await):
            return self.node("await", node, [e(node.value)])
        if isinstance(node, ast.Yield):
            return self.node("yield", node, [e(node.value) if node.value else None])
        if isinstance(node, ast.YieldFrom):
            return self.node("yield_from", node, [e(node.value)])
        if isinstance(node, ast.NamedExpr):
            return self.node("named_expression", node, [e(node.target), e(node.value)])
        if isinstance(node, ast.Starred):
            return self.node("splat", node, [e(node.value)])
        raise NotModeled(type(node).__name__)

    def name(self, node: ast.Name) -> T:
        t = self.leaf("name", node.id, self.span(node))
        if self.pattern and node.id.startswith(("__mvs_", "__mv_")):
            many = node.id.startswith("__mvs_")
            name = node.id[6:] if many else node.id[5:]
            t.var, t.text = ("many" if many else "one"), (None if name == "_" else name)
        return t

    def sequence_kind(self, node: ast.expr) -> str:
        """A display's kind; one read and one assigned to are alike (CPython's ``ctx``
        aside)."""
        if isinstance(node, ast.Set):
            return "set"
        if isinstance(node, ast.List):
            return "list"
        start = self.span(node)[0]
        if start in self._owned and self.close_of.get(start) == self.span(node)[1]:
            return "tuple"
        return "expression_list"

    def call(self, node: ast.Call) -> T:
        e = self.expr
        items: List[Tuple[int, T]] = []
        for a in node.args:
            items.append((self.span(a)[0], e(a)))
        for k in node.keywords:
            span = self.span(k)
            if k.arg is None:
                items.append((span[0], T("dictionary_splat", [e(k.value)], None, span)))
            else:
                items.append((span[0], T("keyword", [T("name", [], k.arg), e(k.value)], None,
                                         span)))
        items.sort(key=lambda pair: pair[0])
        lone = node.args[0] if len(node.args) == 1 and not node.keywords else None
        if isinstance(lone, ast.GeneratorExp) and self.span(lone)[0] in self._owned and \
                self.span(lone)[1] == self.span(node)[1]:
            generator = e(lone)
            arguments = T("bare_generator", [generator], None, generator.span)
        else:
            arguments = T("arguments", [t for _, t in items])
        return self.node("call", node, [e(node.func), arguments])

    def subscript(self, node: ast.Subscript) -> T:
        s = node.slice
        if isinstance(s, ast.Tuple) and self.sequence_kind(s) == "expression_list":
            parts = [self.expr(x) for x in s.elts]
        else:
            parts = [self.expr(s)]
        return self.node("subscript", node, [self.expr(node.value)] + parts)

    def parameters(self, args: ast.arguments) -> T:
        e = self.expr
        out: List[T] = []
        positional = args.posonlyargs + args.args
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        for i, (a, d) in enumerate(zip(positional, defaults)):
            name = T("name", [], a.arg)
            out.append(T("default", [name, e(d)]) if d is not None else name)
            if args.posonlyargs and i == len(args.posonlyargs) - 1:
                out.append(T("/"))
        if args.vararg:
            out.append(T("splat_parameter", [T("name", [], args.vararg.arg)]))
        elif args.kwonlyargs:
            out.append(T("*"))
        for a, d in zip(args.kwonlyargs, args.kw_defaults):
            name = T("name", [], a.arg)
            out.append(T("default", [name, e(d)]) if d is not None else name)
        if args.kwarg:
            out.append(T("dictionary_splat_parameter", [T("name", [], args.kwarg.arg)]))
        return T("parameters", out)


# --- matching ---------------------------------------------------------------------------------

Bindings = Dict[str, Tuple[str, ...]]


class Matcher:
    """Matches a pattern tree against a target tree (both :class:`Tree` nodes)."""

    def __init__(self, target: Tree, pattern: Tree) -> None:
        self.target, self.pattern = target, pattern

    def bind(self, name: Optional[str], value: Tuple[str, ...], b: Bindings) -> bool:
        if name is None:
            return True
        if name in b:
            return b[name] == value
        b[name] = value
        return True

    def text_of(self, t: T, parens_matched: int) -> str:
        """What a metavariable binds: ``t`` with the parentheses the pattern did not write."""
        keep = len(t.wraps) - parens_matched
        span = t.wraps[keep - 1] if keep > 0 else t.span
        return self.target.text(span)

    def match(self, p: T, t: T, b: Bindings, top: bool = False) -> bool:
        if p.var == "one":
            # An annotation is no value: `$A = $B` does not match `x: int`.
            if t.kind in ("op", "from", "empty", "/", "*", "type"):
                return False
            if len(t.wraps) < len(p.wraps):
                return False
            return self.bind(p.text, (self.text_of(t, len(p.wraps)),), b)
        if p.var == "many":
            return False
        if not top and len(p.wraps) != len(t.wraps):
            return False
        if p.kind != t.kind:
            if p.kind == "arguments" and t.kind == "bare_generator":
                return self.lone_argument(p, t, b)
            return False
        if p.text is not None or t.text is not None:
            return p.text == t.text and not p.children and not t.children
        if p.kind == "arguments":
            return self.arguments(p.children, t.children, b)
        return self.sequence(p.children, t.children, b)

    def lone_argument(self, p: T, t: T, b: Bindings) -> bool:
        if len(p.children) != 1 or p.children[0].var is None:
            return False
        return self.bind(p.children[0].text, (self.target.text(t.children[0].span),), b)

    def sequence(self, ps: List[T], ts: List[T], b: Bindings) -> bool:
        if not ps:
            return not ts
        first, rest = ps[0], ps[1:]
        if first.var == "many" and first.wraps:
            # `($$$X)` is one parenthesized item holding the run.
            if not ts or len(ts[0].wraps) < len(first.wraps):
                return False
            trial = dict(b)
            if self.bind(first.text, (self.text_of(ts[0], len(first.wraps)),), trial) and \
                    self.sequence(rest, ts[1:], trial):
                b.clear()
                b.update(trial)
                return True
            return False
        if first.var == "many":
            for take in range(len(ts) + 1):
                trial = dict(b)
                value = tuple(self.text_of(x, 0) for x in ts[:take])
                if self.bind(first.text, value, trial) and self.sequence(rest, ts[take:], trial):
                    b.clear()
                    b.update(trial)
                    return True
            return False
        if not ts:
            return False
        trial = dict(b)
        if self.match(first, ts[0], trial) and self.sequence(rest, ts[1:], trial):
            b.clear()
            b.update(trial)
            return True
        return False

    def arguments(self, ps: List[T], ts: List[T], b: Bindings) -> bool:
        keywords = [p for p in ps if p.kind == "keyword" and p.var is None]
        ordered = [p for p in ps if not (p.kind == "keyword" and p.var is None)]
        return self.assign(keywords, ordered, ts, [False] * len(ts), b)

    def assign(self, keywords: List[T], ordered: List[T], ts: List[T], used: List[bool],
               b: Bindings) -> bool:
        if not keywords:
            return self.sequence(ordered, [t for t, u in zip(ts, used) if not u], b)
        for i, t in enumerate(ts):
            if used[i] or t.kind != "keyword":
                continue
            trial = dict(b)
            if self.match(keywords[0], t, trial):
                used[i] = True
                if self.assign(keywords[1:], ordered, ts, used, trial):
                    b.clear()
                    b.update(trial)
                    return True
                used[i] = False
        return False


def pattern_tree(pattern: str) -> Tuple[Tree, T]:
    """The reference's tree of a pattern (``$X`` → a metavariable) and its root node."""
    code = METAVARIABLE.sub(lambda m: ("__mvs_" if m.group(1) else "__mv_") + m.group(2),
                            pattern)
    tree = Tree(code, pattern=True)
    body = tree.root.children
    if len(body) != 1:
        raise NotModeled("a pattern of several statements")
    root = body[0]
    if root.kind == "expression_statement":
        root = root.children[0]
        if root.kind == "statement_tuple":
            root.kind = "expression_list"
    if root.kind.startswith("opaque"):
        raise NotModeled(root.kind)
    return tree, root


def walk(t: T):
    yield t
    for c in t.children + t.hidden:
        yield from walk(c)


def find_bound(target: Tree, pattern: str) -> List[Tuple[Span, Bindings]]:
    """Each match of ``pattern`` in ``target``: its byte range and what it binds."""
    ptree, root = pattern_tree(pattern)
    if root.var:
        # `($$$X)`: any parenthesized expression, at each of its parentheses.
        depth = len(root.wraps)
        if not depth:
            raise NotModeled("a bare metavariable")
        return [(w, {}) for t in walk(target.root) for w in t.wraps[depth - 1:]]
    matcher = Matcher(target, ptree)
    found = []
    for t in walk(target.root):
        bindings: Bindings = {}
        if t.kind == root.kind and matcher.match(root, t, bindings, top=True):
            found.append((t.span, bindings))
    return found


def find(target: Tree, pattern: str) -> Set[Span]:
    """The byte ranges of ``target`` where ``pattern`` matches."""
    return {span for span, _ in find_bound(target, pattern)}


# --- rules: scopes, guards and conditions ------------------------------------------------------


@dataclass
class Rule:
    """The rule subset the reference judges: a pattern; ``inside`` a class and a function, by
    name; ``not_inside`` and ``unless`` guards (patterns sharing no metavariable with the
    match); ``where`` regexes on what single metavariables bound."""

    pattern: str
    inside_class: Optional[str] = None
    inside_function: Optional[str] = None
    not_inside: Optional[str] = None
    unless: Optional[str] = None
    regex: Dict[str, str] = field(default_factory=dict)
    not_regex: Dict[str, str] = field(default_factory=dict)


def definitions(target: Tree) -> List[Tuple[str, str, Span]]:
    """Every class and function of ``target``: kind, name and span — from its first
    decorator's ``@`` (a definition's decorators lie inside it, as the docs say)."""
    out = []
    for node in ast.walk(ast.parse(target.source)):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            start, end = target.span(node)
            if node.decorator_list:
                first = target.span(node.decorator_list[0])[0]
                i = bisect.bisect_left(target.starts_of_tokens, first) - 1
                while i >= 0 and target.tokens[i][2] != "@":
                    i -= 1
                start = target.tokens[i][0] if i >= 0 else first
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            out.append((kind, node.name, (start, end)))
    return out


def within(inner: Span, outer: Span) -> bool:
    return outer[0] <= inner[0] and inner[1] <= outer[1]


def in_scope(rule: Rule, span: Span, defs: List[Tuple[str, str, Span]]) -> bool:
    """``inside``: the innermost class of that name holding the match, then a function of
    that name within it holding the match."""
    limit: Optional[Span] = None
    for kind, wanted in (("class", rule.inside_class), ("function", rule.inside_function)):
        if wanted is None:
            continue
        holders = [d for d in defs if d[0] == kind and d[1] == wanted and within(span, d[2])
                   and (limit is None or within(d[2], limit))]
        if not holders:
            return False
        # The innermost: the one starting last.
        limit = max(holders, key=lambda d: d[2][0])[2]
    return True


def find_rule(target: Tree, rule: Rule) -> Set[Tuple[Span, bool]]:
    """Each match of ``rule`` in ``target``: its byte range and whether a guard leaves it
    alone. A guard whose match has the very span of the rule's (one node inside another of
    the same extent, which spans cannot tell apart) is not modeled."""
    defs = definitions(target) if rule.inside_class or rule.inside_function else []
    outer_spans = find(target, rule.not_inside) if rule.not_inside else set()
    inner_spans = find(target, rule.unless) if rule.unless else set()
    out = set()
    for span, bindings in find_bound(target, rule.pattern):
        if not conditions_hold(rule, bindings):
            continue
        if (rule.inside_class or rule.inside_function) and not in_scope(rule, span, defs):
            continue
        if span in outer_spans or span in inner_spans:
            raise NotModeled("a guard matching the match's own span")
        guarded = any(within(span, o) for o in outer_spans) or \
            any(within(i, span) for i in inner_spans)
        out.add((span, guarded))
    return out


def conditions_hold(rule: Rule, bindings: Bindings) -> bool:
    for name, regex in list(rule.regex.items()) + list(rule.not_regex.items()):
        value = bindings.get(name)
        if value is None or len(value) != 1:
            raise NotModeled(f"a condition on `{name}`, not one bound node")
        found = re.search(regex, value[0]) is not None
        if found != (name in rule.regex):
            return False
    return True
