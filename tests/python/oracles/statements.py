"""The statement oracle: generated functions whose blocks hold every clause-body form (one-line
``if c: x`` / ``else: y`` / ``except: z`` / ``finally: w`` and indented blocks), triple-quoted
strings whose lines must not move, CRLF and tab layouts; a rule replaces a run between two
anchors, replaces, deletes or inserts around marked statements. CPython judges: the output's
``ast.dump`` must equal the input's AST with exactly the intended change made by
``ast.NodeTransformer`` — so no site is missed (every body form is found), nothing outside the
edit moves and every string value is unchanged — or regraft refuses.
"""

from __future__ import annotations

import ast
from typing import List, Optional

from . import Case, Chooser, written

SIMPLE = ["x = c + 1", "TARGET(c)", "TARGET(d)", "DROP()", "ANCHOR()", "y = [c,\n d]",
          'doc = """first\n    indented line\n\tand a tab\n  """', "s = 'one line'",
          "pass", "z = TARGET", "TARGET(c); x = 2", 'b = """a\n    \n  b""" + f"""{c}\n  x"""',
          "t = ('a'\n     'b')"]

KINDS = ["run", "replace", "delete", "insert_before", "insert_after"]

RULES = {
    "run": ("match: |\n  MARK_A()\n  $$$STMTS\n  MARK_B()\n"
            "action:\n  replace: |\n    MARK_A2()\n    $$$STMTS\n    MARK_B2()\n"),
    "replace": "match: TARGET($A)\naction: {replace: NEW($A)}\n",
    "delete": "match: DROP()\naction: {delete: true}\n",
    "insert_before": "match: ANCHOR()\naction: {insert_before: BEFORE()}\n",
    "insert_after": "match: ANCHOR()\naction: {insert_after: AFTER()}\n",
}


def _block(choose: Chooser, depth: int, lines: List[str], indent: str, unit: str) -> None:
    """Appends a block of one to four statements at ``indent``."""
    for _ in range(choose.count(1, 4)):
        if depth < 3 and choose.coin(0.35):
            _compound(choose, depth, lines, indent, unit)
        else:
            for i, line in enumerate(choose.pick(SIMPLE).split("\n")):
                # Continuation lines of brackets and strings keep their own text.
                lines.append((indent if i == 0 else "") + line)


def _body(choose: Chooser, depth: int, lines: List[str], header: str, indent: str,
          unit: str) -> None:
    """A clause: ``header:`` then a one-line body or an indented block."""
    if choose.coin(0.4):
        simple = choose.pick([s for s in SIMPLE if "\n" not in s])
        lines.append(f"{indent}{header}: {simple}")
    else:
        lines.append(f"{indent}{header}:")
        _block(choose, depth + 1, lines, indent + unit, unit)


def _compound(choose: Chooser, depth: int, lines: List[str], indent: str, unit: str) -> None:
    kind = choose.pick(["if", "try", "for", "while", "with"])
    if kind == "if":
        _body(choose, depth, lines, "if c", indent, unit)
        for _ in range(choose.count(0, 2)):
            _body(choose, depth, lines, "elif d", indent, unit)
        if choose.coin(0.6):
            _body(choose, depth, lines, "else", indent, unit)
    elif kind == "try":
        _body(choose, depth, lines, "try", indent, unit)
        handlers = choose.count(0, 2)
        for i in range(handlers):
            _body(choose, depth, lines, choose.pick(["except ValueError", "except Exception as e",
                                                     "except"]) if i == handlers - 1
                  else "except KeyError", indent, unit)
        if handlers and choose.coin(0.4):
            _body(choose, depth, lines, "else", indent, unit)
        if not handlers or choose.coin(0.4):
            _body(choose, depth, lines, "finally", indent, unit)
    elif kind in ("for", "while"):
        _body(choose, depth, lines, "for i in c" if kind == "for" else "while d", indent, unit)
        if choose.coin(0.4):
            _body(choose, depth, lines, "else", indent, unit)
    else:
        _body(choose, depth, lines, "with c as w", indent, unit)


def case(choose: Chooser) -> Case:
    """A module of one function (sometimes a method) and one statement rule."""
    unit = choose.pick(["    ", "    ", "  ", "\t"])
    kind = choose.pick(KINDS)
    lines = ['"""A module docstring."""', "", "", "def f(c, d):"]
    body: List[str] = []
    _block(choose, 0, body, unit, unit)
    if kind == "run":
        # The run's anchors stand in one block, the function's, between whole statements.
        middle: List[str] = []
        after: List[str] = []
        _block(choose, 1, middle, unit, unit)
        if choose.coin(0.5):
            _block(choose, 1, after, unit, unit)
        body = body + [unit + "MARK_A()"] + middle + [unit + "MARK_B()"] + after
    lines += body + [""]
    source = "\n".join(lines)
    if choose.coin(0.2):
        source = source.replace("\n", "\r\n")
    expected = _expected(kind, source)
    sites = expected[1]
    rule = f"id: statements-oracle\n{RULES[kind]}expect: {sites}\n"
    return Case(source, rule, facts={"kind": kind, "expected": expected[0]})


class _Edit(ast.NodeTransformer):
    """The intended change, made on the input's tree."""

    def __init__(self, kind: str) -> None:
        self.kind, self.sites = kind, 0

    @staticmethod
    def _call_name(statement: ast.stmt) -> Optional[str]:
        value = getattr(statement, "value", None)
        if isinstance(statement, ast.Expr) and isinstance(value, ast.Call) and \
                isinstance(value.func, ast.Name):
            return value.func.id
        return None

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, field, self._block(block) if block else block)
        return node

    def _block(self, block: List[ast.stmt]) -> List[ast.stmt]:
        out: List[ast.stmt] = []
        for statement in block:
            name = self._call_name(statement)
            if self.kind == "delete" and name == "DROP":
                self.sites += 1
                continue
            if self.kind in ("insert_before", "insert_after") and name == "ANCHOR":
                self.sites += 1
                new = ast.Expr(ast.Call(ast.Name("BEFORE" if self.kind == "insert_before"
                                                 else "AFTER", ast.Load()), [], []))
                out += [new, statement] if self.kind == "insert_before" else [statement, new]
                continue
            if self.kind == "replace" and name == "TARGET":
                self.sites += 1
                statement.value.func.id = "NEW"
            if self.kind == "run" and name in ("MARK_A", "MARK_B"):
                self.sites += name == "MARK_A"
                statement.value.func.id = name + "2"
            out.append(statement)
        return out or [ast.Pass()]


def _expected(kind: str, source: str) -> "tuple[str, int]":
    tree = ast.parse(source)
    edit = _Edit(kind)
    tree = edit.visit(tree)
    return ast.dump(tree), edit.sites


def judge(case: Case) -> Optional[str]:
    """None when the output's AST is the intended change of the input's, or regraft refused."""
    output, failure = written(case)
    if output is None:
        return failure
    got = ast.dump(ast.parse(output))
    if got != case.facts["expected"]:
        return ("the output's AST is not the intended change\n--- input\n" + case.source +
                "\n--- output\n" + output)
    return None
