"""Module-level definitions a patch adds beside the unit it patches (an ``outline``'s new
function): checked before anything changes, compiled at their lines in the patched text, and
set on the module; ``Patch.revert`` removes them. Anything else a rule writes at module level
cannot be made live without running module code again, and is refused."""

from __future__ import annotations

import ast
import types
from typing import Any, Dict, List

from ._native import RegraftError

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def added(tree: ast.Module, unit: str) -> List[ast.stmt]:
    """The top-level statements of the patched text (the unit alone, as read) other than the
    unit itself."""
    return [node for node in tree.body
            if not (isinstance(node, (*_DEFS, ast.ClassDef)) and node.name == unit)]


def check(nodes: List[ast.stmt], module: types.ModuleType, path: str) -> None:
    """Refuses what cannot be installed, before anything changes."""
    for node in nodes:
        if not isinstance(node, _DEFS):
            raise RegraftError(
                f"{path}: a rule writes module-level code beside it ({type(node).__name__} at "
                f"line {node.lineno}); regraft.patch makes only new module-level functions live: "
                "patch the file (`regraft apply`) or use the import hook")
        if node.name in vars(module):
            raise RegraftError(
                f"{path}: a rule adds the module-level function `{node.name}`, which "
                f"{module.__name__} already has: it would be replaced")


def compile_all(nodes: List[ast.stmt], lines: List[str], name: str, module: types.ModuleType,
                flags: int) -> Dict[str, Any]:
    """Each added function, compiled at its own lines under the linecache ``name`` and made
    with the module as its globals (its decorators run now, as a new function's do)."""
    made: Dict[str, Any] = {}
    for node in nodes:
        first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        text = "".join(lines[first - 1 : node.end_lineno])
        code = compile("\n" * (first - 1) + text, name, "exec", flags=flags, dont_inherit=True)
        namespace: Dict[str, Any] = {}
        exec(code, module.__dict__, namespace)
        made[node.name] = namespace[node.name]
    return made
