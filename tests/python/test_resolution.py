"""Differential test of signature resolution: small libraries in the shapes Python resolves in
ways a reading of the source can get wrong (C3 order, rebinding, alternative and star imports,
decorators, module-attribute and subscripted bases, a package beside a same-named module).
Each is imported for real; every call regraft converts must bind exactly as the original does
under `inspect.signature(...).bind` of the real callee, on the command line and in the Python
API alike. A refusal is always allowed; a mis-binding never is."""

import importlib
import inspect
import subprocess
import sys
import textwrap

import pytest

import regraft

RULE = """\
id: conv
files: ["**/caller_*.py", "**/caller_*/__init__.py"]
inside: {function: run}
match: "$X = layer($$$A)"
action: {kwargs_to_positional: {signature: Layer.forward}}
"""

CALL = "def run(layer):\n    x = layer(1, b=2, c=3)\n    return x\n"

# name -> (library modules {relative path: text}, the caller's import line)
SHAPES = {
    "diamond": ({"lib_diamond.py": """
        class A:
            def forward(self, a, b=None, c=None): pass
        class B(A): pass
        class C(A):
            def forward(self, a, c=None, b=None): pass
        class Layer(B, C): pass
        """}, "from .lib_diamond import Layer"),
    "later_def": ({"lib_later.py": """
        class Layer:
            def forward(self, a, b=None, c=None): pass
            def forward(self, a, c=None, b=None): pass
        """}, "from .lib_later import Layer"),
    "rebound_class": ({"lib_rebound.py": """
        class Layer:
            def forward(self, a, b=None, c=None): pass
        class Other:
            def forward(self, a, c=None, b=None): pass
        Layer = Other
        """}, "from .lib_rebound import Layer"),
    "alternatives": ({
        "lib_alt_a.py": "class Layer:\n    def forward(self, a, b=None, c=None): pass\n",
        "lib_alt_b.py": "class Layer:\n    def forward(self, a, c=None, b=None): pass\n",
    }, "try:\n    from .lib_alt_a import Layer\nexcept ImportError:\n    pass\nfrom .lib_alt_b import Layer"),
    "star_after": ({
        "lib_star.py": "class Layer:\n    def forward(self, a, c=None, b=None): pass\n",
    }, "class Layer:\n    def forward(self, a, b=None, c=None): pass\nfrom .lib_star import *"),
    "decorator": ({"lib_deco.py": """
        import functools
        def swap(f):
            def g(self, a, c=None, b=None):
                return f(self, a, b, c)
            return g
        class Layer:
            @swap
            def forward(self, a, b=None, c=None): pass
        """}, "from .lib_deco import Layer"),
    "staticmethod_alias": ({"lib_sm.py": """
        sm = staticmethod
        class Layer:
            @sm
            def forward(a, b=None, c=None): pass
        """}, "from .lib_sm import Layer"),
    "subscripted_base": ({"lib_generic.py": """
        from typing import Generic, TypeVar
        T = TypeVar("T")
        class Base(Generic[T]):
            def forward(self, a, c=None, b=None): pass
        class Layer(Base[int]): pass
        """}, "from .lib_generic import Layer"),
    "module_attribute_base": ({
        "lib_mod_base.py": "class Base:\n    def forward(self, a, c=None, b=None): pass\n",
        "lib_mod_child.py": "from . import lib_mod_base\nclass Layer(lib_mod_base.Base): pass\n",
    }, "from .lib_mod_child import Layer"),
    "conditional_def": ({"lib_cond.py": """
        FAST = True
        class Base:
            def forward(self, a, b=None, c=None): pass
        class Layer(Base):
            if FAST:
                def forward(self, a, c=None, b=None): pass
        """}, "from .lib_cond import Layer"),
    "assigned_method": ({"lib_assigned.py": """
        def _impl(self, a, c=None, b=None): pass
        class Layer:
            def forward(self, a, b=None, c=None): pass
            forward = _impl
        """}, "from .lib_assigned import Layer"),
    "package_beats_module": ({
        "lib_pkg.py": "class Layer:\n    def forward(self, a, b=None, c=None): pass\n",
        "lib_pkg/__init__.py": "class Layer:\n    def forward(self, a, c=None, b=None): pass\n",
    }, "from .lib_pkg import Layer"),
    "method_of_unrelated_class_is_no_base": ({"lib_unrelated.py": """
        class Unrelated:
            def forward(self, a, c=None, b=None): pass
        class Layer:
            def forward(self, a, b=None, c=None): pass
        """}, "from .lib_unrelated import Layer"),
}

# Shapes where the exact answer is known and regraft is expected to give it, not refuse.
CONVERTED = {"diamond", "later_def", "alternatives", "subscripted_base", "module_attribute_base",
             "package_beats_module", "method_of_unrelated_class_is_no_base"}


@pytest.fixture
def shapes(tmp_path, monkeypatch):
    pkg = tmp_path / "shapes"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, (libs, import_line) in SHAPES.items():
        for rel, text in libs.items():
            path = pkg / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip())
        (pkg / f"caller_{name}.py").write_text(f"{import_line}\n\n\n{CALL}")
    (tmp_path / "rule.yaml").write_text(RULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    for m in [m for m in sys.modules if m.startswith("shapes")]:
        del sys.modules[m]
    return tmp_path


class Recorder:
    def __call__(self, *args, **kwargs):
        self.call = (args, kwargs)


def _binding(cls, args, kwargs):
    """What the real `cls.forward` binds each parameter to, defaults applied."""
    static = isinstance(inspect.getattr_static(cls, "forward"), staticmethod)
    sig = inspect.signature(cls.forward)
    bound = sig.bind(*args, **kwargs) if static else sig.bind(None, *args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


def _check(shapes_dir, name, patched):
    """`None` where `patched` (the caller's patched text) binds as the original; else why."""
    original = importlib.import_module(f"shapes.caller_{name}")
    rec = Recorder()
    original.run(rec)
    before = rec.call
    patched_name = f"caller_{name}_patched"
    (shapes_dir / "shapes" / f"{patched_name}.py").write_text(patched)
    module = importlib.import_module(f"shapes.{patched_name}")
    rec = Recorder()
    module.run(rec)
    after = rec.call
    layer = original.Layer
    try:
        a, b = _binding(layer, *before), _binding(layer, *after)
    except TypeError as error:
        return f"{name}: the patched call does not bind: {error}"
    return None if a == b else f"{name}: binds {b} instead of {a}"


def test_every_converted_call_binds_as_python_binds_it_on_the_cli(shapes, cli):
    misbound, converted = [], set()
    for name in SHAPES:
        caller = shapes / "shapes" / f"caller_{name}.py"
        out = subprocess.run([str(cli), "apply", "--no-config", "-r", str(shapes / "rule.yaml"), str(caller)],
                             capture_output=True, text=True)
        if out.returncode != 0 or out.stdout == caller.read_text():
            continue
        converted.add(name)
        why = _check(shapes, name, out.stdout)
        if why:
            misbound.append(why)
    assert misbound == []
    assert converted == CONVERTED, converted


def test_the_python_api_resolves_the_same_way(shapes):
    rules = regraft.Rules.parse(RULE)
    pkg = shapes / "shapes"
    # Modules by dotted name, as Python finds them: a package wins over a same-named module.
    context = {}
    for p in sorted(pkg.rglob("*.py")):
        if p.name == "__init__.py" and p.parent != pkg:
            context[f"shapes.{p.parent.name}"] = p.read_text()
        elif p.name != "__init__.py":
            context.setdefault(f"shapes.{p.stem}", p.read_text())
    misbound, converted = [], set()
    for name in SHAPES:
        caller = pkg / f"caller_{name}.py"
        source = caller.read_text()
        try:
            patched = rules.apply(source, filename=str(caller), versions={}, context=context,
                                  module=f"shapes.caller_{name}")
        except regraft.RegraftError:
            continue
        if patched == source:
            continue
        converted.add(name)
        why = _check(shapes, name, patched)
        if why:
            misbound.append(why)
    assert misbound == []
    assert converted == CONVERTED, converted
