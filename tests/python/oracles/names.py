"""The names oracle: a generated function (with a comprehension, a nested function, a lambda,
``global``, ``del``, parameters of every kind) gets a ``rename`` or a name-writing template;
``symtable`` judges. Every name of every scope in the function must keep its kind (local,
parameter, global, free, declared global) — the renamed one under its new name — and no new
name may merge with one that was already there; a name the edit writes must resolve when the
function runs; a rename of a local is a pure renaming, so calls return what they returned.
Otherwise regraft must refuse.
"""

from __future__ import annotations

import symtable
from typing import Any, Dict, List, Optional, Tuple

from . import Case, Chooser, load, outcome_of, written

PRELUDE = '''\
import os as _os

G = 10
H = 20


def helper():
    return "helper"


'''

OLD = ["x", "a", "b", "k", "G", "H", "helper", "len", "inner", "z", "rest", "y"]
NEW = ["renamed", "renamed", "x", "y", "z", "a", "b", "G", "H", "len", "list", "helper",
       "xs", "kw", "inner", "_os", "Gs", "lengths"]


def case(choose: Chooser) -> Case:
    """A module with one function ``f`` and a rule renaming (or rewriting) inside it."""
    lines = ["def f(a, b=3, *rest, k=4, **kw):"]
    if choose.coin(0.3):
        lines += ["    global G", "    G = G + 1"]
    lines.append("    x = a + 1")
    if choose.coin(0.5):
        lines.append("    y = [x for x in range(a)]")
    else:
        lines.append("    y = len([a])")
    if choose.coin(0.5):
        lines += ["    def inner():", "        return x + a"]
    else:
        lines += ["    inner = lambda: x + a"]
    if choose.coin(0.3):
        lines += ["    del y", "    y = 0"]
    lines.append("    z = (lambda q: q + x)(1)")
    lines.append("    return (x, a, b, k, G, H, helper(), len([a]), inner(), z, y, rest, kw)")
    kind = choose.pick(["rename", "rename", "rename", "template"])
    old, new = choose.pick(OLD), choose.pick(NEW)
    if kind == "rename":
        rule = (f"id: names-oracle\nmatch: 'def f($$$P): $$$B'\n"
                f"action: {{rename: {{from: {old}, to: {new}}}}}\n")
    else:
        # A template writing a call of a name: a builtin, a module name, a local, or none.
        called, imports = choose.pick([
            ("len", ""), ("helper", ""), ("listing", ""), ("x", ""), ("lengths", ""),
            ("_os.getcwd", ""), ("y", ""),
            # With the imports the template needs: added once, or refused where the module
            # binds the name to something else.
            ("math.prod", "import math"), ("prod", "from math import prod"),
            ("helper", "from math import prod as helper"), ("_os.fspath", "import os as _os"),
            ("G", "from math import prod as G"), ("fsum", "from math import fsum")])
        imports_line = f"imports: ['{imports}']\n" if imports else ""
        rule = (f"id: names-oracle\nmatch: 'z = (lambda q: q + x)(1)'\n{imports_line}"
                f"action: {{replace: 'z = {called}([x]) if {called} else 0'}}\n")
        old, new = "", called
    source = PRELUDE + "\n".join(lines) + "\n"
    args = choose.pick([(1,), (2, 5), (0, 1, 7)])
    return Case(source, rule, facts={"kind": kind, "old": old, "new": new, "args": args})


Flags = Tuple[bool, ...]


def _flags(symbol: symtable.Symbol) -> Flags:
    return (symbol.is_parameter(), symbol.is_global(), symbol.is_declared_global(),
            symbol.is_local(), symbol.is_free(), symbol.is_imported())


def _global_read(flags: Flags) -> bool:
    """A name of the module or the builtins here (read, or declared ``global``), not a local."""
    parameter, is_global, declared, local, free, imported = flags
    return is_global and not (parameter or imported)


def _scopes(source: str) -> Dict[str, Dict[str, Flags]]:
    """Every scope inside ``f`` (``f`` itself, its comprehension, lambdas, ``inner``), by a
    path of table names, with each symbol's kind."""
    out: Dict[str, Dict[str, Flags]] = {}

    def walk(table: symtable.SymbolTable, path: str) -> None:
        out[path] = {s.get_name(): _flags(s) for s in table.get_symbols()}
        for i, child in enumerate(table.get_children()):
            walk(child, f"{path}/{i}:{child.get_type()}")

    top = symtable.symtable(source, "<oracle>", "exec")
    for child in top.get_children():
        if child.get_name() == "f":
            walk(child, "f")
    return out


def _renamed(scopes: Dict[str, Dict[str, Flags]], old: str, new: str) -> Dict[str, Dict[str, Flags]]:
    out: Dict[str, Dict[str, Flags]] = {}
    for path, table in scopes.items():
        renamed = {name: flags for name, flags in table.items() if name != old}
        if old in table:
            # A redirect onto a name already here keeps that name's own kind.
            renamed.setdefault(new, table[old])
        out[path] = renamed
    return out


def _call(source: str, name: str, args: Tuple[Any, ...]) -> Any:
    try:
        module = load(source, name)
    except Exception as error:
        return ("import raised", type(error).__name__, str(error))
    return outcome_of(lambda: module.f(*args))


def judge(case: Case) -> Optional[str]:
    """None when names resolve as intended (or regraft refused)."""
    output, failure = written(case)
    if output is None:
        return failure
    facts = case.facts
    before, after = _scopes(case.source), _scopes(output)
    old, new = facts["old"], facts["new"]
    if facts["kind"] == "rename" and output != case.source:
        # Two global reads merged is the redirect a rename is for; anything else merges two
        # bindings.
        clashes = [path for path, table in before.items() if new in table and old in table
                   and not (_global_read(table[old]) and _global_read(table[new]))]
        if clashes:
            return (f"renamed `{old}` onto `{new}`, which {clashes[0]} already has: two names "
                    f"merged\n--- output\n{output}")
        expected = _renamed(before, old, new)
        if after != expected:
            changed = [(p, n, expected[p].get(n), after.get(p, {}).get(n))
                       for p in expected for n in set(expected[p]) | set(after.get(p, {}))
                       if expected[p].get(n) != after.get(p, {}).get(n)]
            return f"names changed kind: {changed[:4]}\n--- output\n{output}"
    original = _call(case.source, "oracle_names_original", facts["args"])
    patched = _call(output, "oracle_names_patched", facts["args"])
    if patched[0] != "ok" and "NameError" in repr(patched) and "NameError" not in repr(original):
        return f"the edit reads a name nothing binds: {patched}\n--- output\n{output}"
    local = facts["kind"] == "rename" and any(
        before["f"].get(old, (False,) * 6)[i] for i in (0, 3))  # a parameter or a local
    if local and original != patched:
        return (f"renaming the local `{old}` to `{new}` changed what f returns: {original} != "
                f"{patched}\n--- output\n{output}")
    return None
