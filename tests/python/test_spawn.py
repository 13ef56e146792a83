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


def test_children_get_the_rules_the_parent_loaded_not_the_file_as_it_is_now(toy, tmp_path, monkeypatch):
    path = tmp_path / "rules.yaml"
    path.write_text(POSITIONAL)
    hook = regraft.install(regraft.Rules.load(path), packages=["toymodels"], versions={}, children=True)
    try:
        # Edited after the parent started: a worker must still run what the parent runs.
        path.write_text("id: other\nmatch: 'x = layer($$$A)'\naction: {replace: 'x = 0'}\n")
        assert PATCHED in _in_spawned_child()
    finally:
        regraft.uninstall(hook)
    assert "REGRAFT_BOOTSTRAP" not in os.environ, "uninstall stops handing the hook to children"


def _child_state(settings, *flags):
    """Starts a bare interpreter with REGRAFT_BOOTSTRAP set to ``settings``; what it says."""
    import json
    import subprocess
    import sys

    env = dict(os.environ, REGRAFT_BOOTSTRAP=json.dumps(settings))
    probe = "import sys; print('regraft._bootstrap' in sys.modules)"
    run = subprocess.run([sys.executable, *flags, "-W", "always", "-c", probe], env=env,
                         capture_output=True, text=True, timeout=60)
    return run.stdout.strip(), run.stderr


def _settings(snapshot, digest="0" * 64):
    return {"snapshot": str(snapshot), "sha256": digest, "fingerprint": "", "packages": ["toymodels"],
            "phase": None, "versions": {}, "cache": None, "on_error": "warn"}


def test_the_bootstrap_honours_minus_e_and_minus_i(tmp_path):
    settings = _settings(tmp_path / "none.json")
    assert _child_state(settings)[0] == "True"
    for flag in ("-E", "-I"):
        assert _child_state(settings, flag)[0] == "False", flag


def test_a_snapshot_that_is_not_the_parents_is_refused_without_blocking(tmp_path):
    import hashlib
    import json

    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    out, err = _child_state(_settings(fifo))
    assert out == "True" and "not a regular file" in err, err
    loose = tmp_path / "loose.json"
    payload = json.dumps([[POSITIONAL, "yaml", "r.yaml"]]).encode()
    loose.write_bytes(payload)
    loose.chmod(0o666)
    out, err = _child_state(_settings(loose, hashlib.sha256(payload).hexdigest()))
    assert "written by others" in err, err
    loose.chmod(0o600)
    out, err = _child_state(_settings(loose, "f" * 64))
    assert "sha256 differs" in err, err
    out, err = _child_state(_settings(loose, hashlib.sha256(payload).hexdigest()))
    assert "could not be installed" not in err, err
