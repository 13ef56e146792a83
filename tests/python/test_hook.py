"""The import hook's promises: one activation per process, undo that re-imports what it
patched, a rule that fails dropped alone, and a hook that says whether it is installed."""

import importlib
import inspect
import sys
import warnings

import pytest

import regraft

from test_runtime import BOOM, POSITIONAL, toy  # noqa: F401  (the fixture)

DRIFTING = POSITIONAL.replace("id: toy-layers-positional", "id: toy-drifts").replace(
    "for $L in self.layers", "for $L in self.blocks")


def _fresh_import():
    for name in ["toymodels.modeling_toy", "toymodels"]:
        sys.modules.pop(name, None)
    return importlib.import_module("toymodels.modeling_toy")


def test_a_rule_that_fails_is_dropped_alone_and_the_others_apply(toy):  # noqa: F811
    rules = regraft.Rules.parse(DRIFTING + "---\n" + BOOM)
    hook = regraft.install(rules, packages=["toymodels"], versions={}, on_error="warn")
    try:
        with pytest.warns(RuntimeWarning, match="applied without rule `toy-drifts`"):
            module = _fresh_import()
        assert 'raise ValueError("patched boom")' in inspect.getsource(module.ToyModel.fails)
    finally:
        regraft.uninstall(hook)


def test_a_second_install_of_the_same_rules_returns_the_first(toy):  # noqa: F811
    rules = regraft.Rules.parse(POSITIONAL)
    first = regraft.install(rules, packages=["toymodels"], versions={})
    try:
        with pytest.warns(RuntimeWarning, match="already installed"):
            second = regraft.install(rules, packages=["toymodels"], versions={})
        assert second is first
        assert sum(isinstance(h, regraft.runtime.Hook) for h in sys.meta_path) == 1
    finally:
        regraft.uninstall(first)
    assert not first.installed


def test_uninstall_can_reimport_what_the_hook_patched(toy):  # noqa: F811
    hook = regraft.install(regraft.Rules.parse(POSITIONAL), packages=["toymodels"], versions={})
    module = _fresh_import()
    assert "x = layer(x, m, b)" in inspect.getsource(module.ToyModel.forward)
    assert hook.modules == ["toymodels.modeling_toy"]
    assert regraft.uninstall(hook, reload=True) == ["toymodels.modeling_toy"]
    assert "x = layer(x, bias=b, mask=m)" in inspect.getsource(module.ToyModel.forward)
    module.ToyLayer.calls.clear()
    module.ToyModel().forward(1, 2, 3)
    assert all(kwargs for _, kwargs in module.ToyLayer.calls), "the stock code runs again"
    # Installed again: one patch, not two.
    hook = regraft.install(regraft.Rules.parse(POSITIONAL), packages=["toymodels"], versions={})
    try:
        module = importlib.reload(module)
        assert inspect.getsource(module.ToyModel.forward).count("layer(x, m, b)") == 1
    finally:
        regraft.uninstall(hook)


def test_a_hook_says_whether_it_is_installed(tmp_path, monkeypatch):
    rules = regraft.Rules.parse(POSITIONAL)
    with pytest.warns(RuntimeWarning, match="not installed"):
        skipped = regraft.install(rules, packages=["toymodels"], versions={"transformers": "4.40"},
                                  supports={"transformers": ">=4.46"}, outside_support="skip")
    assert not skipped.installed
    # The window is checked against the installed version too, not only against `versions=`.
    info = tmp_path / "windowpkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: windowpkg\nVersion: 1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(regraft.RegraftError, match="windowpkg 1.0 is outside"):
        regraft.install(rules, packages=["toymodels"], versions={"windowpkg": "2.5"},
                        supports={"windowpkg": ">=2"}, outside_support="error")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hook = regraft.install(rules, packages=["toymodels"], versions={})
    assert hook.installed
    regraft.uninstall(hook)


@pytest.mark.parametrize("files", [
    '["toymodels/modeling_toy.py"]',
    '["toymodels/modeling_*.py"]',
    '["**/toymodels/modeling_toy.py"]',
])
def test_files_globs_see_a_module_by_its_path_below_its_import_root(toy, files):  # noqa: F811
    # The hook reads the module from an absolute path (a temporary folder here, site-packages
    # for users): a glob written as `apply` in site-packages sees it must select it too.
    rules = regraft.Rules.parse(POSITIONAL.replace('["**/toymodels/modeling_toy.py"]', files))
    hook = regraft.install(rules, packages=["toymodels"], versions={})
    try:
        module = _fresh_import()
        assert "x = layer(x, m, b)" in inspect.getsource(module.ToyModel.forward)
    finally:
        regraft.uninstall(hook, reload=True)
    assert "x = layer(x, bias=b, mask=m)" in inspect.getsource(module.ToyModel.forward)
    handle = regraft.patch(module.ToyModel.forward, rules, versions={})
    assert handle.changed, "patch sees the module the same way"
    handle.revert()


def test_an_excluding_glob_leaves_a_module_out_by_its_path_below_its_import_root(toy):  # noqa: F811
    rules = regraft.Rules.parse(POSITIONAL.replace(
        '["**/toymodels/modeling_toy.py"]', '["**/modeling_toy.py", "!toymodels/modeling_*.py"]'))
    hook = regraft.install(rules, packages=["toymodels"], versions={})
    try:
        module = _fresh_import()
        assert "x = layer(x, bias=b, mask=m)" in inspect.getsource(module.ToyModel.forward)
        assert hook.modules == []
    finally:
        regraft.uninstall(hook)


def test_apply_with_a_module_name_selects_by_the_path_below_the_import_root():
    rules = regraft.Rules.parse(BOOM.replace('["**/toymodels/modeling_toy.py"]', '["toymodels/m.py"]'))
    source = 'class ToyModel:\n    def fails(self):\n        raise ValueError("boom")\n'
    elsewhere = "/opt/env/lib/site-packages/toymodels/m.py"
    assert rules.apply(source, elsewhere, versions={}) == source
    patched = rules.apply(source, elsewhere, versions={}, module="toymodels.m")
    assert 'raise ValueError("patched boom")' in patched
    package = rules.apply(source, "/x/toymodels/m/__init__.py", versions={}, module="toymodels.m")
    assert package == source, "a package's file is its __init__.py"


MISPLACED_NONLOCAL = """\
id: misplaced-nonlocal
files: ["**/judged/mod.py"]
match: "x = 1"
action: {replace: "nonlocal q"}
"""


@pytest.mark.parametrize("cached", [False, True])
def test_what_only_a_whole_module_check_refuses_is_refused_at_import(tmp_path, monkeypatch, cached):
    """The hook leaves the check that CPython compiles the whole patched module to its own
    compile(); where compile() refuses, the rules are asked again with every check, so the
    refusal names the rule and the place (a step checks a statement in a loop out of its
    context, and `nonlocal` at module level is an error of the whole module only)."""
    package = tmp_path / "judged"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text("for i in range(2):\n    x = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    rules = regraft.Rules.parse(MISPLACED_NONLOCAL)

    def fresh(on_error):
        for name in ["judged.mod", "judged"]:
            sys.modules.pop(name, None)
        hook = regraft.install(rules, packages=["judged"], versions={}, on_error=on_error,
                               cache=str(cache) if cached else None)
        try:
            return importlib.import_module("judged.mod")
        finally:
            regraft.uninstall(hook)

    for _ in range(2):  # the second start finds what the first left in the cache
        with pytest.raises(regraft.RegraftError,
                           match="nonlocal declaration not allowed at module level") as refused:
            fresh("raise")
        assert not isinstance(refused.value, SyntaxError)
        with pytest.warns(RuntimeWarning, match="nonlocal declaration not allowed at module level"):
            module = fresh("warn")
        assert module.x == 1, "the module imports as it is"
