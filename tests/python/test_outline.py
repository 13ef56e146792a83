"""Differential test of `outline`: functions and methods of every parameter shape are outlined
by the CLI, imported, and called with many argument combinations; the outlined module must
return what the original returns (or raise the same error) on every call, and keep the
signature callers see."""

import importlib
import inspect
import subprocess
import sys

import pytest

HELPER = '''
import sys


def record(*names):
    """What the body sees: each parameter's value, by name."""
    frame = sys._getframe(1)
    return tuple((n, frame.f_locals[n]) for n in names)
'''

SOURCE = '''
from outline_helper import record


class Shapes:
    def plain(self, a, b=2):
        return record("a", "b")

    def me(self):
        return self

    def pos_only(self, a, /, b=2, *, c=3):
        return record("a", "b", "c")

    def star(self, a, b=None, *args, k=1, **kw):
        return record("a", "b", "args", "k", "kw")

    def kw_only(self, *, x, y=5):
        return record("x", "y")

    @staticmethod
    def static(a, *rest):
        return record("a", "rest")

    @classmethod
    def klass(cls, a=1, **kw):
        return (cls.__name__,) + record("a", "kw")

    def mutable(self, box=[]):
        box.append(1)
        return len(box)

    def gen(self, n):
        for i in range(n):
            yield i * 2

    def doc(self, a):
        """Kept on the method."""
        return a


def free(a, /, b, *args, c, d=4, **kw):
    return record("a", "b", "args", "c", "d", "kw")
'''

RULE = """\
id: ol
match: "def $F($$$P): $$$B"
files: ["**/outlined_mod.py"]
action: {outline: {name: "${F}_impl"}}
"""

CALLS = [
    ("plain", (1,), {}), ("plain", (1, 9), {}), ("plain", (), {"a": 1, "b": 3}), ("plain", (), {}),
    ("pos_only", (1,), {}), ("pos_only", (1, 2), {"c": 9}), ("pos_only", (), {"a": 1}),
    ("star", (1,), {}), ("star", (1, 2, 3, 4), {"k": 7, "z": 8}), ("star", (), {"a": 1, "b": 2}),
    ("star", (1,), {"b": 2, "q": 1}), ("kw_only", (), {"x": 1}), ("kw_only", (1,), {}),
    ("static", (1, 2, 3), {}), ("klass", (), {"zz": 1}), ("klass", (4,), {}),
    ("mutable", (), {}), ("mutable", (), {}), ("doc", (3,), {}),
]


def _run(module, name, args, kwargs):
    target = getattr(module.Shapes(), name)
    try:
        out = target(*args, **kwargs)
        return ("ok", out)
    except TypeError as error:
        return ("TypeError", str(error).split("(")[-1])


@pytest.fixture
def outlined(tmp_path, cli, monkeypatch):
    (tmp_path / "outline_helper.py").write_text(HELPER)
    (tmp_path / "original_mod.py").write_text(SOURCE)
    (tmp_path / "outlined_mod.py").write_text(SOURCE)
    (tmp_path / "rule.yaml").write_text(RULE)
    out = subprocess.run([str(cli), "apply", "--no-config", "-r", "rule.yaml", "--write",
                          "outlined_mod.py"], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    monkeypatch.syspath_prepend(str(tmp_path))
    for m in ("original_mod", "outlined_mod", "outline_helper"):
        sys.modules.pop(m, None)
    text = (tmp_path / "outlined_mod.py").read_text()
    return importlib.import_module("original_mod"), importlib.import_module("outlined_mod"), text


def test_every_call_returns_what_the_original_returns(outlined):
    original, patched, text = outlined
    assert text.count("_impl(") >= 2 * 10, text
    for name, args, kwargs in CALLS:
        assert _run(patched, name, args, kwargs) == _run(original, name, args, kwargs), name
    assert patched.free(1, 2, 3, c=4, e=5) == original.free(1, 2, 3, c=4, e=5)
    assert list(patched.Shapes().gen(3)) == list(original.Shapes().gen(3))
    shapes = patched.Shapes()
    assert shapes.me() is shapes


def test_callers_see_the_same_signature_and_docstring(outlined):
    original, patched, _ = outlined
    for name in ("plain", "pos_only", "star", "kw_only", "static", "klass", "mutable", "doc"):
        assert inspect.signature(getattr(patched.Shapes, name)) == \
            inspect.signature(getattr(original.Shapes, name)), name
    assert patched.Shapes.doc.__doc__ == "Kept on the method."
    # A mutable default stays one object: the wrapper passes its own default through.
    shapes = patched.Shapes()
    assert shapes.mutable() + 1 == shapes.mutable()


RUNTIME_SOURCE = '''
class Model:
    def forward(self, x, scale=2):
        """Scales."""
        return x * scale
'''


def _runtime_module(tmp_path, monkeypatch, name):
    (tmp_path / f"{name}.py").write_text(RUNTIME_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(name, None)
    return importlib.import_module(name)


def test_patch_installs_the_outline_and_revert_removes_it(tmp_path, monkeypatch):
    import regraft

    module = _runtime_module(tmp_path, monkeypatch, "outline_runtime_mod")
    rules = regraft.Rules.parse(
        "id: ol\nmatch: 'def forward($$$P): $$$B'\ninside: {class: Model}\n"
        "action: {outline: {name: Model_forward_impl}}\n")
    before = module.Model().forward(3)
    handle = regraft.patch(module.Model, rules)
    assert handle.changed and handle.rules == ["ol"]
    assert module.Model().forward(3) == before == 6
    assert module.Model().forward(3, scale=5) == 15
    assert module.Model.forward.__doc__ == "Scales."
    assert module.Model_forward_impl.__globals__ is vars(module)
    handle.revert()
    assert not hasattr(module, "Model_forward_impl")
    assert module.Model().forward(3) == 6


def test_patch_refuses_module_code_it_cannot_make_live(tmp_path, monkeypatch):
    import regraft

    module = _runtime_module(tmp_path, monkeypatch, "outline_runtime_mod2")
    # The outline's name is already a module attribute: it would be replaced.
    module.Model_forward = "taken"
    rules = regraft.Rules.parse(
        "id: ol\nmatch: 'def forward($$$P): $$$B'\ninside: {class: Model}\n"
        "action: {outline: true}\n")
    code = module.Model.forward.__code__
    with pytest.raises(regraft.RegraftError, match="already has"):
        regraft.patch(module.Model, rules)
    assert module.Model.forward.__code__ is code and module.Model_forward == "taken"
