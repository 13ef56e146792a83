"""The module a live object's code belongs to: the one whose file holds its code, whether or
not its ``__module__`` names it.

Libraries re-home objects under their public name (numpy's ``set_module``, a package's
``__init__`` setting ``f.__module__ = __name__``), and a module run with ``python -m`` is
``__main__``. Selected by ``__module__`` alone, a rule written for the file the code is in
would miss in silence, a rule for the named module's file would run on code that file does
not hold, and a patched function would be compiled against another module's names. So the
module ``__module__`` names is taken where its file holds the object's code, else the module
whose namespace the code runs in (its functions' ``__globals__``) where that one's file holds
it; where neither does (a module run by ``runpy`` and gone, one removed from ``sys.modules``,
a function made from another file's code), ``patch`` refuses rather than guess.
"""

import inspect
import linecache
import os
import re
import sys
import types
from typing import Any, Iterator, List, Optional

from . import _sources
from ._native import RegraftError


def _functions(obj: Any) -> Iterator[types.FunctionType]:
    """The plain functions whose code is ``obj``'s own: itself, or those its class body
    defined (unwrapped from decorators that keep ``__wrapped__``; one assigned from elsewhere
    carries another ``__qualname__``), nested classes' too."""
    if isinstance(obj, types.FunctionType):
        yield obj
        return
    if not isinstance(obj, type):
        return
    prefix = obj.__qualname__ + "."
    for value in vars(obj).values():
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        elif isinstance(value, property):
            value = value.fget
        if isinstance(value, type) and value.__qualname__.startswith(prefix):
            yield from _functions(value)
            continue
        try:
            value = inspect.unwrap(value) if callable(value) else value
        except ValueError:  # a cycle of `__wrapped__`
            continue
        # The code's own qualified name where there is one (3.11+): `functools.wraps` and
        # `namedtuple` rewrite `__qualname__`, not the code's. A wrapper without `wraps`
        # holds the method in its closure.
        if isinstance(value, types.FunctionType):
            value = real_function(value, None) if not _written(value).startswith(prefix) else value
            if _written(value).startswith(prefix):
                yield value


def _written(function: types.FunctionType) -> str:
    """The qualified name its code was written under (3.11+ keeps it on the code:
    ``functools.wraps`` rewrites the function's ``__qualname__``, not the code's)."""
    return getattr(function.__code__, "co_qualname", function.__qualname__)


def real_function(function: Any, expected: Optional[str] = None) -> Any:
    """The function whose code is ``expected`` (a qualified name; without one, any not
    written inside another function) behind ``function``: itself, or one held in its closure,
    at any depth, where a decorator wrapped it without ``functools.wraps`` (so no
    ``__wrapped__`` leads there). ``function`` itself where none is found: the caller refuses."""
    if not isinstance(function, types.FunctionType):
        return function

    def own(f: types.FunctionType) -> bool:
        return _written(f) == expected if expected else "<locals>" not in _written(f)

    if own(function):
        return function
    seen = set()
    stack = [function]
    while stack:
        f = stack.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        for cell in f.__closure__ or ():
            try:
                value = cell.cell_contents
                value = inspect.unwrap(value) if callable(value) else value
            except ValueError:  # an empty cell, or a cycle of `__wrapped__`
                continue
            if isinstance(value, types.FunctionType):
                if own(value):
                    return value
                stack.append(value)
    return function


def _file(module: Optional[types.ModuleType]) -> Optional[str]:
    if module is None:
        return None
    try:
        found = inspect.getsourcefile(module) or getattr(module, "__file__", None)
    except TypeError:  # a built-in module
        return None
    return found if isinstance(found, str) else None


def _same(a: str, b: str) -> bool:
    return a == b or os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


def _code_file(function: types.FunctionType) -> str:
    """The file ``function``'s code was read from (a patched module's code names a file of
    regraft's own: its original is given)."""
    return _sources.origin_of(function.__code__.co_filename)


def _defines_class(module: types.ModuleType, name: str) -> bool:
    """Whether the module's file has a ``class name`` statement."""
    path = _file(module)
    pattern = re.compile(r"\s*class\s+" + re.escape(name) + r"\b")
    return bool(path) and any(pattern.match(line) for line in linecache.getlines(path))


def _module_with(namespace: dict) -> Optional[types.ModuleType]:
    """The imported module whose namespace is ``namespace``."""
    name = namespace.get("__name__")
    module = sys.modules.get(name) if isinstance(name, str) else None
    if isinstance(module, types.ModuleType) and module.__dict__ is namespace:
        return module
    # Imported under another name (`python -m pkg.mod` is `__main__`; an alias).
    for module in list(sys.modules.values()):
        if isinstance(module, types.ModuleType) and module.__dict__ is namespace:
            return module
    return None


def module_of(obj: Any) -> Optional[types.ModuleType]:
    """The module ``obj`` (a function, or a class) was written in (see the module's doc);
    ``None`` where it belongs to none. Raises ``RegraftError`` where its code is in a file no
    imported module it could belong to is read from."""
    nominal = inspect.getmodule(obj)
    if isinstance(obj, type) and "__firstlineno__" in vars(obj):
        # 3.13 keeps where a class starts until `__module__` is set: never re-homed.
        return nominal
    functions = list(_functions(obj))
    candidates: List[types.ModuleType] = [nominal] if nominal is not None else []
    for function in functions:
        home = _module_with(function.__globals__)
        if home is not None and all(home is not c for c in candidates):
            candidates.append(home)
    for module in candidates:
        path = _file(module)
        if path and any(_same(_code_file(f), path) for f in functions):
            return module
    # No function of its own in any of their files (a class without methods, or whose
    # methods are all generated or borrowed): the module whose file defines the class.
    name = getattr(obj, "__qualname__", repr(obj))
    if isinstance(obj, type):
        for module in candidates:
            if _defines_class(module, obj.__name__):
                return module
        if not functions and _file(nominal):
            raise RegraftError(
                f"cannot patch {name}: no function of its own says which file it was written "
                f"in, and {_file(nominal)} (of `__module__` {nominal.__name__!r}) has no "
                f"`class {obj.__name__}`: regraft does not guess which file rules should see")
    if not functions:
        return nominal
    files = sorted({_code_file(f) for f in functions})
    raise RegraftError(
        f"cannot patch {name}: its code is in {files[0]}, which is not the file of the module "
        f"its `__module__` names ({getattr(nominal, '__name__', None)!r}) nor of an imported "
        "module whose namespace it runs in (a module run by runpy, removed from sys.modules, "
        "or a function made from another file's code): regraft does not guess which file "
        "rules should see")


def import_name(module: types.ModuleType) -> str:
    """The dotted name ``module`` was imported by (``pkg.mod`` for one run as ``python -m
    pkg.mod``, whose ``__name__`` is ``__main__``)."""
    if module.__name__ != "__main__":
        return module.__name__
    spec = getattr(module, "__spec__", None)
    name = getattr(spec, "name", None)
    return name if isinstance(name, str) and name else module.__name__
