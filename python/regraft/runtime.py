"""Patching live objects: what runtime patchers call instead of getsource → regex → exec.

``patch(obj, rules)`` rewrites a class, function or method where it lives: the object's source
is read with its real line numbers (the enclosing class for a method, so class-level rules and
predicates see all of it), patched, compiled at the original line numbers under the name of a
file holding the patched text (``_sources``), and swapped in — a function's ``__code__`` (every
existing reference sees the patch), a class's methods one by one (the class object stays).
``install(rules, packages=[...])`` does the same for whole modules as they are imported.
"""

from __future__ import annotations

import ast
import dis
import hashlib
import inspect
import linecache
import sys
import types
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from . import _additions, _home, _sources
from ._sources import find as _find, lines_of as _lines_of, span as _span
from ._native import RegraftError

_MISSING = object()
_MARK = "__regraft__"


@dataclass
class PatchInfo:
    """What ``patched(obj)`` reports: the rules that changed it, and the inputs' identity."""

    rules: List[str]
    versions: Dict[str, str]
    source_hash: str
    """sha256 of the source that was patched (the object's, as it was read)."""


@dataclass
class Patch:
    """The handle ``patch()`` returns: what changed, and ``revert()``."""

    target: Any
    changed: bool
    rules: List[str]
    """Rules that edited the object."""
    already_applied: List[str]
    """Rules whose every match already had the patched shape (a second ``patch`` lists them)."""
    _source: Optional[str] = field(default=None, repr=False)
    _undo: List[Tuple[Any, ...]] = field(default_factory=list, repr=False)
    _lines: List[str] = field(default_factory=list, repr=False)

    @property
    def source(self) -> str:
        """The object's patched source (its original source when nothing changed, read when
        first asked for: a patch no rule selects never reads it)."""
        if self._source is None:
            self._source = inspect.getsource(_function(self.target) or self.target)
        return self._source

    def revert(self) -> None:
        """Restores exactly what was there before this patch: code, defaults, attributes and
        linecache. Reverting twice is a no-op."""
        # A function patched again since (by a later patch) cannot have this patch taken out
        # from under the later one: refused before anything changes.
        for entry in self._undo:
            if entry[0] == "code" and entry[1].__code__ is not entry[5]:
                raise RegraftError(f"{entry[1].__qualname__} was patched again after this patch: "
                                   "revert the later patch first")
        # What the module file's text must show as it was: functions given their code back,
        # methods this patch added.
        restored = [e[1].__qualname__ for e in self._undo if e[0] == "code"]
        removed = [f"{e[1].__qualname__}.{e[2]}" for e in self._undo
                   if e[0] == "attr" and isinstance(e[1], type) and e[3] is _MISSING]
        for entry in reversed(self._undo):
            kind = entry[0]
            if kind == "code":
                _, func, code, defaults, kwdefaults, _installed = entry
                func.__code__ = code
                func.__defaults__ = defaults
                func.__kwdefaults__ = kwdefaults
            elif kind == "linecache":
                _, filename, old, mine, before = entry
                _sources.unshow(filename, old, mine, before, restored, removed)
            elif kind == "attr":
                _, owner, name, old = entry
                if old is _MISSING:
                    delattr(owner, name)
                else:
                    setattr(owner, name, old)
            elif kind == "mark":
                # Only while this patch's mark is the one showing: a later patch keeps its own.
                _, owner, old, mine = entry
                if owner.__dict__.get(_MARK) is mine:
                    if old is _MISSING:
                        delattr(owner, _MARK)
                    else:
                        setattr(owner, _MARK, old)
        for name in self._lines:
            linecache.cache.pop(name, None)
        if any(entry[0] == "code" for entry in self._undo) and getattr(self, "_recompile", True):
            _invalidate_compiled()
        self._undo.clear()
        self._lines.clear()
        self.changed = False


def patched(obj: Any) -> Optional[PatchInfo]:
    """How ``obj`` was patched by regraft (``None`` if it was not)."""
    obj = _function(obj) or obj
    info = getattr(obj, _MARK, None)
    if info is None and isinstance(obj, types.FunctionType):
        info = getattr(obj.__code__, "co_filename", "")
        info = _INFO.get(info)
    return info


_INFO: Dict[str, PatchInfo] = {}
_COUNTER = [0]


def _function(obj: Any) -> Optional[types.FunctionType]:
    """The plain function behind a function, method, staticmethod or classmethod."""
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, types.MethodType):
        obj = obj.__func__
    obj = inspect.unwrap(obj) if callable(obj) else obj
    # A wrapper without `functools.wraps`: the function it holds in its closure.
    obj = _home.real_function(obj)
    return obj if isinstance(obj, types.FunctionType) else None


def _owner_class(module: types.ModuleType, qualname: str) -> Tuple[Optional[type], List[str]]:
    """The outermost class of a dotted ``qualname`` in ``module`` and the path inside it."""
    parts = [p for p in qualname.split(".") if p != "<locals>"]
    top = getattr(module, parts[0], None)
    if isinstance(top, type) and len(parts) > 1:
        return top, parts
    return None, parts


def _locate(obj: Any) -> Tuple[Any, types.ModuleType, str]:
    """What to read the source of for ``obj`` (its outermost class, for a method), its module,
    and the qualified path of ``obj``; reads no source."""
    func = _function(obj)
    target = func if func is not None else obj
    module = _home.module_of(target)  # where its code runs, not what `__module__` says
    if module is None:
        raise TypeError(f"cannot patch {obj!r}: it belongs to no module")
    qualname = getattr(target, "__qualname__", getattr(target, "__name__", ""))
    if "<locals>" in qualname:
        raise TypeError(
            f"cannot patch {qualname}: it is defined inside a function; patch that function"
        )
    owner, parts = _owner_class(module, qualname)
    return (owner if owner is not None else target), module, ".".join(parts)


_VERSIONS: Dict[Tuple[str, ...], Dict[str, str]] = {}


def _imported_versions(packages: Tuple[str, ...]) -> Dict[str, str]:
    """``installed_versions(packages)``, read once per process: a live object belongs to
    packages already imported, whose code an upgrade on disk does not change, and reading
    package metadata cost a third of a millisecond per package on every ``patch``."""
    known = _VERSIONS.get(packages)
    if known is None:
        from . import installed_versions

        known = _VERSIONS[packages] = installed_versions(list(packages))
    return dict(known)


def _module_file(module: types.ModuleType) -> str:
    return inspect.getsourcefile(module) or getattr(module, "__file__", "") or "<unknown>"


def patch(
    obj: Any,
    rules: Any,
    *,
    phase: Optional[str] = None,
    versions: Optional[Mapping[str, str]] = None,
    on_error: str = "raise",
    recompile: bool = True,
) -> Patch:
    """Patches a class, function or method in place with ``rules`` (a :class:`Rules`).

    The rules see the object's source at its real line numbers in its module file (so
    ``files`` globs select by that file and ``inside: {class: C}`` works on a method of ``C``),
    with the module's other sources as the signature context. The result is compiled with
    those line numbers under the name of a file that holds it, so tracebacks (with any
    handler, also after ``linecache.clearcache()``) and ``inspect.getsource`` show the patched
    text, and swapped in so existing references see it. Errors carry the
    module file's line numbers; ``on_error="warn"`` turns them into a ``RuntimeWarning`` and
    leaves the object as it was. With torch loaded, what ``torch.compile`` traced is reset when
    code is swapped (here and on ``revert``), so compiled callers run the patch too; pass
    ``recompile=False`` to keep compiled code as it is.
    """
    if on_error not in ("raise", "warn"):
        raise ValueError(f"on_error must be 'raise' or 'warn', not {on_error!r}")
    try:
        handle = _patch(obj, rules, phase, versions)
        handle._recompile = recompile
        if handle.changed and recompile:
            _invalidate_compiled()
        return handle
    except Exception as error:  # under "warn", nothing may escape into the patcher's import
        if on_error == "raise":
            raise
        warnings.warn(str(error), RuntimeWarning, stacklevel=2)
        return Patch(obj, False, [], [])


def _refuse_unpatchable(obj: Any, unit_obj: Any) -> None:
    """Objects whose methods cannot be swapped in place, refused before anything changes."""
    import enum

    if isinstance(unit_obj, type) and issubclass(unit_obj, enum.Enum):
        raise RegraftError(f"{unit_obj.__qualname__} is an Enum: its members are made once, "
                           "when the class is created; regraft does not patch Enums")
    if isinstance(unit_obj, type) and unit_obj.__module__ == "builtins":
        raise RegraftError(f"{unit_obj.__qualname__} is a built-in type: it has no source to patch")
    if not isinstance(obj, type) and _function(obj) is None:
        raise RegraftError(f"cannot patch {obj!r}: only classes, functions and methods can be patched")


def _patch(obj: Any, rules: Any, phase: Optional[str], versions: Optional[Mapping[str, str]]) -> Patch:
    rules = rules._enabled()
    if rules is None:  # REGRAFT_DISABLE turns every rule off
        return Patch(obj, False, [], [])
    unit_obj, module, path = _locate(obj)
    _refuse_unpatchable(obj, unit_obj)
    filename = _module_file(module)
    if versions is None:
        versions = _imported_versions(tuple(rules.packages))
    unit = path.split(".")[0]
    name = _home.import_name(module)
    if not rules._would_run(filename, versions, phase, unit, name):
        # Nothing would change: reading the source (inspect parses the whole module to find a
        # class) would cost most of the call.
        return Patch(obj, False, [], [])
    lines, first = _lines_of(unit_obj, filename)
    source, first = "".join(lines), max(first, 1)
    # The unit at its real line numbers: blank lines above it cost nothing to parse.
    padded = "\n" * (first - 1) + source
    module_source = "".join(linecache.getlines(filename)) or None
    # One run gives both the text and what each rule did.
    output, report, written = rules._apply_reporting(padded, filename, versions, phase, module_source,
                                                     name, unit)
    if not any(r.status in ("applied", "redundant") for r in report.rules):
        # Nothing changed and nothing was in place already: the source as read is the answer.
        return Patch(obj, False, [], [])
    tree = ast.parse(output)
    node = _find(tree, path.split("."))
    if node is None:
        raise RegraftError(f"{path}: after patching, no definition of `{path}` is left at "
                           f"{filename}:{first}; a rule replaced or renamed the definition itself")
    start, end = _span(node)
    out_lines = _sources.lines(output)
    new_source = "".join(out_lines[start - 1 : end])
    # Matches are reported at their lines in the text the rules ran on, where the unit may
    # stand elsewhere than in the output (an outline adds lines above it).
    before_tree = ast.parse(padded)
    in_start, in_end = _span(_find(before_tree, path.split(".")) or node)
    in_span = lambda m: in_start <= m.line <= in_end  # noqa: E731
    edited = [r.rule for r in report.rules if r.status == "applied" and any(in_span(m) for m in r.matches)]
    # Already applied means found so before this patch: a rule whose sites only an earlier
    # step of this very run put in shape (another rule of the pack did its job) is not listed.
    order = {"init": 0, "pre_compile": 1, "post_compile": 2}
    when = lambda r: (order.get(r.phase, 1), r.step)  # noqa: E731
    first_edit = min((when(r) for r in report.rules if r.rule in edited), default=None)
    already = [r.rule for r in report.rules if r.status == "redundant" and any(in_span(m) for m in r.matches)
               and (first_edit is None or when(r) <= first_edit)]
    handle = Patch(obj, False, edited, already, new_source)
    if not edited:
        return handle
    _COUNTER[0] += 1
    # Where no file can hold the patched text, names no file can have.
    fallback = f"{filename}<regraft:{path}:{_COUNTER[0]}>"
    info = PatchInfo(edited, dict(versions), hashlib.sha256(source.encode()).hexdigest())
    before = (_sources.lines(padded), before_tree)
    additions = _additions.added(tree, unit)
    _additions.check(additions, module, path)
    added_name = _sources.register(filename, name, output, fallback + "+")
    added_lines = out_lines
    handle._lines.append(added_name)
    if not isinstance(obj, type):
        # A method patched on its own changes that method alone: the text shown for the
        # class (tracebacks, `inspect.getsource`, the next patch's input) keeps its other
        # methods as they run, stock, or a later patch of one would find it already patched.
        out_lines, tree = _only_the_object(before, out_lines, tree, path)
        output = "".join(out_lines)
    # The patched text at the object's original line numbers, in a file of its own (see
    # `_sources`): tracebacks show it with any handler, also after `linecache.clearcache()`.
    name = _sources.register(filename, name, output, fallback)
    handle._lines.append(name)
    _INFO[name] = info
    try:
        # What the patched code calls exists before the patched code can run.
        made = _additions.compile_all(additions, added_lines, added_name, module,
                                      _future_flags(unit_obj))
        for attribute, value in made.items():
            handle._undo.append(("attr", module, attribute, _MISSING))
            setattr(module, attribute, value)
        _install(obj, before, (out_lines, tree), path, name, module, handle)
    except BaseException:
        handle.revert()
        _INFO.pop(name, None)
        raise
    # The module file's text shows the patch too, so `inspect.getsource` of the class (which
    # reads the module file) returns it to the next patcher.
    shown = _sources.show_in_module(filename, first, source, out_lines)
    if shown is not None:
        handle._undo.append(("linecache", filename, *shown, before[0]))
    handle.changed = True
    return handle


def _only_the_object(before: Tuple[List[str], ast.AST], out_lines: List[str], tree: ast.AST,
                     path: str) -> Tuple[List[str], ast.AST]:
    """The unit's text as read with the definition at ``path`` alone replaced by its patched
    text (and that text's tree)."""
    old_lines, old_tree = before
    parts = path.split(".")
    old_start, old_end = _span(_find(old_tree, parts))
    new_start, new_end = _span(_find(tree, parts))
    lines = old_lines[: old_start - 1] + out_lines[new_start - 1 : new_end] + old_lines[old_end:]
    return lines, ast.parse("".join(lines))


def _future_flags(unit_obj: Any) -> int:
    """The ``__future__`` flags the unit's module was compiled with, read off its code."""
    functions = [unit_obj] if not isinstance(unit_obj, type) else list(vars(unit_obj).values())
    for value in functions:
        code = getattr(_function(value), "__code__", None)
        if code is not None:
            return code.co_flags & _FUTURE_FLAGS
    return 0


_FUTURE_FLAGS = 0
for _feature in __import__("__future__").all_feature_names:
    _FUTURE_FLAGS |= getattr(__import__("__future__"), _feature).compiler_flag


def _text(lines: List[str], node: ast.AST) -> str:
    """The source lines of a statement (its decorators included)."""
    first, last = _span(node)
    return "".join(lines[first - 1 : last])


def _compile_def(node: ast.AST, lines: List[str], tree: ast.AST, parts: Sequence[str], name: str,
                 module: types.ModuleType, flags: int, decorated: bool) -> Any:
    """The function ``node`` (in ``lines``, whose module tree is ``tree``) defines, compiled at
    its own line numbers inside empty classes of its owners' names (``parts``), so ``super()``
    and ``__class__`` resolve as in the original and its closure has the same shape. Its
    decorators are left out unless ``decorated``: a patch must not run them a second time on a
    live object. Only the ``def`` runs (its defaults are evaluated), never a class body."""
    header = "".join(
        " " * _find(tree, parts[: i + 1]).col_offset + f"class {p}:\n" for i, p in enumerate(parts)
    )
    first = _span(node)[0] if decorated else node.lineno
    body = "".join(lines[first - 1 : node.end_lineno])
    pad = max(first - 1 - header.count("\n"), 0)
    code = compile("\n" * pad + header + body, name, "exec", flags=flags, dont_inherit=True)
    namespace: Dict[str, Any] = {}
    exec(code, module.__dict__, namespace)
    value: Any = namespace
    for part in parts:
        value = vars(value[part])
    return value[node.name]


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    """Whether two codes were compiled from the same text at the same lines (the first line
    aside, and the instruction at it: a decorated function's code starts at its first
    decorator)."""
    # dis.findlinestarts, not co_lines: CPython 3.9 has no co_lines.
    lines = lambda c: [line for _, line in dis.findlinestarts(c)][1:]  # noqa: E731
    if (a.co_code, a.co_names, a.co_varnames, lines(a)) != (
            b.co_code, b.co_names, b.co_varnames, lines(b)):
        return False
    # Constants too (`f(1)` edited to `f(2)` on disk compiles to the same instructions), and
    # nested code (lambdas, comprehensions, inner functions) the same way.
    if len(a.co_consts) != len(b.co_consts):
        return False
    for x, y in zip(a.co_consts, b.co_consts):
        if isinstance(x, types.CodeType) and isinstance(y, types.CodeType):
            if not _same_code(x, y):
                return False
        elif type(x) is not type(y) or (x != y and repr(x) != repr(y)):  # repr: nan != nan
            return False
    return True


def _import_names(tree: ast.AST) -> List[str]:
    """The names the module binds by import in its own scope (also under ``if``/``try``)."""
    names: List[str] = []
    stack = list(getattr(tree, "body", []))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":
                    names.append(alias.asname or alias.name.split(".")[0])
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return names


_IMPORTS: Dict[Tuple[str, int], List[str]] = {}


def _module_import_names(module: types.ModuleType) -> List[str]:
    """``_import_names`` of the module's file as it reads now, parsed once per text."""
    filename = getattr(module, "__file__", None) or ""
    text = "".join(linecache.getlines(filename))
    key = (filename, hash(text))
    if key not in _IMPORTS:
        try:
            _IMPORTS[key] = sorted(set(_import_names(ast.parse(text))))
        except SyntaxError:
            _IMPORTS[key] = []
    return _IMPORTS[key]


def _fresh_code(node: ast.AST, lines: List[str], tree: ast.AST, parts: Sequence[str],
                flags: int, names: Sequence[str]) -> Optional[types.CodeType]:
    """The code ``node`` compiles to in its module, compiled (never run) at its own lines with
    the module's imported names declared: CPython 3.11 compiles ``mod.f(...)`` on an imported
    name differently (no method-call form), so the live code is matched only with them."""
    header = "".join(
        " " * _find(tree, parts[: i + 1]).col_offset + f"class {p}:\n" for i, p in enumerate(parts)
    )
    body = "".join(lines[node.lineno - 1 : node.end_lineno])
    pad = node.lineno - 1 - header.count("\n")
    imports = f"import {', '.join(names)}\n" if names and pad >= 1 else ""
    text = imports + "\n" * (pad - imports.count("\n")) + header + body
    code = compile(text, "<regraft-check>", "exec", flags=flags, dont_inherit=True)
    for name in list(parts) + [node.name]:
        code = next((c for c in code.co_consts if isinstance(c, types.CodeType) and c.co_name == name), None)
        if code is None:
            return None
    return code


def _check_live(live: types.FunctionType, node: ast.AST, lines: List[str], tree: ast.AST,
                parts: Sequence[str], module: types.ModuleType) -> None:
    """Refuses when the live function is not what its source (as read now) compiles to: the
    file changed on disk after import, or something else swapped the code in."""
    names = sorted(set(_import_names(tree)) | set(_module_import_names(module)))
    fresh = _fresh_code(node, lines, tree, parts, live.__code__.co_flags & _FUTURE_FLAGS, names)
    if fresh is None or not _same_code(live.__code__, fresh):
        raise RegraftError(
            f"{live.__qualname__}: the running code is not what its source file says (the file "
            "changed after it was imported, or something else replaced the code): refusing to "
            "patch it from that source"
        )


def _install(obj: Any, before: Tuple[List[str], ast.AST], after: Tuple[List[str], ast.AST],
             path: str, name: str, module: types.ModuleType, handle: Patch) -> None:
    """Swaps the patched definition into the live object. A function gets new code (and new
    defaults where its parameters changed); a class gets that for each method that changed, and
    new methods added; the class body is never run again (decorators, ``__init_subclass__``,
    metaclass hooks, registries and class attributes keep what they did once). Everything is
    compiled and checked before anything is changed."""
    parts = path.split(".")
    old_lines, old_tree = before
    new_lines, new_tree = after
    old_node, new_node = _find(old_tree, parts), _find(new_tree, parts)
    changes: List[Tuple[str, Any, Any]] = []
    if not isinstance(obj, type):
        live = _function(obj)
        _check_live(live, old_node, old_lines, old_tree, parts[:-1], module)
        fresh = _compile_def(new_node, new_lines, new_tree, parts[:-1], name, module,
                             live.__code__.co_flags & _FUTURE_FLAGS, decorated=False)
        same_params = ast.dump(old_node.args) == ast.dump(new_node.args)
        changes.append(("code", live, (fresh, same_params)))
    else:
        changes = _class_changes(obj, old_node, new_node, before, after, parts, name, module)
    for kind, target, value in changes:
        if kind == "code":
            fresh, same_params = value
            _swap(target, _function(fresh), handle, keep_defaults=same_params)
        else:
            handle._undo.append(("attr", obj, target, _MISSING))
            setattr(obj, target, value)
    if isinstance(obj, type):
        handle._undo.append(("mark", obj, obj.__dict__.get(_MARK, _MISSING), _INFO[name]))
        setattr(obj, _MARK, _INFO[name])


def _class_changes(obj: type, old_node: ast.ClassDef, new_node: ast.ClassDef,
                   before: Tuple[List[str], ast.AST], after: Tuple[List[str], ast.AST],
                   parts: Sequence[str], name: str, module: types.ModuleType) -> List[Tuple[str, Any, Any]]:
    """What patching class ``obj`` changes, method by method; refuses what cannot be done
    without running the class body again."""
    old_lines, old_tree = before
    new_lines, new_tree = after
    defs = (ast.FunctionDef, ast.AsyncFunctionDef)
    if _header(old_node, old_lines) != _header(new_node, new_lines):
        raise RegraftError(f"{'.'.join(parts)}: the patch changes the class statement (its "
                           "decorators or bases); a class is never created again: patch its methods")
    old_other = [_text(old_lines, n) for n in old_node.body if not isinstance(n, defs)]
    new_other = [_text(new_lines, n) for n in new_node.body if not isinstance(n, defs)]
    if old_other != new_other:
        raise RegraftError(f"{'.'.join(parts)}: the patch changes class-level statements other "
                           "than methods; running the class body again would run its side effects "
                           "twice: write the rule to edit methods")
    old_defs = {n.name: n for n in old_node.body if isinstance(n, defs)}
    new_defs = {n.name: n for n in new_node.body if isinstance(n, defs)}
    gone = sorted(set(old_defs) - set(new_defs))
    if gone:
        raise RegraftError(f"{'.'.join(parts)}: the patch removes method(s) {', '.join(gone)}")
    changes: List[Tuple[str, Any, Any]] = []
    for method, node in new_defs.items():
        old = old_defs.get(method)
        if old is not None and _text(old_lines, old) == _text(new_lines, node):
            continue
        live_attr = obj.__dict__.get(method, _MISSING)
        if old is None or live_attr is _MISSING:
            fresh = _compile_def(node, new_lines, new_tree, parts, name, module, 0, decorated=True)
            changes.append(("attr", method, fresh))
            continue
        live = _function(live_attr)
        expected = f"{'.'.join(parts)}.{method}"
        if live is not None:
            live = _home.real_function(live, expected)
            if _home._written(live) != expected:
                code = live.__code__
                raise RegraftError(
                    f"{expected}: the class holds `{_home._written(live)}` "
                    f"({code.co_filename}:{code.co_firstlineno}), a wrapper that hides the "
                    "method without `functools.wraps`, and no function of "
                    f"`{expected}` is in its closure: refusing to patch it")
        if live is None:
            raise RegraftError(f"{'.'.join(parts)}.{method} is not a plain function at run time "
                               f"({type(live_attr).__name__}): it cannot be patched in place")
        if _header(old, old_lines) != _header(node, new_lines):
            raise RegraftError(f"{'.'.join(parts)}.{method}: the patch changes its decorators, "
                               "which would have to run again")
        flags = live.__code__.co_flags & _FUTURE_FLAGS
        _check_live(live, old, old_lines, old_tree, parts, module)
        fresh = _compile_def(node, new_lines, new_tree, parts, name, module, flags, decorated=False)
        same_params = ast.dump(old.args) == ast.dump(node.args)
        changes.append(("code", live, (fresh, same_params)))
    return changes


def _header(node: ast.AST, lines: List[str]) -> str:
    """A definition's decorators and header line up to its body, as text."""
    first = _span(node)[0]
    return "".join(lines[first - 1 : node.body[0].lineno - 1]) if node.body else ""


def _same_value(old: Any, new: Any) -> bool:
    try:
        return bool(old == new)
    except Exception:
        return False


def _compatible(old: types.FunctionType, new: types.FunctionType) -> bool:
    return old.__code__.co_freevars == new.__code__.co_freevars


def _invalidate_compiled() -> None:
    """Resets what ``torch.compile`` traced, where torch is loaded: Dynamo inlines a called
    method and guards on the function object, not on its ``__code__``, so a compiled caller
    would keep running the code swapped out (measured: a patched ``self.sub(x)`` kept stock
    under a compiled model, and a revert kept the patch)."""
    torch = sys.modules.get("torch")
    reset = getattr(getattr(torch, "_dynamo", None), "reset", None)
    if callable(reset):
        reset()


def _swap(old: types.FunctionType, new: Optional[types.FunctionType], handle: Patch,
          keep_defaults: bool = False) -> None:
    """Gives ``old`` the code of ``new`` (and its defaults, unless ``keep_defaults``: defaults
    written the same keep their objects), so every reference sees the patch."""
    if new is None or not _compatible(old, new):
        raise RegraftError(
            f"{old.__qualname__}: the patched code's free variables "
            f"{getattr(new, '__code__', None) and new.__code__.co_freevars} do not match the "
            f"original's {old.__code__.co_freevars}: patch the enclosing function instead"
        )
    handle._undo.append(("code", old, old.__code__, old.__defaults__, old.__kwdefaults__, new.__code__))
    old.__code__ = new.__code__
    if not keep_defaults:
        old.__defaults__ = new.__defaults__
        old.__kwdefaults__ = new.__kwdefaults__


# ---------------------------------------------------------------------------------------------
# The import hook


# The import hook lives in `_hook`; its names stay importable from here.
from ._hook import Hook, install, uninstall  # noqa: E402,F401
