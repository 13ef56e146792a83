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
import warnings

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
        before_import = options.pop("before_import", None)
        hook = regraft.install(regraft.Rules.parse(rules), [name], versions={},
                               live=options.pop("live", True), **options)
        made.append((hook, name))
        if before_import is not None:
            before_import()
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


def _never_ran(out):
    """The summary section alone: the short test summary after it repeats failure messages, and
    how much of them it prints depends on the terminal's width."""
    section = out.split("patched code that never ran", 1)[1]
    return section.split("short test summary info", 1)[0]


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
    assert "smokepkg.mod.unused (" in _never_ran(out)
    # Under pytest-xdist the workers report what ran to the controller's summary.
    spread = pytester.runpytest_subprocess("--regraft-live", "-p", "no:cacheprovider", "-n", "2")
    spread.assert_outcomes(passed=2, failed=2)
    assert "smokepkg.mod.unused (" in _never_ran(spread.stdout.str())
    assert "smokepkg.mod.used (" not in _never_ran(spread.stdout.str())
    # Without the option the marker is declared and judges nothing.
    plain = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-W", "error::pytest.PytestUnknownMarkWarning")
    plain.assert_outcomes(passed=4)


# -- what an attack found (each once failed) ------------------------------------------------


@pytest.mark.filterwarnings("ignore:.*found in sys.modules:RuntimeWarning")
def test_code_run_outside_its_module_still_runs_and_records(package):
    import runpy
    import types

    module = package("def f(x):\n    return old(x)\n\nRESULT = f(1)\n")
    ran = runpy.run_module(module.__name__, run_name="__main__")
    assert ran["RESULT"] == 101
    # A function rebuilt with other globals: the probe needs none of them.
    g = types.FunctionType(module.f.__code__, {"old": abs, "new": abs})
    assert g(-3) == 3


def test_nested_watches_each_collect_and_close_by_identity(package):
    module = package("def f(x):\n    return old(x)\n")
    with _live.watch() as outer:
        with _live.watch() as inner:
            pass
        module.f(1)
    assert [p.qualname for p in outer.fired] == ["f"] and inner.fired == []
    assert not _live._WATCHES


def _two_packs(package, body, first, second, **options):
    module = package(body, rules=first, **options)
    name = module.__name__.rsplit(".", 1)[0]
    del sys.modules[module.__name__]
    hook = regraft.install(regraft.Rules.parse(second), [name], versions={},
                           live=options.get("live", True))
    try:
        return importlib.import_module(module.__name__), hook
    except BaseException:
        regraft.uninstall(hook)
        raise


SHIFT = ("id: add-import\nmatch: 'import os'\nwhen: {lacks: 'import sys'}\n"
         "action: {replace: \"import os\\nimport sys\"}\n")


def test_a_later_pack_that_moves_lines_keeps_earlier_probes_in_place(package):
    module, hook = _two_packs(package, "import os\n\n\ndef f(x):\n    return old(x)\n\n\n"
                              "g = lambda: 0; h = lambda: old(2)\n", RENAME, SHIFT)
    try:
        assert module.f(1) == 101 and module.h() == 102
        assert _idle(module) == []
    finally:
        regraft.uninstall(hook)


def test_a_later_pack_does_not_make_an_optional_import_a_rules_fault(package):
    with pytest.raises(ModuleNotFoundError):
        _two_packs(package, "import os\nimport no_such_optional_dep\nX = old(1)\n", RENAME, SHIFT,
                   live=False)


def test_reloading_without_one_pack_keeps_the_other_packs_probes(package):
    second = "id: two\nmatch: old2($X)\naction: {replace: new($X)}\n"
    module, hook = _two_packs(package, "def f(x):\n    return old(x)\n\n\ndef g(x):\n    return old2(x)\n\n\n"
                              "def old2(x):\n    return x\n", RENAME, second)
    try:
        first = next(h for h in sys.meta_path if isinstance(h, regraft.runtime.Hook)
                     and h is not hook and module.__name__ in h.modules)
        regraft.uninstall(first, reload=True)
        assert _idle(module) == ["g"]
    finally:
        regraft.uninstall(hook)


def test_an_import_error_a_rule_wrote_inside_a_multiline_statement_names_the_rule(package):
    if sys.version_info < (3, 11):
        pytest.skip("the whole span of a failing instruction is known from CPython 3.11")
    rules = ("id: moved\nmatch: 'importlib.import_module($$$A)'\n"
             "action: {replace: {of: $$$A, by: '\"no_such_dep_renamed\"'}}\n")
    with pytest.raises(regraft.RegraftError, match="which rule `moved` wrote"):
        package("import importlib\nm = importlib.import_module(\n    \"json\",\n)\n", rules=rules)


def test_deletions_belong_to_where_the_deleted_code_stood(package):
    drop_def = "id: drop\nmatch: 'def gone($$$P): $$$B'\naction: {delete: true}\n"
    module = package("def gone():\n    return 1\ndef g():\n    return 2\n", rules=drop_def)
    assert _idle(module) == [], "deleting a module-level def runs at import"
    drop_call = "id: drop2\nmatch: 'gone()'\naction: {delete: true}\n"
    module = package("def gone():\n    pass\n\n\ndef f():\n    x = 1\n    gone()\n\n\ndef h():\n    return 0\n",
                     rules=drop_call)
    assert _idle(module) == ["f"], "the last statement of f was deleted: f is what changed"


def test_a_too_deep_module_still_imports_on_every_cpython(package):
    body = "def f():\n    return old(1)\n\n\nX = " + " + ".join(["1"] * 1000) + "\n"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = package(body)
    assert module.f() == 101 and module.X == 1000


def test_a_hook_installed_before_the_variable_is_set_reads_it_when_it_patches(package, monkeypatch):
    monkeypatch.delenv("REGRAFT_LIVE", raising=False)
    # Installed first, imported after REGRAFT_LIVE is set (as pytest --regraft-live does).
    module = package("def f(x):\n    return old(x)\n", live=None,
                     before_import=lambda: monkeypatch.setenv("REGRAFT_LIVE", "1"))
    assert _idle(module) == ["f"]


@pytest.mark.parametrize("value, on", [("1", True), ("true", True), ("ON", True), ("0", False),
                                       ("false", False), ("off", False), ("", False)])
def test_the_variable_reads_as_people_write_it(value, on, monkeypatch):
    from regraft._hook import live_from_environment

    monkeypatch.setenv("REGRAFT_LIVE", value)
    assert live_from_environment() is on


def test_what_is_no_error_passes_through(package):
    import _pytest.outcomes

    body = "import pytest\n\n\ndef f():\n    return old(1)\n\n\npytest.importorskip('no_such_optional_dep_q')\n"
    with pytest.raises(_pytest.outcomes.Skipped):
        package(body, live=False)


def test_a_module_run_stock_again_leaves_the_list(package):
    module = package("def f(x):\n    return old(x)\n")
    assert _idle(module) == ["f"]
    for hook in [h for h in sys.meta_path if isinstance(h, regraft.runtime.Hook)]:
        if module.__name__ in hook.modules:
            regraft.uninstall(hook)
    importlib.reload(module)
    assert module.f(1) == 1 and _idle(module) == []


def test_code_that_runs_where_a_function_is_defined_is_not_the_functions(package):
    module = package("def f(k=old(1)):\n    return k\n\n\ndef deco(fn):\n    return fn\n\n\n"
                     "@deco\ndef g(x: old(2) = 3):\n    return x\n")
    assert module.f.__defaults__ == (101,)
    assert _idle(module) == [], "defaults and annotations ran at import"


def test_qualnames_are_cpythons(package):
    module = package("def outer():\n    global inner\n    def inner():\n        return old(1)\n    return inner\n\n\n"
                     "def gen():\n    return list((lambda: old(i))() for i in range(1))\n")
    module.outer()
    names = {u.qualname for u in regraft.unexercised() if u.module == module.__name__}
    assert names == {module.inner.__qualname__, "gen.<locals>.<genexpr>.<lambda>"}, names
