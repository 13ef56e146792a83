"""Start-up cost of the import hook where users feel it (run by bench/families.sh; not in CI):
`import transformers` and building 1, 10 and 31 tiny models of bench/families.py, then
importing every module the shipped pack edits, in a fresh interpreter each, without the hook,
with it and no cache, with a cold cache and with a warm one. Prints CPU seconds (user +
system, median of ROUNDS rounds, default 5), the ratio to the plain start and whether it is
within the budget (warm <= 1.05x, cold <= 1.5x); then what `regraft.patch` of every class of
one large module (speecht5's) costs against one apply of the whole module.

    python bench/startup.py [N ...]
"""

import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from families import FAMILIES  # noqa: E402

CHILD = """
import sys
sys.path.insert(0, {bench!r})
mode, cache, families = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
if mode != "plain":
    import regraft
    regraft.install(regraft.Rules.load({rules!r}), packages=("transformers",),
                    cache=cache if mode != "nocache" else None, on_error="warn")
import importlib
import transformers
from families import build
for family in families:
    if family.startswith("module:"):
        importlib.import_module(family[len("module:"):])
    else:
        build(family)
"""

BUDGET = {"warm": 1.05, "cold": 1.5}


def cpu(mode, cache, families):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    script = CHILD.format(bench=str(ROOT / "bench"), rules=str(ROOT / "rules"))
    subprocess.run([sys.executable, "-c", script, mode, cache, ",".join(families)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def edited_modules():
    """The modules of the installed transformers that the shipped pack changes."""
    import regraft
    import transformers

    rules = regraft.Rules.load(str(ROOT / "rules"))
    root = pathlib.Path(transformers.__file__).parent
    versions = {"transformers": transformers.__version__}
    out = []
    for path in sorted(root.glob("models/*/modeling_*.py")):
        if "_tf_" in path.name or "_flax_" in path.name:
            continue
        text = path.read_text(encoding="utf-8")
        relative = path.relative_to(root.parent).as_posix()
        try:
            if rules.apply(text, relative, versions=versions) != text:
                out.append("module:" + relative[:-3].replace("/", "."))
        except regraft.RegraftError:
            pass
    return out


ROUNDS = int(os.environ.get("ROUNDS", "5"))


def startup(label, families):
    cpu("plain", "", families)  # warm the bytecode caches of transformers itself
    results = {m: [] for m in ("plain", "nocache", "cold", "warm")}
    for _ in range(ROUNDS):
        results["plain"].append(cpu("plain", "", families))
        results["nocache"].append(cpu("nocache", "", families))
        cache = tempfile.mkdtemp(prefix="regraft-startup-")
        os.chmod(cache, 0o700)
        results["cold"].append(cpu("cold", cache, families))
        results["warm"].append(cpu("warm", cache, families))
        shutil.rmtree(cache)
    print(f"import transformers + {label}, CPU s (median of {ROUNDS}; ratio: median of each "
          "round's ratio to that round's plain start, and its range):")
    for mode, times in results.items():
        # Each round's ratio to the plain start run just before it: drift of the machine over
        # the minutes a row takes cancels out.
        ratios = [t / p for t, p in zip(times, results["plain"])]
        ratio = statistics.median(ratios)
        budget = BUDGET.get(mode)
        verdict = "" if budget is None else ("  within budget" if ratio <= budget else f"  OVER the {budget}x budget")
        print(f"  {mode:8} {statistics.median(times):6.2f} s  {ratio:5.2f}x "
              f"({min(ratios):.2f}-{max(ratios):.2f}){verdict}")


def patch_every_class():
    """`regraft.patch` of each class of speecht5's modeling module against one apply of it."""
    import inspect
    import time

    import regraft
    import transformers
    import transformers.models.speecht5.modeling_speecht5 as module

    rules = regraft.Rules.load(str(ROOT / "rules"))
    classes = [c for c in vars(module).values() if inspect.isclass(c) and c.__module__ == module.__name__]
    start = time.process_time()
    handles = []
    for cls in classes:
        try:
            handles.append(regraft.patch(cls, rules))
        except regraft.RegraftError:
            pass
    each = time.process_time() - start
    for handle in handles:
        handle.revert()
    text = pathlib.Path(module.__file__).read_text(encoding="utf-8")
    start = time.process_time()
    rules.apply(text, "transformers/models/speecht5/modeling_speecht5.py",
                versions={"transformers": transformers.__version__})
    once = time.process_time() - start
    print(f"patch every class of speecht5 ({len(classes)}): {each:.2f} s CPU; one apply of the "
          f"module: {once:.2f} s ({each / once:.1f}x)")


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 10, 31]
    for n in counts:
        startup(f"{n} models", list(FAMILIES)[:n])
    modules = edited_modules()
    startup(f"the {len(modules)} modules the pack edits", modules)
    patch_every_class()


if __name__ == "__main__":
    main()
