"""Patches that survive where training runs: `install(children=True)` carries the import hook
into interpreters started with `spawn` (data-loader workers, `multiprocessing`), through the
`regraft-bootstrap.pth` the wheel installs; without it a spawned child imports stock code."""

import inspect
import multiprocessing
import os

import regraft

from test_runtime import POSITIONAL, toy  # noqa: F401  (the fixture)

PATCHED = "x = layer(x, m, b)"


def _child_source() -> str:
    import toymodels.modeling_toy as m

    return inspect.getsource(m.ToyModel.forward)


def _in_spawned_child() -> str:
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(_child_source)


def test_a_spawned_child_imports_patched_code_only_when_asked(toy, monkeypatch):
    monkeypatch.delenv("REGRAFT_BOOTSTRAP", raising=False)
    rules = regraft.Rules.parse(POSITIONAL)
    hook = regraft.install(rules, packages=["toymodels"], versions={})
    try:
        assert PATCHED not in _in_spawned_child(), "off by default: the child is stock"
    finally:
        regraft.uninstall(hook)
    hook = regraft.install(rules, packages=["toymodels"], versions={}, children=True)
    try:
        assert os.environ["REGRAFT_BOOTSTRAP"]
        assert PATCHED in _in_spawned_child()
    finally:
        regraft.uninstall(hook)
        monkeypatch.delenv("REGRAFT_BOOTSTRAP", raising=False)


def test_rules_from_a_file_are_read_again_in_the_child(toy, tmp_path, monkeypatch):
    path = tmp_path / "rules.yaml"
    path.write_text(POSITIONAL)
    hook = regraft.install(regraft.Rules.load(path), packages=["toymodels"], versions={}, children=True)
    try:
        assert PATCHED in _in_spawned_child()
    finally:
        regraft.uninstall(hook)
        monkeypatch.delenv("REGRAFT_BOOTSTRAP", raising=False)
