"""The matching oracle: regraft's match set against an independent matcher's.

A generated module holds every statement and expression context (every compound statement
and clause, one-line and block bodies, decorators, lambdas, comprehensions, f-strings,
``match``, ``async``, classes in functions, CRLF, tabs, form feeds, continuation lines). Each
pattern is drawn from the module itself: a random expression or statement of it, with random
subtrees replaced by ``$X`` (fresh, the wildcard ``$_``, or one bound twice) and random runs of
arguments or elements by ``$$$X``. regraft's matches (``check`` in-process, on its statement-
local path and with the whole file parsed) must be exactly the byte ranges the reference
matcher over CPython's ``ast`` (``reference.py``) finds. Needs CPython 3.12+: the reference
reads f-strings through PEP 701's tokenizer.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Dict, List, Optional, Set, Tuple

from . import Case, Chooser, compiles
from .reference import (NotModeled, Rule, T, Tree, definitions, find_bound, find_rule,
                        pattern_tree, walk, within)

ATOMS = ["a", "b", "c", "self.w", "x", "1", "2", "0x1F", "1.5", "'q'", '"q"', "None", "True",
         "a.b", "g(a)"]
BINARY = ["+", "-", "*", "/", "//", "%", "**", "@", "|", "&", "^", "<<", ">>"]
COMPARE = ["<", "<=", "==", "!=", "in", "not in", "is", "is not"]
CALLEES = ["g", "h", "self.m", "a.b", "g(a)", "(g)"]


class Gen:
    """Generates one module's text from a chooser."""

    def __init__(self, choose: Chooser) -> None:
        self.choose = choose
        self.unit = choose.pick(["    ", "\t", "  "])
        self.lines: List[str] = []
        self.in_async = False
        self.in_generator = False
        self.in_function = False

    # --- expressions ---------------------------------------------------------------------

    def expr(self, depth: int = 0, plain: bool = False) -> str:
        """An expression; ``plain``: no strings or f-strings (inside an f-string)."""
        c = self.choose
        atoms = [a for a in ATOMS if not plain or "q" not in a]
        if depth >= 3 or c.coin(0.3):
            return c.pick(atoms)
        e = lambda: self.expr(depth + 1, plain)  # noqa: E731
        kinds = ["binary", "unary", "bool", "compare", "call", "call", "attribute", "subscript",
                 "conditional", "lambda", "display", "comprehension", "paren", "walrus"]
        if not plain:
            kinds += ["fstring", "concat"]
        if self.in_async:
            kinds.append("await")
        if self.in_generator:
            kinds.append("yield")
        kind = c.pick(kinds)
        if kind == "binary":
            return f"{e()} {c.pick(BINARY)} {e()}"
        if kind == "unary":
            return c.pick(["-", "not ", "~", "+"]) + e()
        if kind == "bool":
            return f" {c.pick(['and', 'or'])} ".join(e() for _ in range(c.count(2, 3)))
        if kind == "compare":
            parts = [e()]
            for _ in range(c.count(1, 2)):
                parts += [c.pick(COMPARE), e()]
            return " ".join(parts)
        if kind == "call":
            return self.call(depth)
        if kind == "attribute":
            return f"{c.pick(['a', 'self', 'g(a)', '(a)'])}.{c.pick(['w', 'b', 'shape'])}"
        if kind == "subscript":
            index = c.pick([e(), f"{e()}:{e()}", f"{e()}, {e()}", f":{e()}", "::2", f"({e()}, a)"])
            return f"{c.pick(['a', 'self.w', 'g(a)'])}[{index}]"
        if kind == "conditional":
            return f"{e()} if {e()} else {e()}"
        if kind == "lambda":
            return f"lambda {c.pick(['', 'q', 'q, r=1', '*q', 'q, *, r', '**k'])}: {e()}"
        if kind == "display":
            items = [c.pick([e(), "*a"]) for _ in range(c.count(0, 3))]
            kind = c.pick(["list", "tuple", "set", "dict"])
            if kind == "list":
                return "[" + ", ".join(items) + c.pick(["", ","]) * bool(items) + "]"
            if kind == "tuple":
                return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
            if kind == "set" and items:
                return "{" + ", ".join(items) + "}"
            pairs = [c.pick([f"{e()}: {e()}", "**a"]) for _ in range(c.count(0, 2))]
            return "{" + ", ".join(pairs) + "}"
        if kind == "comprehension":
            clause = f"for i in {e()}" + c.pick(["", f" if {e()}", " for j in i"])
            if self.in_async and c.coin(0.3):
                clause = "async " + clause
            return c.pick([f"[{e()} {clause}]", f"({e()} {clause})", f"{{{e()} {clause}}}",
                           f"{{i: {e()} {clause}}}"])
        if kind == "paren":
            return f"({e()})"
        if kind == "walrus":
            return f"(n := {e()})"
        if kind == "fstring":
            inner = self.expr(depth + 1, plain=True)
            return c.pick([f'f"{{{inner}}}"', f"f'x{{{inner}!r}}y'", f'f"{{{inner}:>{{a}}}}"'])
        if kind == "concat":
            return c.pick(["('q' 'r')", "'q' 'r'", "('q'\n" + self.unit * 3 + "'r')"])
        if kind == "await":
            return f"await {e()}"
        return f"(yield {e()})"

    def call(self, depth: int) -> str:
        c = self.choose
        e = lambda: self.expr(depth + 1)  # noqa: E731
        if c.coin(0.1):
            return f"{c.pick(CALLEES)}(i for i in {e()})"
        args = [c.pick([e(), e(), f"*{c.pick(['a', 'b'])}", f"{c.pick(['k', 'dim', 'a'])}={e()}",
                        "**kw"]) for _ in range(c.count(0, 4))]
        # Python's order: positionals (and *) before keywords (and **).
        args.sort(key=lambda a: ("=" in a.split("(")[0] and "==" not in a) or a.startswith("**"))
        seen, kept = set(), []
        for a in args:
            key = a.split("=")[0] if "=" in a.split("(")[0] and "==" not in a else None
            if key and key in seen:
                continue
            seen.add(key)
            kept.append(a)
        if kept and c.coin(0.2) and not kept[-1].startswith("*"):
            return f"{c.pick(CALLEES)}(\n{self.unit * 3}" + f",\n{self.unit * 3}".join(kept) + ",\n)"
        return f"{c.pick(CALLEES)}(" + ", ".join(kept) + ")"

    # --- statements ----------------------------------------------------------------------

    def simple(self) -> str:
        c = self.choose
        e = self.expr
        kind = c.pick(["assign", "assign", "tuple_assign", "augmented", "annotated", "chained",
                       "call", "return", "assert", "raise", "del", "pass", "item", "expr"])
        if kind == "assign":
            return f"{c.pick(['x', 'y', 'self.w'])} = {e()}"
        if kind == "tuple_assign":
            return c.pick([f"x, y = {e()}", f"(x, y) = {e()}", f"[x, *y] = {e()}",
                           f"x = {e()}, {e()}"])
        if kind == "augmented":
            return f"x {c.pick(['+=', '-=', '*=', '|='])} {e()}"
        if kind == "annotated":
            return f"x: {c.pick(['int', 'list[int]', 'a.b'])} = {e()}"
        if kind == "chained":
            return f"x = y = {e()}"
        if kind == "call":
            return self.call(0)
        if kind == "return" and self.in_function:
            return c.pick([f"return {e()}", "return", f"return {e()}, {e()}"])
        if kind == "assert":
            return c.pick([f"assert {e()}", f"assert {e()}, {e()}"])
        if kind == "raise":
            return c.pick([f"raise ValueError({e()})", f"raise ValueError({e()}) from {e()}"])
        if kind in ("del", "return"):
            return "del x"
        if kind == "pass":
            return "pass"
        if kind == "item":
            return f"self.w[{e()}] = {e()}"
        if kind == "expr":
            return f"x = {e()}" + c.pick(["", "  # note", " \\\n" + self.unit * 2 + "+ 1"])
        raise AssertionError(kind)

    def block(self, indent: str, depth: int) -> None:
        for _ in range(self.choose.count(1, 3)):
            if depth < 3 and self.choose.coin(0.3):
                self.compound(indent, depth)
            else:
                self.lines.append(indent + self.simple())

    def body(self, header: str, indent: str, depth: int) -> None:
        if self.choose.coin(0.35):
            line = self.simple()
            if "\n" not in line:
                self.lines.append(f"{indent}{header}: {line}")
                return
        self.lines.append(f"{indent}{header}:")
        self.block(indent + self.unit, depth + 1)

    def compound(self, indent: str, depth: int) -> None:
        c = self.choose
        kinds = ["if", "try", "for", "while", "with", "match", "def", "class"]
        if self.in_async:
            kinds += ["async for", "async with"]
        kind = c.pick(kinds)
        e = self.expr
        if kind == "if":
            self.body(f"if {e()}", indent, depth)
            for _ in range(c.count(0, 2)):
                self.body(f"elif {e()}", indent, depth)
            if c.coin():
                self.body("else", indent, depth)
        elif kind == "try":
            self.body("try", indent, depth)
            handlers = c.count(0, 2)
            for _ in range(handlers):
                self.body(c.pick(["except ValueError", "except (KeyError, a) as err",
                                  f"except {e()}"]), indent, depth)
            if handlers and c.coin(0.3):
                self.body("else", indent, depth)
            if not handlers or c.coin(0.3):
                self.body("finally", indent, depth)
        elif kind in ("for", "async for"):
            self.body(f"{kind} {c.pick(['i', 'i, j', '(i, j)'])} in {e()}", indent, depth)
            if c.coin(0.3):
                self.body("else", indent, depth)
        elif kind == "while":
            self.body(f"while {e()}", indent, depth)
        elif kind in ("with", "async with"):
            self.body(f"{kind} {e()} as w" + c.pick(["", f", {e()}"]), indent, depth)
        elif kind == "match":
            self.lines.append(f"{indent}match {e()}:")
            for pattern in c.some(["1", "'q'", "[i, *_]", "{'k': i}", "K(w=i)", "_ if a"], 1, 3):
                self.body(f"case {pattern}", indent + self.unit, depth + 1)
        elif kind == "def":
            self.function(indent, depth)
        else:
            self.lines.append(f"{indent}class K{c.pick(['', '(a.b)', '(a, metaclass=g(a))'])}:")
            self.function(indent + self.unit, depth + 1)

    def function(self, indent: str, depth: int) -> None:
        c = self.choose
        for _ in range(c.count(0, 2)):
            self.lines.append(f"{indent}@{c.pick(['g', 'g(a)', 'a.b', 'g(k=self.w)'])}")
        saved = self.in_async, self.in_generator, self.in_function
        kind = c.pick(["def", "def", "async def", "generator"])
        self.in_async, self.in_generator = kind == "async def", kind == "generator"
        self.in_function = True
        header = f"{'async def' if self.in_async else 'def'} f{len(self.lines)}(self, a, b=1, *c, k=None, **kw)"
        self.body(header, indent, depth)
        if kind == "generator":
            self.lines.append(f"{indent}{self.unit}yield {self.expr()}")
        self.in_async, self.in_generator, self.in_function = saved

    def module(self) -> str:
        c = self.choose
        self.lines = ["import torch", "from a import b as g"]
        for _ in range(c.count(1, 3)):
            if c.coin(0.2):
                self.lines.append("\f")
            self.function("", 0) if c.coin(0.7) else self.compound("", 0)
        end = "\r\n" if c.coin(0.2) else "\n"
        return end.join(self.lines) + end


def module(choose: Chooser) -> str:
    """A generated module CPython compiles."""
    for _ in range(20):
        text = Gen(choose).module()
        if compiles(text) is None:
            return text
    raise AssertionError("no generated module compiled")


NO_ROOT = {"block", "op", "empty", "/", "*", "from", "type", "parameters", "arguments", "for",
           "if", "async_for", "pair", "keyword", "default", "dictionary_splat", "splat",
           "splat_pattern", "expression_statement", "attribute_name", "name", "constant"}
NO_HOLE = {"op", "empty", "/", "*", "from", "type", "parameters", "arguments", "for", "if",
           "async_for", "pair", "default", "attribute_name", "bare_generator"}
SEQUENCES = {"arguments", "list", "tuple", "set", "expression_list", "dictionary"}


def outer(t: T) -> Tuple[int, int]:
    return t.wraps[-1] if t.wraps else t.span


def inside(node: T) -> List[T]:
    """``node``'s descendants a pattern could be written over (not inside f-strings)."""
    out = []
    stack = list(node.children)
    while stack:
        t = stack.pop()
        out.append(t)
        stack.extend(t.children)
    return out


def draw(choose: Chooser, tree: Tree) -> Optional[str]:
    """A pattern abstracted from one expression or statement of ``tree``."""
    roots = [t for t in walk(tree.root) if t.kind not in NO_ROOT and not t.kind.startswith(
        ("opaque", "holder")) and t.children and t.span[1] > t.span[0]]
    if not roots:
        return None
    root = choose.pick(roots)
    holes: List[Tuple[Tuple[int, int], str]] = []
    names: Dict[str, str] = {}

    def free(span: Tuple[int, int]) -> bool:
        return all(span[1] <= s or span[0] >= e for (s, e), _ in holes) and \
            root.span[0] <= span[0] and span[1] <= root.span[1]

    candidates = [t for t in inside(root) if t.kind not in NO_HOLE and t.span[1] > t.span[0]]
    for _ in range(choose.count(0, 3)):
        if not candidates:
            break
        t = choose.pick(candidates)
        span = outer(t) if choose.coin(0.7) else t.span
        if not free(span):
            continue
        text = tree.text(span)
        if choose.coin(0.15):
            name = "_"
        elif names and choose.coin(0.2):
            name = choose.pick(sorted(names))  # bound twice: equal text or no match
        else:
            name = f"M{len(names)}"
            names[name] = text
        holes.append((span, f"${name}"))
    runs = [t for t in inside(root) + [root] if t.kind in SEQUENCES and t.children]
    if runs and choose.coin(0.4):
        seq = choose.pick(runs)
        i = choose.count(0, len(seq.children) - 1)
        j = choose.count(i + 1, len(seq.children))
        span = (outer(seq.children[i])[0], outer(seq.children[j - 1])[1])
        # `($$$X)` over a whole tuple reads as a tuple in an assignment's target and as a
        # parenthesized expression elsewhere (tree-sitter parses the pattern in its context):
        # ambiguous, not drawn.
        whole_tuple = seq.kind == "tuple" and i == 0 and j == len(seq.children)
        if free(span) and not whole_tuple:
            holes.append((span, f"$$$S{len(holes)}"))
    text = tree.data[root.span[0]:root.span[1]]
    for (s, e), hole in sorted(holes, reverse=True):
        text = text[:s - root.span[0]] + hole.encode() + text[e - root.span[0]:]
    return text.decode().replace("\r\n", "\n")


GUARD_VARIABLE = re.compile(r"\$(\$\$)?([A-Z_][A-Z0-9_]*)")


def _own_variables(pattern: str) -> str:
    """``pattern`` with its metavariables renamed apart: a guard shares none with the match."""
    return GUARD_VARIABLE.sub(lambda m: "$" + (m.group(1) or "") + (
        "_" if m.group(2) == "_" else "G" + m.group(2)), pattern)


def draw_rule(choose: Chooser, tree: Tree) -> Optional[Rule]:
    """A rule around a pattern drawn from ``tree``: sometimes scoped to a class and a function
    holding one of its matches (or to any definition's name), guarded by patterns drawn from
    the tree too, conditioned by a regex on what a metavariable bound at one of its matches."""
    pattern = draw(choose, tree)
    if pattern is None:
        return None
    rule = Rule(pattern)
    try:
        matches = find_bound(tree, pattern)
    except (SyntaxError, NotModeled):
        return rule
    defs = definitions(tree)
    if defs and choose.coin(0.35):
        if matches and choose.coin(0.8):
            span, _ = choose.pick(matches)
            holding = [d for d in defs if within(span, d[2])]
        else:
            holding = [choose.pick(defs)]
        functions = [d for d in holding if d[0] == "function"]
        classes = [d for d in holding if d[0] == "class"]
        if classes and choose.coin(0.5):
            cls = choose.pick(classes)
            rule.inside_class = cls[1]
            functions = [f for f in functions if within(f[2], cls[2])]
        if functions and (rule.inside_class is None or choose.coin(0.5)):
            rule.inside_function = choose.pick(functions)[1]
    for guard in ("not_inside", "unless"):
        if choose.coin(0.2):
            drawn = draw(choose, tree)
            if drawn is not None:
                setattr(rule, guard, _own_variables(drawn))
    named = [(name, value[0]) for _, b in matches[:1] for name, value in b.items()
             if len(value) == 1 and value[0]]
    if named and choose.coin(0.3):
        name, text = choose.pick(named)
        words = re.findall(r"[A-Za-z0-9_.]+", text)
        if words:
            word = choose.pick(words)
            i = choose.count(0, len(word) - 1)
            piece = re.escape(word[i:i + choose.count(1, 4)]).replace("\\_", "_")
            (rule.not_regex if choose.coin(0.3) else rule.regex)[name] = piece
    return rule


def rule_yaml(i: int, rule: Rule) -> str:
    """The rule as regraft reads it."""
    lines = [f"- id: p{i}", f"  match: {json.dumps(rule.pattern)}"]
    inside = {k: v for k, v in (("class", rule.inside_class), ("function", rule.inside_function))
              if v is not None}
    if inside:
        lines.append(f"  inside: {json.dumps(inside)}")
    for key in ("not_inside", "unless"):
        if getattr(rule, key) is not None:
            lines.append(f"  {key}: {json.dumps(getattr(rule, key))}")
    where = {f"${n}": {"regex": r} for n, r in rule.regex.items()}
    where.update({f"${n}": {"not_regex": r} for n, r in rule.not_regex.items()})
    if where:
        lines.append(f"  where: {json.dumps(where)}")
    return "\n".join(lines) + "\n"


def case(choose: Chooser) -> Case:
    source = module(choose)
    tree = Tree(source)
    from regraft import RegraftError, _native

    rules, refused = [], []
    for _ in range(6):
        rule = draw_rule(choose, tree)
        if rule is None:
            continue
        try:
            for pattern in (rule.pattern, rule.not_inside, rule.unless):
                if pattern is not None:
                    pattern_tree(pattern)
        except (SyntaxError, NotModeled):
            continue
        try:
            _native.NativeRules.parse(rule_yaml(0, rule).lstrip("- ").replace("\n  ", "\n"),
                                      "yaml", "p.yaml")
        except RegraftError as error:
            refused.append((rule.pattern, str(error)))
            continue
        rules.append(rule)
    text = "".join(rule_yaml(i, r) for i, r in enumerate(rules))
    return Case(source, text or "[]\n", facts={"rules": rules, "refused": refused})


def regraft_matches(case: Case, whole: bool) -> Dict[str, Set[Tuple[int, int, bool]]]:
    """Each rule's matches as regraft's ``check`` reports them: range, and whether a guard
    left the match alone."""
    from regraft import _native

    native = _native.NativeRules.parse(case.rule, "yaml", "oracle.yaml")
    raw, errors = native.check(case.source, case.filename, [], None, (None, None, None, None),
                               whole)
    errors = {k: v for k, v in errors.items() if "otherwise than CPython" not in str(v)}
    assert not errors, f"check failed: {errors}"
    return {r["rule"]: {(m["range"]["start"], m["range"]["end"], bool(m.get("guarded")))
                        for m in r.get("matches", [])}
            for r in json.loads(raw)}


def misread_regions(tree: Tree):
    """A test of a span: whether it rests on code tree-sitter reads otherwise than CPython
    (``n := a if b else c``, ``with a if b else c as w``, ``await a ** b``; see
    ``src/python/misread.rs``), where regraft refuses to match; what lies wholly inside an
    operand is read alike and still compared."""
    regions = []

    def operands(node: ast.expr) -> List[ast.AST]:
        """The parts read alike: a conditional's and a lambda's, down their last operand."""
        if tree.wrapped(tree.span(node)):
            return [node]
        if isinstance(node, ast.IfExp):
            return [node.body, node.test] + operands(node.orelse)
        if isinstance(node, ast.Lambda):
            return [node.args] + operands(node.body)
        return [node]

    for node in ast.walk(ast.parse(tree.source)):
        if isinstance(node, ast.NamedExpr) and isinstance(node.value, ast.IfExp):
            span = tree.span(node)
            if not tree.wrapped(tree.span(node.value)):
                parts = [node.target, node.value.body, node.value.test, node.value.orelse]
                regions.append((span, [tree.span(p) for p in parts]))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and isinstance(
                node.left, ast.Await) and not tree.wrapped(tree.span(node.left)):
            parts = [node.left.value, node.right]
            regions.append((tree.span(node), [tree.span(p) for p in parts]))
        if isinstance(node, ast.withitem) and node.optional_vars is not None and isinstance(
                node.context_expr, (ast.IfExp, ast.Lambda)):
            value = node.context_expr
            if not tree.wrapped(tree.span(value)):
                span = (tree.span(value)[0], tree.span(node.optional_vars)[1])
                parts = [p for p in operands(value) if hasattr(p, "lineno")]
                parts.append(node.optional_vars)
                regions.append((span, [tree.span(p) for p in parts]))

    def test(s):
        for (start, end), parts in regions:
            overlaps = s[0] < end and start < s[1]
            within = any(p[0] <= s[0] and s[1] <= p[1] for p in parts)
            if overlaps and not within:
                return True
        return False
    return test


def judge(case: Case) -> Optional[str]:
    rules = case.facts["rules"]
    if not rules:
        return None
    tree = Tree(case.source)
    misread = misread_regions(tree)
    kept = lambda found: {m for m in found if not misread(m[:2])}  # noqa: E731
    expected = {}
    for i, rule in enumerate(rules):
        try:
            # A guard found on code tree-sitter reads otherwise than CPython guards there in
            # one reading only: not compared.
            guards = [g for g in (rule.not_inside, rule.unless) if g is not None]
            if any(misread(span) for g in guards for span, _ in find_bound(tree, g)):
                continue
            expected[f"p{i}"] = kept((s, e, g) for (s, e), g in find_rule(tree, rule))
        except NotModeled:
            continue
    paths = {"statement-local path": regraft_matches(case, False),
             "whole parse": regraft_matches(case, True)}
    show = lambda found: [(tree.text(m[:2]), "guarded" if m[2] else "matched")  # noqa: E731
                          for m in sorted(found)]
    for i, rule in enumerate(rules):
        want = expected.get(f"p{i}")
        if want is None:
            continue
        wrong = []
        for path, found in paths.items():
            got = kept(found.get(f"p{i}", set()))
            if want != got:
                wrong.append(f"  {path}: only the reference {show(want - got)}, "
                             f"only regraft {show(got - want)}")
        if wrong:
            return f"rule:\n{rule_yaml(i, rule)}" + "\n".join(wrong) + f"\n--- source\n{case.source}"
    return None
