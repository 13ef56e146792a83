"""Code torch has compiled sees a patch: TorchDynamo guards the code objects it traced
(measured on torch 2.15: a compiled caller that inlined the patched function, a compiled
function and a compiled module all recompile after `patch` swaps `__code__`), so regraft
leaves Dynamo's caches alone rather than dropping them all. Runs where torch is installed
(bench/families.sh's venv); skipped elsewhere."""

import importlib
import sys
import textwrap

import pytest

import regraft

torch = pytest.importorskip("torch")

MODULE = """
import torch


def inner(x):
    return x + 1


def outer(x):
    return inner(x) * 2
"""


def test_a_compiled_caller_runs_the_patched_body(tmp_path, monkeypatch):
    (tmp_path / "compiled_mod.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("compiled_mod", None)
    module = importlib.import_module("compiled_mod")
    compiled = torch.compile(module.outer, backend="eager")
    direct = torch.compile(module.inner, backend="eager")
    x = torch.ones(2)
    assert compiled(x).tolist() == [4.0, 4.0] and direct(x).tolist() == [2.0, 2.0]
    rules = regraft.Rules.parse('id: p\nmatch: "return x + 1"\naction: {replace: "return x + 10"}\n')
    handle = regraft.patch(module.inner, rules, versions={})
    assert handle.changed
    assert compiled(x).tolist() == [22.0, 22.0], "the compiled caller sees the new body"
    assert direct(x).tolist() == [11.0, 11.0], "so does the compiled function itself"
