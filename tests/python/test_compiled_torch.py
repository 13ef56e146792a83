"""`torch.compile` callers see a patch and its revert (Dynamo's traces are reset when code is
swapped). Needs torch: skipped, saying so, where it is not installed (the bench venvs have it)."""

import sys
import textwrap

import pytest

import regraft

torch = pytest.importorskip("torch", reason="torch is not installed: the compiled-caller test needs it")

MODULE = """
import torch


class Sub(torch.nn.Module):
    def forward(self, x):
        return x + 1


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = Sub()

    def forward(self, x):
        return self.sub(x) * 2
"""

RULE = """id: r
inside: {class: Sub, function: forward}
match: 'return x + 1'
action: {replace: 'return x + 100'}
expect: 1
"""


@pytest.mark.parametrize("recompile", [True, False])
def test_a_compiled_caller_runs_the_patch_and_the_revert(tmp_path, monkeypatch, recompile):
    (tmp_path / "tcmod.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("tcmod", None)
    import tcmod

    model = tcmod.Model()
    compiled = torch.compile(model, backend="eager")
    x = torch.zeros(1)
    assert compiled(x).item() == 2.0
    handle = regraft.patch(tcmod.Sub.forward, regraft.Rules.parse(RULE), versions={},
                           recompile=recompile)
    assert model(x).item() == 200.0
    assert compiled(x).item() == (200.0 if recompile else 2.0)
    handle.revert()
    assert model(x).item() == 2.0
    assert compiled(x).item() == 2.0
    torch._dynamo.reset()
