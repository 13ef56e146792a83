"""The module a live object's code belongs to: the one whose namespace its functions run in
(their ``__globals__``), not the one its ``__module__`` names.

Libraries re-home objects under their public name (numpy's ``set_module``, a package's
``__init__`` setting ``f.__module__ = __name__``), and a module run with ``python -m`` is
``__main__``. Selected by ``__module__``, a rule written for the file the code is in would miss
in silence, a rule for the named module's file would be run on code that file does not hold,
and a patched function would be compiled against another module's names.
"""

import inspect
import sys
import types
from typing import Any, Iterator, Optional


def _functions(obj: Any) -> Iterator[types.FunctionType]:
    """The plain functions whose code is ``obj``'s own: itself, or those its class body
    defined (methods assigned from elsewhere carry another ``__qualname__``), nested classes'
    too."""
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
        elif isinstance(value, types.FunctionType) and value.__qualname__.startswith(prefix):
            yield value


def _module_with(namespace: dict) -> Optional[types.ModuleType]:
    """The imported module whose namespace is ``namespace``."""
    name = namespace.get("__name__")
    module = sys.modules.get(name) if isinstance(name, str) else None
    if module is not None and getattr(module, "__dict__", None) is namespace:
        return module
    # Imported under another name (``python -m pkg.mod`` is ``__main__``; an alias).
    for module in list(sys.modules.values()):
        if getattr(module, "__dict__", None) is namespace:
            return module
    return None


def module_of(obj: Any) -> Optional[types.ModuleType]:
    """The module ``obj`` (a function, or a class) was defined in: where its code's names are
    looked up; by ``__module__`` only for a class with no function of its own."""
    for function in _functions(obj):
        module = _module_with(function.__globals__)
        if module is not None:
            return module
    return inspect.getmodule(obj)


def import_name(module: types.ModuleType) -> str:
    """The dotted name ``module`` was imported by (``pkg.mod`` for one run as ``python -m
    pkg.mod``, whose ``__name__`` is ``__main__``)."""
    spec = getattr(module, "__spec__", None)
    name = getattr(spec, "name", None)
    return name if isinstance(name, str) and name else module.__name__
