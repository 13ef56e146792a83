"""The package reads one way, like the crate: no module over ~600 lines, and no two of its
modules importing each other, directly or round a circle — lazy imports inside functions
included (the package's face, ``regraft/__init__.py``, which re-exports the rest, left out)."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "regraft"


def _imports(path: Path) -> set:
    """The sibling modules ``path`` imports anywhere in it (``from . import x``, ``from .x
    import y``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(alias.name for alias in node.names)
    return found


def test_no_module_is_over_600_lines():
    long = {p.name: n for p in PACKAGE.glob("*.py") if (n := len(p.read_text().splitlines())) > 620}
    assert not long, long


def test_no_two_modules_import_each_other_round_a_circle():
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    graph = {m: _imports(PACKAGE / f"{m}.py") & modules for m in modules}
    circles = []

    def visit(module, path):
        for next_module in sorted(graph[module]):
            if next_module in path:
                circles.append(path[path.index(next_module):] + [next_module])
            elif len(path) < len(modules):
                visit(next_module, path + [next_module])

    for module in sorted(modules):
        visit(module, [module])
    assert not circles, circles
