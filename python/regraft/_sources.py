"""Where patched code says it comes from: a file on disk holding the patched text.

Code compiled from patched text has to name a file. Registering a made-up name in
``linecache`` alone is not enough for what a user quotes from a traceback: CPython 3.9 to 3.12
print an uncaught exception in C, reading the line from the file on disk (never from
``linecache``), and ``linecache.clearcache()`` drops every registered entry, after which a
name that is the module's own file reads the *stock* line back from disk. So the patched text
is written to a file, and the code is compiled under that file's name: every reader — the
default ``sys.excepthook``, ``traceback`` after ``clearcache``, ``inspect.getsource`` — finds
the text that runs.

The files live in a folder private to the user (``regraft-<uid>`` in the temporary folder,
mode 700, refused if another user owns it or can write it; then a folder of this process,
removed when it exits). A file is named by a digest of its original path and its text,
followed by the module's own path (``<digest>/transformers/models/x/modeling_x.py``), so a
traceback still says which module it is, the same text is written once for every process
that patches it (a spawned worker finds the parent's file), and code cached as bytecode keeps
naming a file that exists. The text is written to a fresh file and renamed into place, so a
reader sees all of it or nothing. Nothing here calls user code: it takes one lock, only
around choosing the folder.

The module file's own ``linecache`` text is kept here too: ``inspect.getsource`` of a class
reads the module file, so ``patch`` puts the patched class into that text (``show_in_module``)
and ``revert`` takes it out again (``unshow``), also from under a later patch's text.
"""

import ast
import atexit
import hashlib
import inspect
import io
import linecache
import os
import re
import shutil
import stat
import sys
import tempfile
import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ._cache import _owner_ok

_LOCK = threading.Lock()
_ROOT: List[Optional[str]] = []
"""The folder, once chosen (``None`` where none can be made: names are then not files)."""

# PEP 263: a coding declaration on one of the first two lines.
_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.ASCII)


def _private(folder: str) -> bool:
    """Whether ``folder`` exists as a real folder of this user's that nobody else can write."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and _owner_ok(info) is None


def _choose_root() -> Optional[str]:
    """The user's shared folder if it is safe to write to, else one of this process's own."""
    if hasattr(os, "geteuid"):
        shared = os.path.join(tempfile.gettempdir(), f"regraft-{os.geteuid()}")
        try:
            os.mkdir(shared, 0o700)
        except OSError:
            pass
        if _private(shared):
            return shared
    # Another user made the shared folder first (or it cannot be made, or there are no user
    # ids to tell whose it is): a folder of this process's own.
    try:
        own = tempfile.mkdtemp(prefix="regraft-sources-")
    except OSError:
        return None
    atexit.register(_remove, own, os.getpid())
    return own


def _remove(folder: str, owner: int) -> None:
    if os.getpid() == owner:  # a forked child leaves the folder to its parent
        shutil.rmtree(folder, True)


def root() -> Optional[str]:
    """The folder patched texts are written to, chosen once per process."""
    if not _ROOT:
        with _LOCK:
            if not _ROOT:
                _ROOT.append(_choose_root())
    return _ROOT[0]


def _relative(origin: str, module: str) -> str:
    """The module's own path (``pkg/sub/mod.py``) from its dotted name and file name."""
    base = os.path.basename(origin) or "source.py"
    parts = [p if p.isidentifier() else "_" for p in module.split(".") if p]
    folders = parts if base.startswith("__init__.") else parts[:-1]
    return os.path.join(*folders, base)


def _encoded(text: str) -> bytes:
    """The text as bytes a reader decodes back to it: in the encoding its coding line declares
    (a module's own declaration), where that can hold it, else UTF-8 declared so."""
    head = text.split("\n", 2)[:2]
    for i, line in enumerate(head):
        found = _COOKIE.match(line)
        if found:
            try:
                return text.encode(found.group(1))
            except (LookupError, UnicodeEncodeError):
                head[i] = "# -*- coding: utf-8 -*-"
                return "\n".join(head + text.split("\n", 2)[2:]).encode("utf-8")
        if not line.strip().startswith("#") and line.strip():
            break
    return text.encode("utf-8")


def _write(path: str, data: bytes) -> bool:
    """Puts ``data`` at ``path`` unless a file of that size is there already (the name is a
    digest of the text, in a folder nobody else can write)."""
    try:
        info = os.lstat(path)
        if stat.S_ISREG(info.st_mode) and info.st_size == len(data):
            return True
    except OSError:
        pass
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, 0o700, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    except OSError:
        return False
    try:
        with os.fdopen(descriptor, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
        return True
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return False


def lines(text: str) -> List[str]:
    """``text`` cut into lines where Python's compiler and ``linecache`` cut them (``\\n``,
    ``\\r\\n``, ``\\r``): ``str.splitlines`` also cuts at a form feed and other separators,
    which would put every later line at the wrong number."""
    return io.StringIO(text, newline="").readlines()


_ORIGINS: Dict[str, str] = {}
"""The file each name code was compiled under stands for (see ``register``)."""


def origin_of(filename: str) -> str:
    """The file a code object's ``co_filename`` stands for: itself, or for patched code the
    module file whose text was patched."""
    return _ORIGINS.get(filename, filename)


def line_starts(text: str) -> List[int]:
    """The ``str`` index each line of ``text`` starts at (lines end at ``\\n``)."""
    starts = [0]
    at = text.find("\n")
    while at != -1:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    return starts


def register(origin: str, module: str, text: str, fallback: str,
             text_lines: Optional[List[str]] = None) -> str:
    """The file name to compile ``text`` (patched code of ``module``, read from ``origin``)
    under: a file holding ``text``, also registered in ``linecache`` (as ``text_lines``, its
    ``lines``, where the caller has them). Where no file can be written, ``fallback`` —
    registered in ``linecache`` alone, so tracebacks show the text until the cache is
    cleared."""
    folder = root()
    name = fallback
    if folder is not None:
        digest = hashlib.sha256(f"{origin}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()
        path = os.path.join(folder, digest[:16], _relative(origin, module))
        if _write(path, _encoded(text)):
            name = path
    # mtime None: `linecache.checkcache` keeps the entry even if a temporary-folder cleaner
    # removes the file while the process runs.
    linecache.cache[name] = (len(text), None, lines(text) if text_lines is None else text_lines, name)
    _ORIGINS[name] = origin
    return name


def find(tree: ast.AST, path: Sequence[str]) -> Optional[ast.AST]:
    """The definition at dotted ``path`` among the tree's (nested) class and def statements."""
    node: ast.AST = tree
    for name in path:
        found = None
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and child.name == name:
                found = child
        if found is None:
            return None
        node = found
    return node


def span(node: ast.AST) -> Tuple[int, int]:
    """First and last line of a definition, decorators included."""
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return first, node.end_lineno or node.lineno


_LOCATED: Dict[Tuple[str, str, Optional[int]], Tuple[List[str], List[str], int]] = {}
_CLASS_LINES: Dict[str, Tuple[List[str], Dict[str, int]]] = {}


def _class_index(filename: str, module_lines: List[str]) -> Dict[str, int]:
    """Where each class of the module starts (0-based, at its first decorator), by qualname —
    the first definition in document order, as ``inspect.findsource`` picks on CPython 3.9–3.12
    — from one parse of the module while its linecache text is the same list: ``inspect``
    parses the whole module again for every class (38 classes of one module: 38 parses, 90% of
    patching them all)."""
    known = _CLASS_LINES.get(filename)
    if known is not None and known[0] is module_lines:
        return known[1]
    # Installing a patch gives the module a new text; one of as many lines (patches keep line
    # numbers) mostly keeps every class where it was: the caller checks the line it is given.
    if known is not None and len(known[0]) == len(module_lines):
        return known[1]
    index: Dict[str, int] = {}

    def walk(node: ast.AST, stack: List[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                walk(child, stack + [child.name, "<locals>"])
            elif isinstance(child, ast.ClassDef):
                path = stack + [child.name]
                first = child.decorator_list[0].lineno if child.decorator_list else child.lineno
                index.setdefault(".".join(path), first - 1)
                walk(child, path)
            else:
                walk(child, stack)

    try:
        walk(ast.parse("".join(module_lines)), [])
    except (SyntaxError, ValueError):
        index = {}
    _CLASS_LINES[filename] = (module_lines, index)
    return index


def _starts_class(lines: List[str], start: int, name: str) -> bool:
    """Whether the class ``name`` starts at line ``start`` (0-based; at its decorators, which
    may span lines)."""
    if start >= len(lines):
        return False
    margin = len(lines[start]) - len(lines[start].lstrip())
    for line in lines[start:start + 200]:
        text = line.strip()
        indent = len(line) - len(line.lstrip())
        if not text or text.startswith("#") or indent > margin or text.startswith((")", "]", "}")):
            continue
        if indent < margin:
            return False
        if text.startswith("@"):
            continue
        rest = text[len("class"):] if text.startswith("class") else ""
        return rest[:1] in (" ", "\t") and re.match(r"\s*" + re.escape(name) + r"\b", rest) is not None
    return False


def lines_of(unit: Any, filename: str) -> Tuple[List[str], int]:
    """``inspect.getsourcelines(unit)``, remembered for a class while its module's linecache
    text is the same list, and found from one parse of the module for all its classes (see
    ``_class_index``). (A function is looked up each time: its code, and so its lines, change
    when it is patched.)"""
    if not isinstance(unit, type):
        return inspect.getsourcelines(unit)
    module_lines = linecache.getlines(filename)
    # Python 3.13 records where a class starts, so two classes of one name in one module (the
    # branches of an `if`) are told apart, as inspect tells them apart.
    key = (filename, unit.__qualname__, getattr(unit, "__firstlineno__", None))
    known = _LOCATED.get(key)
    if known is not None and known[0] is module_lines:
        return known[1], known[2]
    recorded = vars(unit).get("__firstlineno__")
    if sys.version_info >= (3, 13) and recorded is not None:
        # Where the class says it starts, in the file its code is in: `inspect` would read the
        # file of the module `__module__` names, which may be another (see `_home`). (Setting
        # `__module__` drops `__firstlineno__`: the class is then found as before 3.13.)
        start = recorded - 1
        if start < 0 or not _starts_class(module_lines, start, unit.__name__):
            start = None
    else:
        start = _class_index(filename, module_lines).get(unit.__qualname__)
        if start is not None and not _starts_class(module_lines, start, unit.__name__):
            _CLASS_LINES.pop(filename, None)
            start = _class_index(filename, module_lines).get(unit.__qualname__)
    if start is not None and module_lines:
        found, first = inspect.getblock(module_lines[start:]), start + 1
    else:
        found, first = inspect.getsourcelines(unit)
    _LOCATED[key] = (module_lines, found, first)
    return found, first


Entry = Tuple[int, Optional[float], List[str], str]


def show_in_module(filename: str, first: int, source: str,
                   out_lines: List[str]) -> Optional[Tuple[Optional[Entry], Entry]]:
    """Puts a patched unit (``source`` as read at line ``first``, ``out_lines`` patched at the
    same lines) into the module file's linecache text, which is what ``inspect.getsource`` of a
    class reads; the entry there before and the one put, for ``unshow``. Lines after the unit
    move if the patch added lines."""
    module_lines = linecache.getlines(filename)
    if not module_lines:
        return None
    unit_len = len(lines(source))
    merged = module_lines[: first - 1] + out_lines[first - 1 :] + module_lines[first - 1 + unit_len :]
    old = linecache.cache.get(filename)
    entry = (sum(map(len, merged)), None, merged, filename)
    linecache.cache[filename] = entry
    return old, entry


def unshow(filename: str, old: Optional[Entry], mine: Entry, before: List[str],
           restored: Sequence[str], removed: Sequence[str]) -> None:
    """Undoes ``show_in_module`` for a patch being reverted. While the patch's own text is the
    module's entry, the entry before it comes back. Where a later patch put its text there, that
    text was made from this patch's and still holds its edits: each function given its code back
    (dotted paths in ``restored``) gets its text from ``before`` (what the patch read) again, and
    each method the patch added (``removed``) leaves it, so the text never shows a patched line
    for code that runs stock."""
    current = linecache.cache.get(filename)
    if current is mine:
        if old is None:
            linecache.cache.pop(filename, None)
        else:
            linecache.cache[filename] = old
        return
    # None: cleared; a real mtime: read from the file since; either way not regraft's text.
    if current is None or len(current) != 4 or current[1] is not None:
        return
    text = list(current[2])
    try:
        now_tree, before_tree = ast.parse("".join(text)), ast.parse("".join(before))
    except SyntaxError:
        return
    edits = []
    for path in restored:
        now, then = find(now_tree, path.split(".")), find(before_tree, path.split("."))
        if now is not None and then is not None:
            start, end = span(then)
            edits.append((span(now), before[start - 1 : end]))
    for path in removed:
        now = find(now_tree, path.split("."))
        if now is not None:
            edits.append((span(now), []))
    # From the bottom up, so the spans above stay where they were found.
    for (start, end), replacement in sorted(edits, key=lambda e: e[0], reverse=True):
        text[start - 1 : end] = replacement
    linecache.cache[filename] = (sum(map(len, text)), None, text, filename)
