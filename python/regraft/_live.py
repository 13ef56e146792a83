"""Liveness: whether the code a rule patched ever ran.

A rule can apply cleanly and still never take effect: upstream stopped calling the function it
edits (a loader moved, a trainer's default changed). With liveness on (``install(...,
live=True)``, ``REGRAFT_LIVE=1``, ``pytest --regraft-live``) every function a rule's edits wrote
in gets a probe as its first statement, compiled at the function's own line numbers, so
tracebacks and ``inspect`` see the patched text unchanged. The probe is an object the code
holds as a constant — ``if PROBE.armed: PROBE.fire()``, one constant, one slot read and a jump
once it has fired — so it needs no name in any namespace: code run elsewhere than in its
module (``runpy``, a function rebuilt with other globals) still runs and still records.
``unexercised()`` lists the patched functions never called; ``watch()`` re-arms every probe and
collects what fires while it is open (the pytest plugin runs each ``regraft_smoke`` test in
one).

Which function an edit belongs to is read from CPython's own tree of the patched text: the
innermost function whose body (a lambda's expression) holds the edit — a decorator, a default
or an annotation runs where the function is defined — and every function the edit itself
wrote. A deletion is placed where the deleted code stood, in the text the rule read. An edit
outside every function body (a module or class attribute) runs when the module is executed: it
is exercised by the import itself.
"""

from __future__ import annotations

import ast
import bisect
import sys
import threading
import types
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from . import _sources

IMPORT = "<import>"
"""The unit of edits outside every function: they run when the module runs."""

Key = Tuple[str, int, int]
"""A patched function: its qualified name, and the line and column its definition starts at."""

_Def = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
# Comprehensions are scopes of their own in every CPython; 3.12 inlined the list, set and dict
# ones (PEP 709), so only a generator expression names a level there.
_COMPREHENSIONS: Dict[type, str] = {ast.GeneratorExp: "<genexpr>"}
if sys.version_info < (3, 12):
    _COMPREHENSIONS.update({ast.ListComp: "<listcomp>", ast.SetComp: "<setcomp>",
                            ast.DictComp: "<dictcomp>"})


def _globals_of(node: ast.AST) -> set:
    """The names a function declares ``global`` in its own body."""
    names: set = set()
    stack = list(getattr(node, "body", []))
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Global):
            names.update(n.names)
        elif not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(n))
    return names


def _defs(tree: ast.AST, text: str) -> Iterator[Tuple[ast.AST, str]]:
    """Every function and lambda of ``tree`` (parsed from ``text``) with its qualified name as
    CPython gives it: decorators, defaults and annotations stand in the enclosing scope, a
    comprehension is a level, a name declared ``global`` starts from the module. Expressions
    are entered only where a line of theirs says ``lambda``: walking every expression node
    cost most of a large module's instrumentation."""
    lambdas = [i + 1 for i, line in enumerate(text.split("\n")) if "lambda" in line]

    def may_hold_lambda(node: ast.AST) -> bool:
        at = bisect.bisect_left(lambdas, node.lineno)
        return at < len(lambdas) and lambdas[at] <= (node.end_lineno or node.lineno)

    # Nodes to classify: (node, prefix, globals declared by the enclosing function).
    stack: List[Tuple[ast.AST, str, set]] = [(n, "", set()) for n in ast.iter_child_nodes(tree)]
    stack.reverse()
    while stack:
        node, prefix, declared = stack.pop()
        if isinstance(node, ast.ClassDef):
            outer = [*node.decorator_list, *node.bases, *node.keywords]
            inner = [(n, f"{prefix}{node.name}.", set()) for n in node.body]
        elif isinstance(node, _Def):
            lam = isinstance(node, ast.Lambda)
            name = "<lambda>" if lam else node.name
            qualname = name if name in declared else prefix + name
            yield node, qualname
            # What runs where the function is defined stands in the enclosing scope.
            outer = [*getattr(node, "decorator_list", []), node.args,
                     *([node.returns] if getattr(node, "returns", None) else [])]
            own = set() if lam else _globals_of(node)
            inner = [(n, f"{qualname}.<locals>.", own) for n in ([node.body] if lam else node.body)]
        elif type(node) in _COMPREHENSIONS:
            if not may_hold_lambda(node):
                continue
            outer = []
            inner = [(n, f"{prefix}{_COMPREHENSIONS[type(node)]}.", declared)
                     for n in ast.iter_child_nodes(node)]
        elif isinstance(node, ast.expr) and not may_hold_lambda(node):
            continue
        else:
            outer, inner = list(ast.iter_child_nodes(node)), []
        # Depth first, in source order.
        stack.extend(reversed(inner))
        stack.extend(reversed([(n, prefix, declared) for n in outer]))


def _body_span(node: ast.AST, index) -> Tuple[int, int]:
    """Where a function's body (a lambda's expression) starts and ends, as ``str`` indices."""
    body = node.body if isinstance(node, ast.Lambda) else node.body[0]
    last = node.body if isinstance(node, ast.Lambda) else node.body[-1]
    return index(body.lineno, body.col_offset), index(last.end_lineno, last.end_col_offset)


def _indexer(text: str):
    """``(line, byte column)`` of CPython's tree → ``str`` index of ``text``."""
    starts = _sources.line_starts(text)
    lines = text.split("\n")

    def index(line: int, byte_column: int) -> int:
        return starts[line - 1] + len(lines[line - 1].encode("utf-8")[:byte_column].decode("utf-8", "replace"))

    return index


class _Spans:
    """The functions of a tree by position: each one's body span (a lambda's expression),
    whole span (``def`` on, decorators left out) and key, with the function each lies in."""

    def __init__(self, tree: ast.AST, text: str) -> None:
        index = _indexer(text)
        rows = []
        for node, qualname in _defs(tree, text):
            begin, end = _body_span(node, index)
            rows.append((begin, -end, index(node.lineno, node.col_offset),
                         index(node.end_lineno, node.end_col_offset),
                         (qualname, node.lineno, node.col_offset)))
        rows.sort()
        self.rows = rows
        self.begins = [r[0] for r in rows]
        # Bodies nest: one sweep gives each its parent (a scan per edit was quadratic).
        self.parent: List[int] = []
        stack: List[int] = []
        for i, row in enumerate(rows):
            while stack and -rows[stack[-1]][1] < row[0]:
                stack.pop()
            self.parent.append(stack[-1] if stack else -1)
            stack.append(i)
        self.by_def = sorted(rows, key=lambda r: r[2])
        self.def_begins = [r[2] for r in self.by_def]

    def holder(self, start: int, stop: int, point: bool) -> Optional[Key]:
        """The innermost function whose body holds ``start..stop`` (a deletion's ``point``:
        strictly inside, not at an edge it shares with a neighbour). Every body holding it
        encloses the last one starting at or before it."""
        i = bisect.bisect_right(self.begins, start) - 1
        while i >= 0:
            begin, end = self.rows[i][0], -self.rows[i][1]
            if (begin < start < end) if point else (begin <= start and stop <= end):
                return self.rows[i][4]
            i = self.parent[i]
        return None

    def written_in(self, start: int, stop: int) -> List[Key]:
        """The functions wholly inside ``start..stop``: ones the edit itself wrote."""
        first = bisect.bisect_left(self.def_begins, start)
        last = bisect.bisect_right(self.def_begins, stop)
        return [r[4] for r in self.by_def[first:last] if r[3] <= stop]


def units(text: str, written: Sequence[Tuple[str, int, int]], tree: Optional[ast.AST] = None,
          deleted: Optional[Tuple[str, Mapping[str, Sequence[Tuple[int, int]]]]] = None,
          ) -> Dict[str, List[Key]]:
    """For each rule, the functions its edits wrote in (``written``: rule id and ``str`` range
    of ``text``); ``(IMPORT, 0, 0)`` for an edit that runs when the module does. ``deleted``:
    the text the rules read and, by rule, the ``str`` ranges of it their deletions removed —
    a deletion leaves nothing in ``text`` to place it by."""
    tree = ast.parse(text) if tree is None else tree
    spans = _Spans(tree, text)
    by_name: Dict[str, List[Key]] = {}
    for row in spans.rows:
        by_name.setdefault(row[4][0], []).append(row[4])
    before: Optional[_Spans] = None
    found: Dict[str, List[Key]] = {}
    for rule, start, stop in written:
        chosen: List[Key] = []
        if start == stop and deleted is not None and deleted[1].get(rule):
            # Where the deleted code stood, in the text the rule read; the same function here.
            if before is None:
                before = _Spans(ast.parse(deleted[0]), deleted[0])
            for a, b in deleted[1][rule]:
                key = before.holder(a, b, False)
                chosen.extend(by_name.get(key[0], []) if key else [(IMPORT, 0, 0)])
        else:
            # Functions the edit itself wrote, then the innermost one holding it.
            chosen = spans.written_in(start, stop)
            holder = spans.holder(start, stop, start == stop)
            if holder is not None:
                chosen.append(holder)
        keys = found.setdefault(rule, [])
        for key in chosen or [(IMPORT, 0, 0)]:
            if key not in keys:
                keys.append(key)
    return found


class Probe:
    """One probed function of one module, the rules whose edits it holds, and its flag: the
    object the function's code holds as a constant and reads on every call."""

    __slots__ = ("armed", "calls", "module", "filename", "qualname", "line", "rules", "placed")

    def __init__(self, module: str, filename: str, qualname: str, line: int, rules: List[str],
                 placed: bool = True) -> None:
        self.armed = True
        self.calls = False
        """Whether it ever ran (since the module was executed)."""
        self.module, self.filename, self.qualname, self.line = module, filename, qualname, line
        self.rules = rules
        self.placed = placed
        """Whether the function was found in the code that runs (a later pack may rename it)."""

    def fire(self) -> None:
        """The first run since it was armed: recorded, the flag turned off."""
        self.armed = False
        self.calls = True
        for fired in list(_WATCHES):
            fired.append(self)

    def __repr__(self) -> str:
        return f"Probe({self.module}.{self.qualname} at {self.filename}:{self.line}, rules={self.rules})"


@dataclass
class Table:
    """The probes of one module's code, and the loader that made it (a table whose module is
    gone, or was executed again by another loader, is stale)."""

    module: str
    filename: str
    probes: List[Probe] = field(default_factory=list)
    imported: List[str] = field(default_factory=list)
    """Rules with edits that run when the module does."""
    loader: Any = None

    def register(self) -> None:
        """Makes this the module's table, replacing one its earlier code had."""
        with _LOCK:
            _TABLES[:] = [t for t in _TABLES if t.module != self.module]
            _TABLES.append(self)

    def current(self) -> bool:
        """Whether the module in ``sys.modules`` runs this table's code."""
        module = sys.modules.get(self.module)
        return module is not None and getattr(module, "__loader__", None) is self.loader


_LOCK = threading.Lock()
_TABLES: List[Table] = []
_WATCHES: List[List[Probe]] = []


def _placeholder_prefix(text: str) -> str:
    prefix = "__regraft_probe_"
    while prefix in text:
        prefix += "x"
    return prefix


def instrument(tree: ast.Module, text: str, by_rule: Mapping[str, Sequence[Sequence[Any]]],
               module: str, filename: str) -> Tuple[Table, Mapping[str, Probe]]:
    """Puts a probe into each function of ``tree`` (parsed from ``text``) that ``by_rule`` (see
    ``units``) names; returns the table and the placeholders to ``bind`` in the compiled code.
    A function is found by its key, else by name and line, else by its name alone where that
    is unique (an earlier pack's key, moved by a later pack's edits)."""
    table = Table(module, filename)
    wanted: Dict[Key, List[str]] = {}
    for rule, keys in by_rule.items():
        for qualname, line, column in keys:
            if qualname == IMPORT:
                table.imported.append(rule)
            else:
                wanted.setdefault((qualname, int(line), int(column)), []).append(rule)
    defs = list(_defs(tree, text))
    nodes: Dict[Key, ast.AST] = {}
    for node, qualname in defs:
        nodes[(qualname, node.lineno, node.col_offset)] = node

    def find(key: Key) -> Optional[Key]:
        if key in nodes:
            return key
        for fits in (lambda k: k[:2] == key[:2], lambda k: k[0] == key[0]):
            near = [k for k in nodes if fits(k)]
            if len(near) == 1:
                return near[0]
        return None

    placed: Dict[Key, Probe] = {}
    for key, rules in wanted.items():
        at = find(key)
        if at is None:
            # Gone from the code that runs: its rules cannot be told to have run.
            table.probes.append(Probe(module, filename, key[0], key[1], rules, placed=False))
        elif at in placed:
            placed[at].rules.extend(r for r in rules if r not in placed[at].rules)
        else:
            placed[at] = Probe(module, filename, at[0], at[1], list(rules))
            table.probes.append(placed[at])
    prefix = _placeholder_prefix(text)
    holders: Dict[str, Probe] = {}
    for i, (key, probe) in enumerate(placed.items()):
        name = f"{prefix}{i}__"
        holders[name] = probe
        _probe(nodes[key], name)
    return table, holders


def _probe(node: ast.AST, placeholder: str) -> None:
    """Makes the probe held as ``placeholder`` the first thing ``node`` runs, at the position
    of what ran first before (the new nodes take its place in line tables)."""
    armed = ast.Attribute(ast.Constant(placeholder), "armed", ast.Load())
    fire = ast.Call(ast.Attribute(ast.Constant(placeholder), "fire", ast.Load()), [], [])
    if isinstance(node, ast.Lambda):
        # `(probe.armed and probe.fire()) or body`: `fire` returns None, so the body's value
        # is the result.
        at = node.body
        test = ast.BoolOp(ast.And(), [armed, fire])
        node.body = ast.BoolOp(ast.Or(), [test, at])
        made = [node.body, test]
    else:
        body = node.body
        # A docstring stays the first statement (it is the function's `__doc__`).
        first = 1 if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                      and isinstance(body[0].value.value, str)) else 0
        at = body[min(first, len(body) - 1)]
        statement = ast.If(armed, [ast.Expr(fire)], [])
        body.insert(first, statement)
        made = [statement, statement.body[0]]
    made += [armed, armed.value, fire, fire.func, fire.func.value]
    for part in made:
        ast.copy_location(part, at)


def bind(code: types.CodeType, holders: Mapping[str, Probe]) -> types.CodeType:
    """``code`` with each placeholder constant replaced by its probe, in every nested code."""
    consts = []
    changed = False
    for const in code.co_consts:
        if isinstance(const, str) and const in holders:
            const, changed = holders[const], True
        elif isinstance(const, types.CodeType):
            new = bind(const, holders)
            const, changed = new, changed or new is not const
        consts.append(const)
    return code.replace(co_consts=tuple(consts)) if changed else code


def forget(modules: Sequence[str]) -> None:
    """Drops the tables of ``modules``: their code runs stock again, or is gone."""
    with _LOCK:
        _TABLES[:] = [t for t in _TABLES if t.module not in modules]


def _tables() -> List[Table]:
    """The tables of the code that runs now (stale ones dropped)."""
    with _LOCK:
        _TABLES[:] = [t for t in _TABLES if t.current()]
        return list(_TABLES)


@dataclass(frozen=True)
class Unexercised:
    """A patched function that never ran: where it is and which rules patched it."""

    module: str
    qualname: str
    filename: str
    line: int
    rules: Tuple[str, ...]


def unexercised() -> List[Unexercised]:
    """Every patched function of the modules executed with liveness on that has never been
    called, in the order the modules were executed."""
    return [Unexercised(p.module, p.qualname, p.filename, p.line, tuple(p.rules))
            for t in _tables() for p in t.probes if not p.calls]


def exercised() -> List[Unexercised]:
    """The patched functions that did run (what a worker reports beside ``unexercised``)."""
    return [Unexercised(p.module, p.qualname, p.filename, p.line, tuple(p.rules))
            for t in _tables() for p in t.probes if p.calls]


def rules_installed() -> Tuple[Dict[str, List[Probe]], set]:
    """Every rule that patched a module executed with liveness on, with its probes; and the
    rules with edits that run at import (those ran with the module)."""
    found: Dict[str, List[Probe]] = {}
    at_import = set()
    for table in _tables():
        for rule in table.imported:
            found.setdefault(rule, [])
            at_import.add(rule)
        for probe in table.probes:
            for rule in probe.rules:
                found.setdefault(rule, []).append(probe)
    return found, at_import


class watch:
    """A context in which every probe is armed again and what fires is collected
    (``fired``): which patched functions ran between its start and end. Watches nest: a probe
    that fires is collected by every open one."""

    def __init__(self) -> None:
        self.fired: List[Probe] = []

    def __enter__(self) -> "watch":
        for table in _tables():
            for probe in table.probes:
                probe.armed = True
        _WATCHES.append(self.fired)
        return self

    def __exit__(self, *exc: Any) -> None:
        # By identity: two watches' lists may be equal (both empty).
        for i in range(len(_WATCHES) - 1, -1, -1):
            if _WATCHES[i] is self.fired:
                del _WATCHES[i]
                break

    def idle_rules(self, only: Sequence[str] = ()) -> Dict[str, List[Probe]]:
        """The rules (``only`` these, where given) none of whose patched code ran during the
        watch, with their probes; a rule whose edits run at import is never idle."""
        ran = {rule for probe in self.fired for rule in probe.rules}
        installed, at_import = rules_installed()
        idle = {}
        for rule in only or list(installed):
            if rule not in ran and rule not in at_import:
                idle[rule] = installed.get(rule, [])
        return idle
