"""The real definition behind a wrapper: `patch` follows `__wrapped__` and, where a decorator
hides a method without `functools.wraps` (transformers 5.13's `@force_accelerate_hooks`), the
wrapper's closure to the function written as that method; a wrapper whose closure holds none
is refused with the file and line of the wrapper, never edited."""

import importlib
import sys
import textwrap

import pytest

import regraft

MODULE = '''\
def hide(fn):
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


def foreign(fn):
    def wrapper(*args, **kwargs):
        return 0
    return wrapper


class Model:
    @hide
    def forward(self, x):
        return x + 1

    @foreign
    def other(self, x):
        return x + 1


@hide
def helper(x):
    return x + 1
'''

RULE = """\
id: plus-two
files: ["**/wrapped_pkg/mod.py"]
match: "return x + 1"
action: {replace: "return x + 2"}
expect: {min: 1}
"""


@pytest.fixture
def mod(tmp_path, monkeypatch):
    pkg = tmp_path / "wrapped_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m.startswith("wrapped_pkg")]:
        del sys.modules[name]
    yield importlib.import_module("wrapped_pkg.mod")
    for name in [m for m in sys.modules if m.startswith("wrapped_pkg")]:
        del sys.modules[name]


def _rule(scope):
    return regraft.Rules.parse(RULE.replace("match:", f"inside: {scope}\nmatch:"))


def test_a_method_hidden_by_a_wrapper_without_wraps_is_patched_through_the_closure(mod):
    handle = regraft.patch(mod.Model.forward, _rule("{class: Model, function: forward}"), versions={})
    assert handle.changed
    # The wrapper is what the class holds; it calls the patched function.
    assert mod.Model().forward(1) == 3


def test_a_module_function_hidden_by_a_wrapper_is_patched_too(mod):
    handle = regraft.patch(mod.helper, _rule("{function: helper}"), versions={})
    assert handle.changed
    assert mod.helper(1) == 3


def test_a_wrapper_that_holds_no_function_of_the_method_is_refused_with_its_place(mod):
    with pytest.raises(regraft.RegraftError) as error:
        regraft.patch(mod.Model, _rule("{class: Model, function: other}"), versions={})
    message = str(error.value)
    assert "Model.other: the class holds `foreign.<locals>.wrapper`" in message, message
    assert "mod.py:8)" in message, message
    assert "without `functools.wraps`" in message, message
    assert mod.Model().other(1) == 0, "nothing was edited"
