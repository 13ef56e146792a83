"""Liveness: whether the code a rule patched ever ran.

A rule can apply cleanly and still never take effect: upstream stopped calling the function it
edits (a loader moved, a trainer's default changed). With liveness on (``install(...,
live=True)``, ``REGRAFT_LIVE=1``, ``pytest --regraft-live``) every function a rule's edits wrote
in gets a probe as its first statement — ``if __regraft_live_N__: __regraft_seen__(N)``, one
global read and a jump once it has fired — compiled at the function's own line numbers, so
tracebacks and ``inspect`` see the patched text unchanged. The first call records the
function and turns its flag off. ``unexercised()`` lists the patched functions never called;
``watch()`` re-arms every probe and collects what fires while it is open (the pytest plugin
runs each ``regraft_smoke`` test inside one).

Which function an edit belongs to is read from CPython's own tree of the patched text: the
innermost ``def`` or ``lambda`` whose own span (from ``def``, decorators left out: they run
where the function is defined) holds the edit, and every function the edit itself wrote. An
edit outside every function (a module or class attribute) runs when the module is executed:
it is exercised by the import itself.
"""

from __future__ import annotations

import ast
import bisect
import threading
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from . import _sources

IMPORT = "<import>"
"""The unit of edits outside every function: they run when the module runs."""

SEEN = "__regraft_seen__"
"""The module global each probe calls on its first run."""

_Def = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _defs(tree: ast.AST, text: str) -> Iterator[Tuple[ast.AST, str]]:
    """Every function and lambda of ``tree`` (parsed from ``text``) with its qualified name,
    as CPython names it. Expressions are entered only where a line of theirs says ``lambda``:
    walking every expression node cost most of a large module's instrumentation."""
    lambdas = [i + 1 for i, line in enumerate(text.split("\n")) if "lambda" in line]

    def may_hold_lambda(node: ast.AST) -> bool:
        at = bisect.bisect_left(lambdas, node.lineno)
        return at < len(lambdas) and lambdas[at] <= (node.end_lineno or node.lineno)

    stack: List[Tuple[ast.AST, str]] = [(tree, "")]
    while stack:
        node, prefix = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                stack.append((child, f"{prefix}{child.name}."))
            elif isinstance(child, _Def):
                name = "<lambda>" if isinstance(child, ast.Lambda) else child.name
                yield child, prefix + name
                stack.append((child, f"{prefix}{name}.<locals>."))
            elif not isinstance(child, ast.expr) or may_hold_lambda(child):
                stack.append((child, prefix))


def units(text: str, written: Sequence[Tuple[str, int, int]],
          tree: Optional[ast.AST] = None) -> Dict[str, List[Tuple[str, int, int]]]:
    """For each rule, the functions its edits wrote in (``written``: rule id and ``str`` range
    of ``text``), as ``(qualname, line, column)``; ``(IMPORT, 0, 0)`` for an edit that runs
    when the module does."""
    tree = ast.parse(text) if tree is None else tree
    starts = _sources.line_starts(text)
    lines = text.split("\n")

    def index(line: int, byte_column: int) -> int:
        # CPython's columns count UTF-8 bytes; `written` counts characters.
        return starts[line - 1] + len(lines[line - 1].encode("utf-8")[:byte_column].decode("utf-8", "replace"))

    spans = []
    for node, qualname in _defs(tree, text):
        begin = index(node.lineno, node.col_offset)
        end = index(node.end_lineno, node.end_col_offset)
        spans.append((begin, -end, (qualname, node.lineno, node.col_offset)))
    # Functions nest: one sweep in order of position keeps the open ones on a stack (a scan
    # of every function for every edit was quadratic: 500 edited functions took 80 ms).
    spans.sort()
    begins = [s[0] for s in spans]
    found: Dict[str, List[Tuple[str, int, int]]] = {}
    open_: List[Tuple[int, int, Tuple[str, int, int]]] = []
    at = 0
    for rule, start, stop in sorted(written, key=lambda w: (w[1], w[2])):
        while at < len(spans) and spans[at][0] <= start:
            span = spans[at]
            while open_ and -open_[-1][1] < span[0]:
                open_.pop()
            open_.append(span)
            at += 1
        # The innermost function that holds the edit, itself not the edit.
        holder = next((s for s in reversed(open_) if s[0] <= start and stop <= -s[1]
                       and (s[0], -s[1]) != (start, stop)), None)
        first = bisect.bisect_left(begins, start)
        last = bisect.bisect_right(begins, stop)
        chosen = [s for s in spans[first:last] if -s[1] <= stop]
        if holder is not None:
            chosen.append(holder)
        keys = found.setdefault(rule, [])
        for _, _, key in chosen or [(0, 0, (IMPORT, 0, 0))]:
            if key not in keys:
                keys.append(key)
    return found


@dataclass
class Probe:
    """One probed function of one module, and the rules whose edits it holds."""

    module: str
    filename: str
    qualname: str
    line: int
    rules: List[str]
    calls: bool = False
    """Whether it ever ran (since the module was executed)."""


@dataclass
class Table:
    """The probes of one executed module, and the globals their flags live in."""

    module: str
    filename: str
    probes: List[Probe] = field(default_factory=list)
    imported: List[str] = field(default_factory=list)
    """Rules with edits that run when the module does."""
    namespace: Optional[Dict[str, Any]] = None

    def bind(self, namespace: Dict[str, Any]) -> None:
        """Puts the probes' flags and their callback in the module's globals (before its
        code runs); replaces any table of a module of that name (a reload or a fresh import
        executes it again: the code that runs is the new one's)."""
        self.namespace = namespace
        for i in range(len(self.probes)):
            namespace[_flag(i)] = True
        namespace[SEEN] = self.seen
        with _LOCK:
            _TABLES[:] = [t for t in _TABLES if t.module != self.module]
            _TABLES.append(self)

    def seen(self, i: int) -> None:
        """A probe's first run: recorded, and its flag turned off."""
        probe = self.probes[i]
        probe.calls = True
        if self.namespace is not None:
            self.namespace[_flag(i)] = False
        for fired in list(_WATCHES):
            fired.append(probe)


def _flag(i: int) -> str:
    return f"__regraft_live_{i}__"


_LOCK = threading.Lock()
_TABLES: List[Table] = []
_WATCHES: List[List[Probe]] = []


def instrument(tree: ast.Module, text: str, by_rule: Mapping[str, Sequence[Sequence[Any]]],
               module: str, filename: str) -> Table:
    """Puts a probe into each function of ``tree`` (parsed from ``text``) that ``by_rule`` (see
    ``units``) names; returns the table to ``bind`` to the module's globals before its code
    runs."""
    table = Table(module, filename)
    wanted: Dict[Tuple[str, int, int], List[str]] = {}
    for rule, keys in by_rule.items():
        for key in keys:
            qualname, line, column = key
            if qualname == IMPORT:
                table.imported.append(rule)
            else:
                wanted.setdefault((qualname, int(line), int(column)), []).append(rule)
    for node, qualname in list(_defs(tree, text)):
        rules = wanted.pop((qualname, node.lineno, node.col_offset), None)
        if rules is None:
            continue
        _probe(node, len(table.probes))
        table.probes.append(Probe(module, filename, qualname, node.lineno, rules))
    # A unit the tree no longer holds (a later pack renamed it): its rules cannot be told
    # to have run, so they are left without a probe and listed as never exercised.
    for (qualname, line, _), rules in wanted.items():
        table.probes.append(Probe(module, filename, qualname, line, rules))
    return table


def _probe(node: ast.AST, i: int) -> None:
    """Makes probe ``i`` the first thing ``node`` runs."""
    flag = ast.Name(_flag(i), ast.Load())
    call = ast.Call(ast.Name(SEEN, ast.Load()), [ast.Constant(i)], [])
    if isinstance(node, ast.Lambda):
        # `(flag and seen(i)) or body`: `seen` returns None, so the body's value is the result.
        test = ast.BoolOp(ast.And(), [flag, call])
        node.body = ast.copy_location(ast.BoolOp(ast.Or(), [test, node.body]), node.body)
        for part in (test, flag, call, call.func, call.args[0]):
            ast.copy_location(part, node.body)
        return
    body = node.body
    # A docstring stays the first statement (it is the function's `__doc__`).
    first = 1 if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                  and isinstance(body[0].value.value, str)) else 0
    at = body[min(first, len(body) - 1)]
    statement = ast.If(flag, [ast.Expr(call)], [])
    for part in (statement, flag, statement.body[0], call, call.func, call.args[0]):
        ast.copy_location(part, at)
    body.insert(first, statement)


def forget(modules: Sequence[str]) -> None:
    """Drops the tables of ``modules``: their code runs stock again (``uninstall(reload=True)``)
    or is gone."""
    with _LOCK:
        _TABLES[:] = [t for t in _TABLES if t.module not in modules]


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
    with _LOCK:
        tables = list(_TABLES)
    return [Unexercised(p.module, p.qualname, p.filename, p.line, tuple(p.rules))
            for t in tables for p in t.probes if not p.calls]


def rules_installed() -> Tuple[Dict[str, List[Probe]], set]:
    """Every rule that patched a module executed with liveness on, with its probes; and the
    rules with edits that run at import (those ran with the module)."""
    found: Dict[str, List[Probe]] = {}
    at_import = set()
    with _LOCK:
        tables = list(_TABLES)
    for table in tables:
        for rule in table.imported:
            found.setdefault(rule, [])
            at_import.add(rule)
        for probe in table.probes:
            for rule in probe.rules:
                found.setdefault(rule, []).append(probe)
    return found, at_import


class watch:
    """A context in which every probe is armed again and what fires is collected
    (``fired``): which patched functions ran between its start and end."""

    def __init__(self) -> None:
        self.fired: List[Probe] = []

    def __enter__(self) -> "watch":
        with _LOCK:
            tables = list(_TABLES)
        for table in tables:
            if table.namespace is not None:
                for i in range(len(table.probes)):
                    table.namespace[_flag(i)] = True
        _WATCHES.append(self.fired)
        return self

    def __exit__(self, *exc: Any) -> None:
        _WATCHES.remove(self.fired)

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

