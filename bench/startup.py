"""Start-up cost of the import hook where users feel it (run by bench/families.sh; not in CI):
`import transformers` and building N tiny models of bench/families.py, in a fresh interpreter
each, without the hook, with it and no cache, with a cold cache and with a warm one. Prints CPU
seconds (user + system, median of 3) and the ratio to the plain start.

    python bench/startup.py [N]
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
import transformers
from families import build
for family in families:
    build(family)
"""


def cpu(mode, cache, families):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    script = CHILD.format(bench=str(ROOT / "bench"), rules=str(ROOT / "rules"))
    subprocess.run([sys.executable, "-c", script, mode, cache, ",".join(families)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    families = list(FAMILIES)[:n]
    cpu("plain", "", families)  # warm the bytecode caches of transformers itself
    results = {m: [] for m in ("plain", "nocache", "cold", "warm")}
    for _ in range(3):
        results["plain"].append(cpu("plain", "", families))
        results["nocache"].append(cpu("nocache", "", families))
        cache = tempfile.mkdtemp(prefix="regraft-startup-")
        os.chmod(cache, 0o700)
        results["cold"].append(cpu("cold", cache, families))
        results["warm"].append(cpu("warm", cache, families))
        shutil.rmtree(cache)
    plain = statistics.median(results["plain"])
    print(f"import transformers + {n} models, CPU s (median of 3):")
    for mode, times in results.items():
        t = statistics.median(times)
        print(f"  {mode:8} {t:6.2f} s  {t / plain:5.2f}x")


if __name__ == "__main__":
    main()
