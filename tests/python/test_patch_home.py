"""`patch` finds an object's module by where its code runs (its functions' globals), not by
`__module__`: libraries re-home objects under a public name (numpy's `set_module`), and a
module run with `python -m` is `__main__`."""

import importlib
import os
import subprocess
import sys

import pytest

import regraft

IMPL = '''\
def helper():
    return "impl"


def f():
    return helper()


class C:
    def m(self):
        return helper()
'''

INIT = '''\
from .impl import f, C


def helper():
    return "init"


def f_here():
    return helper()


for _obj in (f, C):
    _obj.__module__ = __name__
'''


def rule(path):
    return regraft.Rules.parse(f"""\
id: bang
files: ["**/{path}"]
match: "return helper()"
action: {{replace: 'return helper() + "!"'}}
""")


@pytest.fixture
def rehomed(tmp_path, monkeypatch):
    package = tmp_path / "rehomed"
    package.mkdir()
    (package / "__init__.py").write_text(INIT)
    (package / "impl.py").write_text(IMPL)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ["rehomed", "rehomed.impl"]:
        sys.modules.pop(name, None)
    yield importlib.import_module("rehomed")
    for name in ["rehomed", "rehomed.impl"]:
        sys.modules.pop(name, None)


@pytest.mark.parametrize("which", ["f", "C", "C.m"])
def test_a_rehomed_object_is_patched_by_the_rules_for_the_file_its_code_is_in(rehomed, which):
    obj = rehomed.f if which == "f" else rehomed.C if which == "C" else rehomed.C.m
    call = rehomed.f if which == "f" else lambda: rehomed.C().m()
    assert rehomed.C.__module__ == rehomed.f.__module__ == "rehomed"
    handle = regraft.patch(obj, rule("rehomed/impl.py"), versions={})
    try:
        assert handle.changed
        # The patched code looks its names up where the original did: impl's `helper`.
        assert call() == "impl!"
    finally:
        handle.revert()
    assert call() == "impl"


def test_the_rules_for_the_named_module_leave_a_rehomed_object_alone(rehomed):
    rules = rule("rehomed/__init__.py")
    for obj in (rehomed.f, rehomed.C):
        handle = regraft.patch(obj, rules, versions={})
        assert not handle.changed, "__init__.py does not hold this code"
    assert rehomed.f() == "impl"
    # What __init__.py does hold is patched by them.
    handle = regraft.patch(rehomed.f_here, rules, versions={})
    assert handle.changed and rehomed.f_here() == "init!"
    handle.revert()


def test_a_module_run_with_python_m_is_selected_by_its_import_name(tmp_path):
    package = tmp_path / "runme"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "main.py").write_text('''\
import regraft


def helper():
    return "main"


def f():
    return helper()


rules = regraft.Rules.parse("""\\
id: bang
files: ["**/runme/main.py"]
match: "return helper()"
action: {replace: 'return helper() + "!"'}
""")
handle = regraft.patch(f, rules, versions={})
print(__name__, handle.changed, f())
''')
    env = dict(os.environ, PYTHONPATH=str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-m", "runme.main"], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["__main__", "True", "main!"]


UTIL = '''\
import functools


def no_grad(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)

    return wrapper
'''

MODEL = '''\
from typing import NamedTuple

from .util import no_grad


def helper():
    return "model"


class PreTrained:
    @no_grad
    def _init_weights(self):
        return helper()

    def forward(self):
        return helper()


class Point(NamedTuple):
    x: int = 0

    def m(self):
        return helper()
'''


def test_functions_written_elsewhere_under_a_classs_name_do_not_rehome_it(tmp_path, monkeypatch):
    """`functools.wraps` copies `__qualname__` onto a wrapper written in the decorator's module,
    and `namedtuple` sets it on functions of `collections`: a class is not re-homed by them."""
    package = tmp_path / "wrapped"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "util.py").write_text(UTIL)
    (package / "model.py").write_text(MODEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    model = importlib.import_module("wrapped.model")
    try:
        for cls, call in [(model.PreTrained, lambda: model.PreTrained().forward()),
                          (model.Point, lambda: model.Point().m())]:
            assert not regraft.patch(cls, rule("wrapped/util.py"), versions={}).changed
            handle = regraft.patch(cls, rule("wrapped/model.py"), versions={})
            assert handle.changed and call() == "model!"
            handle.revert()
            assert call() == "model"
    finally:
        for name in ["wrapped.model", "wrapped.util", "wrapped"]:
            sys.modules.pop(name, None)


def test_code_no_imported_module_holds_is_refused_not_guessed(rehomed):
    # Its own module gone from sys.modules, a re-homed function's code is in a file no
    # imported module is read from: neither `__init__.py`'s rules nor `impl.py`'s may guess.
    impl = sys.modules.pop("rehomed.impl")
    try:
        for path in ["rehomed/impl.py", "rehomed/__init__.py"]:
            with pytest.raises(regraft.RegraftError, match="does not guess"):
                regraft.patch(rehomed.f, rule(path), versions={})
    finally:
        sys.modules["rehomed.impl"] = impl
    assert rehomed.f() == "impl"
