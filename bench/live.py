"""What liveness costs: per call of a patched function (after its first call, the probe is one
constant, one slot read and a jump) and per import (the patched module parsed and compiled from
its tree).

    target/pyenv-3.13/bin/python bench/live.py [--calls N] [--functions N]

Prints, for a one-line function and a ten-statement one, the time per call stock, patched and
patched with liveness on (median of 5 interleaved runs), and the CPU time of importing a
module of N patched functions without and with liveness.
"""

import argparse
import importlib
import pathlib
import statistics
import sys
import tempfile
import time
import timeit

import regraft

BODY = '''
def old(x):
    return x


def new(x):
    return x


def tiny(x):
    return old(x)


def longer(x):
    a = x + 1
    b = a * 2
    c = b - a
    d = [a, b, c]
    e = sum(d)
    f = e // 3
    g = f % 7
    h = (g, f)
    i = len(h)
    return old(i)
'''

RULES = "id: to-new\nmatch: old($X)\naction: {replace: new($X)}\n"


def _load(folder: pathlib.Path, name: str, live):
    (folder / name).mkdir()
    (folder / name / "__init__.py").write_text("")
    (folder / name / "mod.py").write_text(BODY)
    if live is None:
        return importlib.import_module(f"{name}.mod")
    hook = regraft.install(regraft.Rules.parse(RULES), [name], versions={}, live=live)
    module = importlib.import_module(f"{name}.mod")
    regraft.uninstall(hook)
    return module


def per_call(calls: int) -> None:
    folder = pathlib.Path(tempfile.mkdtemp(prefix="regraft-live-bench-"))
    sys.path.insert(0, str(folder))
    variants = {"stock": _load(folder, "stockpkg", None), "patched": _load(folder, "patchedpkg", False),
                "live": _load(folder, "livepkg", True)}
    live = variants["live"]
    from regraft._live import Probe

    probes = lambda f: [c for c in f.__code__.co_consts if isinstance(c, Probe)]  # noqa: E731
    assert probes(live.tiny), "the live variant carries a probe"
    assert not probes(variants["patched"].tiny)
    for fn in ("tiny", "longer"):
        for module in variants.values():
            getattr(module, fn)(1)  # the first call fires the probe
        times = {name: [] for name in variants}
        for _ in range(5):
            for name, module in variants.items():  # interleaved: drift in the machine hits all
                f = getattr(module, fn)
                times[name].append(timeit.timeit(lambda: f(1), number=calls) / calls * 1e9)
        med = {name: statistics.median(t) for name, t in times.items()}
        print(f"{fn:>7}: stock {med['stock']:.1f} ns, patched {med['patched']:.1f} ns, "
              f"live {med['live']:.1f} ns per call — liveness adds {med['live'] - med['patched']:+.1f} ns "
              f"({(med['live'] / med['patched'] - 1) * 100:+.1f} %)")


def per_import(functions: int) -> None:
    """A module of ``functions`` functions, each patched, imported under the hook without and
    with liveness (a fresh package each time: nothing is cached)."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="regraft-live-import-"))
    sys.path.insert(0, str(folder))
    body = "def old(x):\n    return x\n\n\ndef new(x):\n    return x\n\n\n" + "".join(
        f"def f{i}(x):\n    y = x + {i}\n    return old(y)\n\n\n" for i in range(functions))
    times = {False: [], True: []}
    for run in range(5):
        for live in (False, True):
            name = f"importpkg{run}{int(live)}"
            (folder / name).mkdir()
            (folder / name / "__init__.py").write_text("")
            (folder / name / "mod.py").write_text(body)
            hook = regraft.install(regraft.Rules.parse(RULES), [name], versions={}, live=live)
            start = time.process_time()
            importlib.import_module(f"{name}.mod")
            times[live].append(time.process_time() - start)
            regraft.uninstall(hook)
    off, on = statistics.median(times[False]), statistics.median(times[True])
    print(f" import: {functions} patched functions, {off * 1e3:.1f} ms CPU without liveness, "
          f"{on * 1e3:.1f} ms with ({(on / off - 1) * 100:+.0f} %)")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--functions", type=int, default=500)
    options = parser.parse_args()
    per_call(options.calls)
    per_import(options.functions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
