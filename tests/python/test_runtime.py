"""The runtime layer: patching live classes, functions and methods, and the import hook."""

import importlib
import inspect
import linecache
import re
import shutil
import subprocess
import sys
import textwrap
import traceback
from pathlib import Path

import pytest

import regraft

HERE = Path(__file__).parent

POSITIONAL = """\
id: toy-layers-positional
files: ["**/toymodels/modeling_toy.py"]
inside:
  class: ToyModel
  function: forward
  loop: "for $L in self.layers"
match: "$X = $L($$$A)"
action:
  kwargs_to_positional: {signature: ToyLayer.forward}
expect: 1
"""

BOOM = """\
id: toy-boom
files: ["**/toymodels/modeling_toy.py"]
inside: {class: ToyModel, function: fails}
match: 'raise ValueError("boom")'
action: {replace: 'raise ValueError("patched boom")'}
expect: 1
"""

DEFAULTS = """\
id: toy-helper-defaults
files: ["**/toymodels/modeling_toy.py"]
match: "def helper($X, scale=SCALE, *, offset=1): $$$B"
action: {replace: "def helper($X, scale=3, *, offset=10): $$$B"}
expect: 1
"""


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """A fresh copy of the toy package, imported from a temporary folder."""
    shutil.copytree(HERE / "toymodels", tmp_path / "toymodels")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m.startswith("toymodels")]:
        del sys.modules[name]
    module = importlib.import_module("toymodels.modeling_toy")
    module.ToyLayer.calls.clear()
    yield module
    for name in [m for m in sys.modules if m.startswith("toymodels")]:
        del sys.modules[name]


def test_a_method_is_patched_in_place_from_its_own_source(toy):
    rules = regraft.Rules.parse(POSITIONAL)
    model = toy.ToyModel()
    method = toy.ToyModel.forward  # a reference taken before the patch
    handle = regraft.patch(toy.ToyModel.forward, rules, versions={})
    assert handle.changed and handle.rules == ["toy-layers-positional"]
    assert model.forward(1, 2, 3) == 1 + 2 * 10 + 3 * 100 + 2 * 10 + 3 * 100
    assert toy.ToyLayer.calls[-1] == (3, []), "the layer now gets positionals only"
    assert method is toy.ToyModel.forward, "the function object is kept: references see the patch"
    assert "x = layer(x, m, b)" in inspect.getsource(toy.ToyModel.forward)
    assert regraft.patched(toy.ToyModel.forward).rules == ["toy-layers-positional"]


def test_a_class_is_patched_method_by_method_and_the_next_patcher_reads_the_patch(toy):
    rules = regraft.Rules.parse(POSITIONAL + "---\n" + BOOM)
    cls = toy.ToyModel
    handle = regraft.patch(cls, rules, versions={})
    assert cls is toy.ToyModel
    assert sorted(handle.rules) == ["toy-boom", "toy-layers-positional"]
    source = inspect.getsource(cls)
    assert "x = layer(x, m, b)" in source and "patched boom" in source
    assert regraft.patched(cls).rules == handle.rules


def test_revert_restores_exactly_what_was_there(toy):
    rules = regraft.Rules.parse(POSITIONAL)
    code = toy.ToyModel.forward.__code__
    original = inspect.getsource(toy.ToyModel)
    handle = regraft.patch(toy.ToyModel, rules, versions={})
    assert toy.ToyModel.forward.__code__ is not code
    handle.revert()
    assert toy.ToyModel.forward.__code__ is code
    assert inspect.getsource(toy.ToyModel) == original
    assert regraft.patched(toy.ToyModel) is None
    handle.revert()  # twice is a no-op


def test_a_second_patch_is_a_no_op_reported_as_already_applied(toy):
    rules = regraft.Rules.parse(POSITIONAL)
    first = regraft.patch(toy.ToyModel.forward, rules, versions={})
    code = toy.ToyModel.forward.__code__
    second = regraft.patch(toy.ToyModel.forward, rules, versions={})
    assert first.changed and not second.changed
    assert second.already_applied == ["toy-layers-positional"]
    assert toy.ToyModel.forward.__code__ is code


def test_functions_keep_their_identity_and_take_new_defaults(toy):
    rules = regraft.Rules.parse(DEFAULTS)
    helper = toy.helper
    assert helper(1) == 1 * 2 + 1
    regraft.patch(toy.helper, rules, versions={})
    assert helper(1) == 1 * 3 + 10, "a reference taken before sees the new code and defaults"
    assert helper.__defaults__ == (3,) and helper.__kwdefaults__ == {"offset": 10}


def test_closures_are_refused_with_a_clear_message(toy):
    rules = regraft.Rules.parse(DEFAULTS)
    step = toy.make_counter(1)
    with pytest.raises(TypeError, match="defined inside a function"):
        regraft.patch(step, rules, versions={})


def test_a_traceback_points_at_the_real_line_and_shows_the_patched_text(toy):
    rules = regraft.Rules.parse(BOOM)
    regraft.patch(toy.ToyModel.fails, rules, versions={})
    with pytest.raises(ValueError, match="patched boom") as info:
        toy.ToyModel().fails(1)
    frame = traceback.extract_tb(info.tb)[-1]
    real_line = next(
        i for i, line in enumerate(Path(toy.__file__).read_text().splitlines(), 1) if 'raise ValueError("boom")' in line
    )
    assert frame.lineno == real_line
    assert frame.line == 'raise ValueError("patched boom")'
    assert toy.ToyModel.fails.__code__.co_firstlineno == real_line - 2


def test_errors_carry_the_module_file_line_and_one_line_str(toy):
    # A keyword the layer does not take: the conversion refuses, at the call's real line.
    broken = POSITIONAL.replace("ToyLayer.forward", "ToyLayer.__call__")
    rules = regraft.Rules.parse(broken)
    with pytest.raises(regraft.ActionError) as info:
        regraft.patch(toy.ToyModel.forward, rules, versions={})
    error = info.value
    assert error.path == toy.__file__ and error.line == 24
    assert "\n" not in str(error)
    assert str(error).startswith("toy-layers-positional: ")
    assert re.search(rf"\({re.escape(toy.__file__)}:24:\d+\)$", str(error)), str(error)
    assert "╭─" in error.diagnostic


def test_on_error_warn_leaves_the_object_as_it_was(toy):
    drifting = POSITIONAL.replace("for $L in self.layers", "for $L in self.blocks")
    rules = regraft.Rules.parse(drifting)
    code = toy.ToyModel.forward.__code__
    with pytest.warns(RuntimeWarning, match="toy-layers-positional"):
        handle = regraft.patch(toy.ToyModel.forward, rules, versions={}, on_error="warn")
    assert not handle.changed
    assert toy.ToyModel.forward.__code__ is code


def test_the_import_hook_patches_on_import_caches_and_survives_reload(toy, tmp_path):
    rules = regraft.Rules.parse(POSITIONAL)
    for name in ["toymodels.modeling_toy", "toymodels"]:
        del sys.modules[name]
    cache = tmp_path / "cache"
    hook = regraft.install(rules, packages=["toymodels"], versions={}, cache=str(cache))
    try:
        module = importlib.import_module("toymodels.modeling_toy")
        assert "x = layer(x, m, b)" in inspect.getsource(module.ToyModel.forward)
        assert (hook.misses, hook.hits) == (1, 0), "the module patched once"
        assert hook.skipped == 1, "the package, which no rule selects, is left to the normal loader"
        assert not isinstance(sys.modules["toymodels"].__spec__.loader, type(module.__spec__.loader))
        module = importlib.reload(module)
        assert "x = layer(x, m, b)" in inspect.getsource(module.ToyModel.forward)
        assert hook.hits == 1, "the reload read the patched source from the cache"
        assert not list((tmp_path / "toymodels").rglob("*.pyc")), "no bytecode of patched code"
    finally:
        regraft.uninstall(hook)
    assert hook not in sys.meta_path
    # A second start (a fresh interpreter) takes the patched source from the cache.
    script = textwrap.dedent(
        f"""
        import sys, inspect, regraft
        sys.path.insert(0, {str(tmp_path)!r})
        rules = regraft.Rules.parse({POSITIONAL!r})
        hook = regraft.install(rules, packages=["toymodels"], versions={{}}, cache={str(cache)!r})
        import toymodels.modeling_toy as m
        assert "x = layer(x, m, b)" in inspect.getsource(m.ToyModel.forward)
        print(hook.hits, hook.misses)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "0"]


def test_rules_for_other_parts_of_the_module_neither_run_nor_drift(toy):
    other_class = """\
id: toy-layer-only
files: ["**/toymodels/modeling_toy.py"]
inside: {class: ToyLayer}
match: "return $X"
action: {replace: "return None"}
expect: 1
"""
    module_level = """\
id: toy-scale
files: ["**/toymodels/modeling_toy.py"]
match: "SCALE = 2"
action: {replace: "SCALE = 3"}
expect: 1
"""
    rules = regraft.Rules.parse("---\n".join([POSITIONAL, other_class, module_level]))
    handle = regraft.patch(toy.ToyModel.forward, rules, versions={})
    assert handle.rules == ["toy-layers-positional"]
    assert toy.ToyLayer().forward(1) == 1, "ToyLayer is not touched by patching ToyModel"
    assert toy.SCALE == 2


def test_a_patch_no_rule_selects_reads_no_source_yet_reports_it(toy, monkeypatch):
    other_file = POSITIONAL.replace("**/toymodels/modeling_toy.py", "**/elsewhere.py")
    gated = POSITIONAL.replace("expect: 1", "expect: 1\nrequires: {torch: '>=99'}").replace(
        "id: toy-layers-positional", "id: toy-gated"
    )
    rules = regraft.Rules.parse("---\n".join([other_file, gated]))
    original = inspect.getsource(toy.ToyModel.forward)

    def unread(*args, **kwargs):
        raise AssertionError("the source was read")

    monkeypatch.setattr(inspect, "getsourcelines", unread)
    handle = regraft.patch(toy.ToyModel.forward, rules, versions={"torch": "2.5"})
    assert (handle.changed, handle.rules, handle.already_applied) == (False, [], [])
    monkeypatch.undo()
    # Asked for, the source is the object's own.
    assert handle.source == original


def test_a_class_read_again_after_its_module_text_changes(toy):
    rules = regraft.Rules.parse(POSITIONAL)
    absent = regraft.Rules.parse(POSITIONAL.replace("expect: 1", "expect: 0").replace("$X = $L", "$X = nothing"))
    # Nothing to do: the class's lines are remembered...
    assert not regraft.patch(toy.ToyModel, absent, versions={}).changed
    # ...until a patch puts new text in the module's linecache entry, which the next read sees.
    first = regraft.patch(toy.ToyModel, rules, versions={})
    assert first.changed and "layer(x, m, b)" in first.source
    again = regraft.patch(toy.ToyModel, rules, versions={})
    assert (again.changed, again.already_applied) == (False, ["toy-layers-positional"])


def test_patch_reads_installed_versions_once_per_process(toy, monkeypatch):
    from regraft import runtime

    rules = regraft.Rules.parse(POSITIONAL.replace("expect: 1", "expect: 1\nrequires: {pytest: '>=1'}"))
    reads = []
    real = regraft.installed_versions

    def counting(packages):
        reads.append(list(packages))
        return real(packages)

    monkeypatch.setattr(regraft, "installed_versions", counting)
    monkeypatch.setattr(runtime, "_VERSIONS", {})
    first = regraft.patch(toy.ToyModel.forward, rules)
    assert first.rules == ["toy-layers-positional"]
    first.revert()
    assert regraft.patch(toy.ToyModel.forward, rules).rules == ["toy-layers-positional"]
    assert reads == [["pytest"]]


def test_apply_on_one_class_s_source_leaves_rules_about_other_classes_alone(toy):
    pin = ('---\nid: layer-pin\nfiles: ["**/toymodels/modeling_toy.py"]\ninside: {class: ToyLayer}\n'
           'match: "def forward($$$P): $$$B"\nexpect: 1\n')
    rules = regraft.Rules.parse(POSITIONAL + pin)
    source = inspect.getsource(toy.ToyModel)
    module_source = inspect.getsource(toy)
    with pytest.raises(regraft.DriftError, match="layer-pin"):
        rules.apply(source, filename=toy.__file__, versions={}, context=module_source)
    patched = rules.apply(source, filename=toy.__file__, versions={}, context=module_source,
                          unit="ToyModel")
    assert "x = layer(x, m, b)" in patched


def test_a_method_s_own_source_is_patched_with_its_class_path_as_unit(toy):
    rules = regraft.Rules.parse(POSITIONAL + "---\n" + BOOM)
    source = inspect.getsource(toy.ToyModel.forward)
    for given in (source, textwrap.dedent(source)):
        out = rules.apply(given, unit="ToyModel.forward", versions={},
                          context=inspect.getsource(toy))
        assert "x = layer(x, m, b)" in out, out
        assert out.splitlines()[0] == given.splitlines()[0], "the method keeps its own indentation"
        # The rule for another method of the class does not drift on this one's source.
    with pytest.raises(regraft.DriftError):
        rules.apply(source, unit="ToyModel", versions={}, context=inspect.getsource(toy))
