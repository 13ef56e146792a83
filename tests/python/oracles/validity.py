"""The validity oracle: statements CPython accepts only in some places — ``global`` and
``nonlocal`` (after a use, of a parameter, of an annotated name, without an enclosing
binding), ``return``/``yield``/``await``/``break``/``continue`` out of their context,
``from __future__`` below other statements — are inserted or replaced at generated places of
a module with docstrings. Whatever regraft writes, CPython's ``compile()`` must accept and the
module's, function's and class's docstrings must stay theirs; anything else must be refused.
"""

from __future__ import annotations

import ast
from typing import Dict, Optional

from . import Case, Chooser, written

RISKY = ["global X", "global p", "global a", "global fresh", "nonlocal a", "nonlocal p",
         "return 1", "yield 1", "await g(1)", "break", "continue", "from __future__ import division",
         "x: int = 1", "del X", "a = 1", "pass", "import os", "lambda: (yield)",
         "async with ctx(): pass", "async for i in ait(): pass", "return"]

ANCHORS = ["a = p", "a += i", "return a", "X = 1", "attr = 1", "import os", "return p",
           "from __future__ import annotations", "b = [a for a in p]", "c = p"]


def case(choose: Chooser) -> Case:
    """A module with docstrings and a rule writing a risky statement at an anchor."""
    future = choose.coin(0.5)
    module_doc = choose.coin(0.7)
    lines = []
    if module_doc:
        lines.append('"""Module doc."""')
    if future:
        lines.append("from __future__ import annotations")
    lines += ["import os", "", "X = 1", "", "",
              "def f(p, q: int = 0):",
              '    """Function doc."""',
              "    a = p",
              "    for i in range(2):",
              "        a += i",
              "    b = [a for a in p]",
              "    def inner():",
              "        c = p",
              "        return c",
              "    return a", "", "",
              "async def g(p):",
              '    """Async doc."""',
              "    return p", "", "",
              "class C:",
              '    """Class doc."""',
              "    attr = 1", "",
              "    def m(self):",
              "        return self.attr", ""]
    anchor = choose.pick(ANCHORS)
    statement = choose.pick(RISKY)
    action = choose.pick(["insert_before", "insert_after", "replace"])
    rule = (f"id: validity-oracle\nmatch: '{anchor}'\n"
            f"action: {{{action}: '{statement}'}}\n")
    return Case("\n".join(lines) + "\n", rule, facts={"anchor": anchor, "statement": statement,
                                                     "action": action})


def _docstrings(source: str) -> Dict[str, Optional[str]]:
    tree = ast.parse(source)
    out: Dict[str, Optional[str]] = {"module": ast.get_docstring(tree)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = ast.get_docstring(node)
    return out


def judge(case: Case) -> Optional[str]:
    """None when the output compiles and keeps its docstrings (or regraft refused)."""
    output, failure = written(case)
    if output is None:
        return failure
    before, after = _docstrings(case.source), _docstrings(output)
    moved = {k: (v, after.get(k)) for k, v in before.items() if after.get(k) != v}
    if moved:
        return f"docstrings displaced: {moved}\n--- output\n{output}"
    return None
