"""Liveness: ``install(..., live=True)`` probes every function a rule patched, and
``unexercised()`` lists those never called — in every shape of Python a rule edits, with the
patched text, its line numbers and its behaviour unchanged; patched code that fails to import
is an error naming the rule and the cache entry."""

import asyncio
import importlib
import inspect
import itertools
import sys
import traceback

import pytest

import regraft
from regraft import _live

RENAME = """\
id: to-new
match: old($X)
action: {replace: new($X)}
"""

_COUNT = itertools.count()


@pytest.fixture
def package(tmp_path, monkeypatch):
    """Writes a module ``<pkg>.mod`` with ``body`` (and ``old``/``new`` helpers), installs
    ``rules`` with liveness on and imports it; yields the maker. Everything is undone after."""
    made = []
    monkeypatch.syspath_prepend(str(tmp_path))

    def make(body, rules=RENAME, newline="\n", **options):
        name = f"livepkg{next(_COUNT)}"
        folder = tmp_path / name
        folder.mkdir()
        (folder / "__init__.py").write_text("")
        helpers = "def old(x):\n    return x\n\n\ndef new(x):\n    return x + 100\n\n\n"
        text = (helpers + body).replace("\n", newline)
        (folder / "mod.py").write_bytes(text.encode())
        hook = regraft.install(regraft.Rules.parse(rules), [name], versions={},
                               live=options.pop("live", True), **options)
        made.append((hook, name))
        return importlib.import_module(f"{name}.mod")

    yield make
    for hook, name in made:
        regraft.uninstall(hook)
        for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[module]
        _live.forget([f"{name}.mod"])


def _idle(module):
    return sorted(u.qualname for u in regraft.unexercised() if u.module == module.__name__)


SHAPES = '''
import functools

def plain(x):
    """Its docstring stays first."""
    return old(x)

def one_line(x): return old(x)

def deco(f):
    @functools.wraps(f)
    def wrapper(*a):
        return f(*a)
    return wrapper

@deco
def decorated(x):
    return old(x)

def generator(n):
    for i in range(n):
        yield old(i)

async def coroutine(x):
    return old(x)

def outer(x):
    def inner(y):
        return old(y)
    return inner(x)

def makes_class(x):
    class Local:
        def method(self):
            return old(x)
    return Local().method()

class K:
    @property
    def prop(self):
        return old(1)

    def __private(self):
        return old(2)

    def calls_private(self):
        return self.__private()

    @staticmethod
    def static(x):
        return old(x)

    @classmethod
    def cls(cls, x):
        return old(x)

lam = lambda x: old(x)
'''

EVERY = ["K.__private", "K.calls_private", "K.cls", "K.prop", "K.static", "coroutine", "decorated",
         "generator", "lam", "makes_class.<locals>.Local.method", "one_line", "outer.<locals>.inner",
         "plain"]


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_every_shape_a_rule_patches_is_probed_and_leaves_the_list_when_called(package, newline):
    module = package(SHAPES, newline=newline)
    expected = sorted(q.replace("lam", "<lambda>") for q in EVERY if q != "K.calls_private")
    assert _idle(module) == expected
    # Each runs as patched, and once it ran it is no longer listed.
    assert module.plain(1) == 101 and module.plain.__doc__ == "Its docstring stays first."
    assert module.one_line(1) == 101
    assert module.decorated(1) == 101
    gen = module.generator(2)
    assert "generator" in _idle(module), "a generator runs at its first next(), not its call"
    assert list(gen) == [100, 101]
    assert asyncio.run(module.coroutine(1)) == 101
    assert module.outer(1) == 101
    assert module.makes_class(1) == 101
    k = module.K()
    assert (k.prop, k.calls_private(), k.static(1), k.cls(1), module.lam(1)) == (101, 102, 101, 101, 101)
    assert _idle(module) == []


def test_the_text_line_numbers_and_tracebacks_are_the_patched_ones(package):
    module = package("def fails(x):\n    y = old(x)\n    raise ValueError(y)\n")
    assert inspect.getsource(module.fails) == "def fails(x):\n    y = new(x)\n    raise ValueError(y)\n"
    with pytest.raises(ValueError) as info:
        module.fails(1)
    frame = traceback.extract_tb(info.tb)[-1]
    assert (frame.lineno, frame.line) == (11, "raise ValueError(y)")
    assert module.fails.__code__.co_firstlineno == 9


def test_edits_that_run_at_import_need_no_call(package):
    body = "LIMIT = old(3)\n\n@old\ndef decorated_by_the_edit():\n    pass\n"
    module = package(body)
    assert module.LIMIT == 103
    assert _idle(module) == [], "a module-level edit and an edit of a decorator run at import"


def test_a_function_that_is_only_defined_by_the_edit_is_probed(package):
    rules = """\
id: add-helper
match: 'def keep(): $$$B'
when: {lacks: 'def helper(): $$$H'}
action:
  replace: |-
    def keep(): $$$B

    def helper():
        return 1
"""
    module = package("def keep():\n    return 0\n", rules=rules)
    assert _idle(module) == ["helper"]


def test_rules_after_another_are_placed_in_the_final_text(package):
    rules = RENAME + """\
---
id: grow
after: [to-new]
match: 'return new($X)'
action: {replace: 'return new($X) + 100'}
"""
    module = package("def pad(x):\n    return 1\n\n\ndef twice(x):\n    return old(x)\n", rules=rules)
    idle = [u for u in regraft.unexercised() if u.module == module.__name__]
    assert [(u.qualname, u.line, sorted(u.rules)) for u in idle] == [("twice", 13, ["grow", "to-new"])]
    assert module.twice(1) == 201
    assert _idle(module) == []


def test_watch_rearms_and_names_the_rules_whose_code_did_not_run(package):
    rules = RENAME + """\
---
id: other
match: old2($X)
action: {replace: new($X)}
"""
    module = package("def a(x):\n    return old(x)\n\n\ndef old2(x):\n    return x\n\n\n"
                     "def b(x):\n    return old2(x)\n", rules=rules)
    module.a(1)
    with _live.watch() as watched:
        module.b(1)
    assert sorted(watched.idle_rules()) == ["to-new"], "a ran before the watch, not in it"
    assert watched.idle_rules(["other", "missing"]) == {"missing": []}


def test_no_probe_without_liveness(package):
    module = package("def f(x):\n    return old(x)\n", live=False)
    assert "__regraft_seen__" not in vars(module)
    assert _idle(module) == []
    assert "__regraft_seen__" not in module.f.__code__.co_names


def test_liveness_comes_from_the_environment(package, monkeypatch):
    monkeypatch.setenv("REGRAFT_LIVE", "1")
    module = package("def f(x):\n    return old(x)\n", live=None)
    assert _idle(module) == ["f"]


def test_the_cached_text_keeps_its_probes(package, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    body = "def f(x):\n    return old(x)\n"
    first = package(body, cache=str(cache))
    again = package(body, cache=str(cache))
    assert _idle(first) == ["f"] and _idle(again) == ["f"]


def test_patched_code_that_fails_at_import_names_the_rule_and_the_cache_entry(package, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    rules = """\
id: breaks
match: 'LIMIT = 3'
action: {replace: 'LIMIT = int("three")'}
"""
    for attempt in range(2):  # made, then read from the cache
        with pytest.raises(regraft.RegraftError) as info:
            package("LIMIT = 3\n", rules=rules, cache=str(cache), live=False)
        message = str(info.value)
        assert "ValueError" in message and "which rule `breaks` wrote" in message, message
        assert "at line 9" in message and str(cache) in message, message
        assert isinstance(info.value.__cause__, ValueError)


def test_an_import_error_of_the_module_itself_passes_through(package):
    body = "def f(x):\n    return old(x)\n\n\nimport no_such_module_anywhere\n"
    with pytest.raises(ModuleNotFoundError):
        package(body)


pytest_plugins = ["pytester"]

SMOKE_CONFTEST = '''
import os, sys
sys.path.insert(0, os.path.dirname(__file__))
import regraft
RULES = """
id: to-new
match: old($X)
action: {replace: new($X)}
"""
HOOK = regraft.install(regraft.Rules.parse(RULES), ["smokepkg"], versions={})
'''

SMOKE_TESTS = '''
import pytest
import smokepkg.mod as mod

@pytest.mark.regraft_smoke
def test_runs_the_patch():
    assert mod.used(1) == 101

@pytest.mark.regraft_smoke("to-new")
def test_runs_nothing_patched():
    assert mod.new(0) == 100

@pytest.mark.regraft_smoke("not-a-rule-here")
def test_names_a_rule_that_patched_nothing():
    pass

def test_unmarked():
    pass
'''


def test_pytest_regraft_live_fails_a_smoke_test_that_ran_none_of_a_rules_patched_code(pytester):
    pytester.makeconftest(SMOKE_CONFTEST)
    pytester.mkpydir("smokepkg")
    pytester.path.joinpath("smokepkg", "mod.py").write_text(
        "def old(x):\n    return x\n\ndef new(x):\n    return x + 100\n\n"
        "def used(x):\n    return old(x)\n\ndef unused(x):\n    return old(x)\n")
    pytester.makepyfile(test_smoke=SMOKE_TESTS)
    live = pytester.runpytest_subprocess("--regraft-live", "-p", "no:cacheprovider")
    live.assert_outcomes(passed=2, failed=2)
    out = live.stdout.str()
    assert "rule `to-new` took no effect here: none of its patched code ran" in out, out
    assert "smokepkg.mod.used" in out and "smokepkg.mod.unused" in out
    assert "rule `not-a-rule-here` patched nothing this process imported" in out
    assert "patched code that never ran" in out
    assert "smokepkg.mod.unused (" in out.split("patched code that never ran")[1]
    # Without the option the marker is declared and judges nothing.
    plain = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-W", "error::pytest.PytestUnknownMarkWarning")
    plain.assert_outcomes(passed=4)
