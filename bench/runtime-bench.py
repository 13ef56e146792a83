"""Figures for the runtime layer (not a test): Rules.load of the shipped pack, one patch of a
class (median of many calls), and the import hook's added time on a large modeling module.

    target/pyenv-3.13/bin/python bench/runtime-bench.py [TRANSFORMERS_DIR]

TRANSFORMERS_DIR holds an unpacked release (bench/fetch-transformers.sh), default
$REGRAFT_CORPUS/transformers-4.57.6.
"""

import importlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import regraft
from regraft.runtime import Hook

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "python"))

import toymodels.modeling_toy as toy  # noqa: E402


def median_ms(fn, n):
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


shipped = ROOT / "rules"
print(f"Rules.load(rules/) [{len(regraft.Rules.load(shipped).ids)} rules]: "
      f"{median_ms(lambda: regraft.Rules.load(shipped), 50):.2f} ms median of 50")
rules = regraft.Rules.load(shipped)
versions = {"transformers": "4.57.6"}
print(f"patch(ToyModel) with the shipped pack, no rule selects it: "
      f"{median_ms(lambda: regraft.patch(toy.ToyModel, rules, versions=versions), 200):.2f} ms median of 200")

absent = regraft.Rules.parse("""\
id: toy-absent
files: ["**/toymodels/modeling_toy.py"]
inside: {class: ToyModel}
match: "$X = missing_call($$$A)"
action: {remove_kwargs: [mask]}
""")
print(f"patch(ToyModel) with a rule that selects it and matches nothing: "
      f"{median_ms(lambda: regraft.patch(toy.ToyModel, absent, versions=versions), 200):.2f} ms median of 200")

positional = regraft.Rules.parse("""\
id: toy-layers-positional
files: ["**/toymodels/modeling_toy.py"]
inside: {class: ToyModel, function: forward}
match: "$X = $L($$$A)"
action:
  kwargs_to_positional: {signature: ToyLayer.forward}
expect: 1
""")


def patch_and_revert():
    regraft.patch(toy.ToyModel, positional, versions={}).revert()


print(f"patch(ToyModel) with a rule that edits it (+ revert): "
      f"{median_ms(patch_and_revert, 200):.2f} ms median of 200")

corpus = Path(sys.argv[1] if len(sys.argv) > 1 else
              os.path.join(os.environ.get("REGRAFT_CORPUS", "target/corpus"), "transformers-4.57.6"))
path = corpus / "transformers" / "models" / "whisper" / "modeling_whisper.py"
source = path.read_text()
compile_ms = median_ms(lambda: compile(source, str(path), "exec"), 20)
with tempfile.TemporaryDirectory() as cache:
    hook = Hook(rules, ["transformers"], None, versions, cache, "raise")
    start = time.perf_counter()
    patched = hook.patched_source("transformers.models.whisper.modeling_whisper", str(path), source)
    first_ms = 1000 * (time.perf_counter() - start)
    cached_ms = median_ms(lambda: hook.patched_source("m", str(path), source), 20)
print(f"import hook on {path.name} ({len(source) // 1024} KB, changed: {patched != source}): "
      f"first {first_ms:.1f} ms, cached {cached_ms:.2f} ms median of 20; "
      f"for scale, compiling it takes {compile_ms:.1f} ms")
