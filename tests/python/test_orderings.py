"""Every ordering of the runtime calls, each in a fresh interpreter and each run twice (as
ddtrace's shared patch tests do): the live code and `inspect.getsource` are asserted after
every step. Two packs for one package compose; an ordering never patches twice."""

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from test_runtime import BOOM, POSITIONAL

HERE = Path(__file__).parent

PRELUDE = f"""
import importlib, inspect, sys, warnings
import regraft
warnings.simplefilter("ignore")
A = regraft.Rules.parse({POSITIONAL!r})
B = regraft.Rules.parse({BOOM!r})
def install(rules):
    return regraft.install(rules, packages=["toymodels"], versions={{}})
def src():
    return inspect.getsource(sys.modules["toymodels.modeling_toy"].ToyModel.forward)
def positional():
    m = sys.modules["toymodels.modeling_toy"]
    m.ToyLayer.calls.clear()
    m.ToyModel().forward(1, 2, 3)
    return all(kwargs == [] for _, kwargs in m.ToyLayer.calls)
def boom():
    m = sys.modules["toymodels.modeling_toy"]
    try:
        m.ToyModel().fails(1)
    except ValueError as e:
        return str(e)
def imp():
    return importlib.import_module("toymodels.modeling_toy")
def reload():
    return importlib.reload(sys.modules["toymodels.modeling_toy"])
"""

# Each: the steps, then what must hold (patched by A: positional calls; by B: patched boom).
ORDERINGS = {
    "install, import": """
h = install(A); imp()
assert positional() and src().count("layer(x, m, b)") == 1
""",
    "import, install (stock until reloaded), reload": """
imp(); h = install(A)
assert not positional()
reload()
assert positional() and src().count("layer(x, m, b)") == 1
""",
    "install, import, uninstall with reload": """
h = install(A); imp(); regraft.uninstall(h, reload=True)
assert not positional() and "layer(x, m, b)" not in src()
""",
    "install, uninstall, install, import, reload": """
h = install(A); regraft.uninstall(h); h = install(A); imp(); reload()
assert positional() and src().count("layer(x, m, b)") == 1
assert sum(isinstance(x, regraft.runtime.Hook) for x in sys.meta_path) == 1
""",
    "install twice, import": """
h1 = install(A); h2 = install(A); imp()
assert h1 is h2 and positional() and src().count("layer(x, m, b)") == 1
""",
    "install, import, patch the method again": """
h = install(A); m = imp()
assert not regraft.patch(m.ToyModel.forward, A, versions={}).changed
assert positional() and src().count("layer(x, m, b)") == 1
""",
    "import, patch, install, reload": """
m = imp(); p = regraft.patch(m.ToyModel.forward, A, versions={}); h = install(A); reload()
assert positional() and src().count("layer(x, m, b)") == 1
""",
    "import, patch, revert": """
m = imp(); p = regraft.patch(m.ToyModel.forward, A, versions={}); p.revert()
assert not positional() and "layer(x, m, b)" not in src()
""",
    "two packs, import": """
ha = install(A); hb = install(B); imp()
assert positional() and boom() == "patched boom"
""",
    "two packs, uninstall one with reload": """
ha = install(A); hb = install(B); imp(); regraft.uninstall(hb, reload=True)
assert positional() and boom() == "boom", (positional(), boom())
""",
}


@pytest.mark.parametrize("name", sorted(ORDERINGS))
def test_each_ordering_in_a_fresh_interpreter_twice(name, tmp_path):
    shutil.copytree(HERE / "toymodels", tmp_path / "toymodels")
    script = f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n" + PRELUDE + \
        textwrap.dedent(ORDERINGS[name])
    for run in range(2):
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
        assert out.returncode == 0, f"run {run + 1}: {out.stderr}"
