"""The import hook's cache: it executes what it reads, so nothing another user or a damaged
file put there is ever run."""

import importlib
import inspect
import os
import sys
import tempfile
import warnings

import pytest

import regraft

from test_runtime import POSITIONAL, toy  # noqa: F401  (the fixture)

PATCHED = "x = layer(x, m, b)"
DRIFTING = POSITIONAL.replace("for $L in self.layers", "for $L in self.blocks").replace(
    "expect: 1", "expect: 1\non_miss: warn"
)


def _import_fresh():
    for name in [m for m in sys.modules if m.startswith("toymodels")]:
        del sys.modules[name]
    return importlib.import_module("toymodels.modeling_toy")


def _run(rules, cache, **kw):
    hook = regraft.install(rules, packages=["toymodels"], versions={}, cache=str(cache), **kw)
    try:
        return _import_fresh(), hook
    finally:
        regraft.uninstall(hook)


def _entries(cache):
    return sorted(p for p in cache.iterdir() if p.suffix == ".py" and not p.name.startswith("."))


def test_entries_are_private_and_a_second_start_reads_them(toy, tmp_path):
    rules = regraft.Rules.parse(POSITIONAL)
    cache = tmp_path / "cache"
    module, hook = _run(rules, cache)
    assert PATCHED in inspect.getsource(module.ToyModel.forward)
    assert oct(cache.stat().st_mode & 0o777) == "0o700"
    entries = _entries(cache)
    assert len(entries) == 1 and all(e.stat().st_mode & 0o077 == 0 for e in entries)
    module, hook = _run(rules, cache)
    assert (hook.hits, hook.misses) == (1, 0)
    assert PATCHED in inspect.getsource(module.ToyModel.forward)


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_a_folder_others_can_write_is_not_used(toy, tmp_path):
    rules = regraft.Rules.parse(POSITIONAL)
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o777)
    with pytest.warns(RuntimeWarning, match=r"not using the cache .*writable by group or others"):
        module, hook = _run(rules, cache)
    assert PATCHED in inspect.getsource(module.ToyModel.forward), "patched all the same"
    assert list(cache.iterdir()) == [], "nothing written there"
    assert (hook.hits, hook.misses) == (0, 1)


def _plant(cache, rules, evil):
    """Every entry of a cache made by `rules`, its text replaced by `evil` (seal kept)."""
    _run(rules, cache)
    for entry in _entries(cache):
        data = entry.read_bytes()
        header, seal, rest = data.split(b"\n", 2)
        meta, body = rest.split(b"\n", 1)
        entry.write_bytes(b"\n".join([header, seal, meta, evil]))


EVIL = b"import builtins; builtins.REGRAFT_PWNED = True\n"


def test_an_edited_or_truncated_entry_is_rebuilt_never_run(toy, tmp_path):
    rules = regraft.Rules.parse(POSITIONAL)
    cache = tmp_path / "cache"
    _plant(cache, rules, EVIL)
    module, hook = _run(rules, cache)
    assert not hasattr(__import__("builtins"), "REGRAFT_PWNED")
    assert (hook.hits, hook.misses) == (0, 1)
    assert PATCHED in inspect.getsource(module.ToyModel.forward)
    # Rebuilt: the next start reads sound entries.
    for entry in _entries(cache):
        entry.write_bytes(entry.read_bytes()[:-7])
    module, hook = _run(rules, cache)
    assert (hook.hits, hook.misses) == (0, 1), "truncated entries are rebuilt"
    module, hook = _run(rules, cache)
    assert (hook.hits, hook.misses) == (1, 0)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")
def test_an_entry_another_user_owns_is_not_run(toy, tmp_path):
    rules = regraft.Rules.parse(POSITIONAL)
    cache = tmp_path / "cache"
    _run(rules, cache)
    for entry in _entries(cache):
        os.chown(entry, 4242, 4242)
    module, hook = _run(rules, cache)
    assert (hook.hits, hook.misses) == (0, 1)
    assert PATCHED in inspect.getsource(module.ToyModel.forward)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")
def test_a_folder_another_user_owns_is_not_used(toy, tmp_path):
    rules = regraft.Rules.parse(POSITIONAL)
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    os.chown(cache, 4242, 4242)
    with pytest.warns(RuntimeWarning, match=r"owned by uid 4242"):
        _run(rules, cache)
    assert list(cache.iterdir()) == []


def test_a_linked_entry_is_not_followed(toy, tmp_path):
    rules = regraft.Rules.parse(POSITIONAL)
    cache = tmp_path / "cache"
    _run(rules, cache)
    outside = tmp_path / "outside.py"
    for entry in _entries(cache):
        outside.write_bytes(entry.read_bytes())
        entry.unlink()
        entry.symlink_to(outside)
    module, hook = _run(rules, cache)
    assert (hook.hits, hook.misses) == (0, 1), "a link is never read"
    assert all(not e.is_symlink() for e in _entries(cache)), "the link is replaced, not written through"


def test_a_cache_that_cannot_be_written_degrades_to_none(toy, tmp_path, monkeypatch):
    rules = regraft.Rules.parse(POSITIONAL)

    def read_only(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    with pytest.warns(RuntimeWarning, match="cannot be written"):
        module, hook = _run(rules, tmp_path / "cache")
    assert PATCHED in inspect.getsource(module.ToyModel.forward)
    # A folder that cannot even be made (its parent is a file) is no import error either.
    (tmp_path / "file").write_text("")
    with pytest.warns(RuntimeWarning, match="cannot be created"):
        module, _ = _run(rules, tmp_path / "file" / "cache")
    assert PATCHED in inspect.getsource(module.ToyModel.forward)


def test_drift_is_warned_about_on_every_start(toy, tmp_path):
    rules = regraft.Rules.parse(DRIFTING)
    cache = tmp_path / "cache"
    for expected in [(0, 1), (1, 0)]:
        with pytest.warns(RuntimeWarning, match="toy-layers-positional"):
            _, hook = _run(rules, cache)
        assert (hook.hits, hook.misses) == expected


def test_entries_are_keyed_by_the_module_path(toy, tmp_path):
    """Two modules with the same text, one selected by the rules' `files`: the cache must not
    hand the patched text of one to the other."""
    rules = regraft.Rules.parse(POSITIONAL)
    cache = tmp_path / "cache"
    twin = tmp_path / "twin" / "toymodels"
    twin.mkdir(parents=True)
    (twin / "__init__.py").write_text("")
    (twin / "modeling_other.py").write_text((tmp_path / "toymodels" / "modeling_toy.py").read_text())
    hook = regraft.install(rules, packages=["toymodels"], versions={}, cache=str(cache))
    try:
        _import_fresh()
        sys.modules["toymodels"].__path__.append(str(twin))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            other = importlib.import_module("toymodels.modeling_other")
    finally:
        regraft.uninstall(hook)
    assert PATCHED not in inspect.getsource(other.ToyModel.forward)


def test_a_warm_start_compiles_nothing_and_a_damaged_bytecode_entry_is_rebuilt(toy, tmp_path, monkeypatch):
    import regraft._hook as runtime

    rules = regraft.Rules.parse(POSITIONAL)
    cache = tmp_path / "cache"
    compiled = []
    real = compile

    def counting(source, filename, *args, **kwargs):
        compiled.append(filename)
        return real(source, filename, *args, **kwargs)

    monkeypatch.setattr(runtime, "compile", counting, raising=False)
    _run(rules, cache)
    patched_file = [f for f in compiled if f.endswith("modeling_toy.py")]
    assert patched_file, "a cold start compiles the patched module"
    codes = [p for p in cache.iterdir() if p.suffix == ".code"]
    assert len(codes) == 1 and codes[0].stat().st_mode & 0o077 == 0
    compiled.clear()
    module, _ = _run(rules, cache)
    assert [f for f in compiled if f.endswith("modeling_toy.py")] == [], "a warm start loads bytecode"
    assert PATCHED in inspect.getsource(module.ToyModel.forward)
    # A damaged bytecode entry fails its seal: compiled again, never run.
    data = codes[0].read_bytes()
    codes[0].write_bytes(data[:-8] + b"\x00" * 8)
    module, _ = _run(rules, cache)
    assert [f for f in compiled if f.endswith("modeling_toy.py")], "rebuilt from the text"
    assert PATCHED in inspect.getsource(module.ToyModel.forward)
