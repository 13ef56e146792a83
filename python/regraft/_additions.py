"""Module-level definitions and imports a patch adds beside the unit it patches (an
``outline``'s new function, a rule's ``imports``): checked before anything changes, compiled
at their lines in the patched text (an import executed), and set on the module; ``Patch.revert``
removes them. An import whose name the module already binds to the same object adds nothing;
to another object, it is refused. Anything else a rule writes at module level cannot be made
live without running module code again, and is refused."""

from __future__ import annotations

import ast
import types
from typing import Any, Dict, List

from ._native import RegraftError

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_IMPORTS = (ast.Import, ast.ImportFrom)


def added(tree: ast.Module, unit: str) -> List[ast.stmt]:
    """The top-level statements of the patched text (the unit alone, as read) other than the
    unit itself."""
    return [node for node in tree.body
            if not (isinstance(node, (*_DEFS, ast.ClassDef)) and node.name == unit)]


def check(nodes: List[ast.stmt], module: types.ModuleType, path: str) -> None:
    """Refuses what cannot be installed, before anything changes."""
    for node in nodes:
        if isinstance(node, _IMPORTS):
            continue
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
        decorators = getattr(node, "decorator_list", None)
        first = decorators[0].lineno if decorators else node.lineno
        text = "".join(lines[first - 1 : node.end_lineno])
        code = compile("\n" * (first - 1) + text, name, "exec", flags=flags, dont_inherit=True)
        namespace: Dict[str, Any] = {}
        exec(code, module.__dict__, namespace)
        if isinstance(node, _DEFS):
            made[node.name] = namespace[node.name]
            continue
        for bound, value in namespace.items():
            present = vars(module).get(bound, _ABSENT)
            if present is value:
                continue
            if present is not _ABSENT:
                raise RegraftError(
                    f"a rule needs `{ast.get_source_segment(''.join(lines), node) or text.strip()}`, "
                    f"but {module.__name__} binds `{bound}` to something else: adding it would "
                    "shadow that binding")
            made[bound] = value
    return made


_ABSENT = object()
