"""The Python API: the same results as the CLI, typed errors, and patching a class at run time."""

import importlib.util
import inspect
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

import regraft

WHISPER = "examples/whisper/modeling_whisper.py"


def test_whisper_rule_gives_the_same_text_as_the_cli(root, cli):
    source = (root / WHISPER).read_text()
    via_cli = subprocess.run(
        [str(cli), "apply", "-r", "rules", "--with", "transformers=4.57.6", WHISPER],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rules = regraft.Rules.load(root / "rules")
    via_api = rules.apply(source, filename=WHISPER, versions={"transformers": "4.57.6"})
    assert via_api == via_cli
    assert via_api != source
    assert "                causal_mask,\n                encoder_hidden_states,\n                None,\n" in via_api
    # The shortcut loads the rules itself and gives the same text.
    shortcut = regraft.apply(source, root / "rules", filename=WHISPER, versions={"transformers": "4.57.6"})
    assert shortcut == via_api


def test_the_version_gate_and_file_globs_select_rules(root):
    source = (root / WHISPER).read_text()
    rules = regraft.Rules.load(root / "rules" / "whisper-decoder-layer-positional.yaml")
    assert rules.apply(source, filename=WHISPER, versions={"transformers": "4.51.3"}) == source
    assert rules.apply(source, filename="other.py", versions={"transformers": "4.57.6"}) == source
    # Without a file name every rule looks at the source, whatever its globs say.
    assert rules.apply(source, versions={"transformers": "4.57.6"}) != source


def test_dsl_rules_parse_like_yaml(root):
    dsl = textwrap.dedent(
        """\
        rule drop-flag
          match `f($$$, flag=$V, $$$)`
          remove_kwargs [flag]
          expect 1
        """
    )
    rules = regraft.Rules.parse(dsl, format="dsl")
    assert rules.ids == ["drop-flag"]
    assert rules.apply("f(1, flag=True, x=2)\n") == "f(1, x=2)\n"


def test_check_reports_matches_without_editing(root):
    source = (root / WHISPER).read_text()
    rules = regraft.Rules.load(root / "rules")
    report = rules.check(source, filename=WHISPER, versions={"transformers": "4.57.6"})
    check = report["whisper-decoder-layer-positional"]
    assert report.ok
    assert check.status == "applied"
    assert len(check.matches) == 1
    found = check.matches[0]
    assert (found.line, found.column) == (62, 13)
    assert found.bindings["LAYER"] == "decoder_layer"
    assert found.bindings["OUT"] == "layer_outputs"
    assert len(found.edits) == 1 and "causal_mask,\n" in found.edits[0].replacement
    gated = rules.check(source, filename=WHISPER, versions={"transformers": "4.51.3"})
    assert gated["whisper-decoder-layer-positional"].status == "inactive"
    assert "4.51.3" in gated["whisper-decoder-layer-positional"].reason


def test_check_carries_drift_instead_of_raising():
    rules = regraft.Rules.parse("id: need-g\nmatch: g($$$A)\naction: {remove_kwargs: [x]}\nexpect: 1\n")
    report = rules.check("f(x=1)\n")
    assert not report.ok
    assert report["need-g"].status == "failed"
    assert isinstance(report["need-g"].error, regraft.DriftError)
    assert report["need-g"].error.rule_id == "need-g"


def test_versions_default_to_the_running_interpreter():
    # pytest is installed in the interpreter running this test; its version gates the rule.
    text = 'id: gated\nrequires: {pytest: "%s"}\nmatch: f($$$A)\naction: {remove_kwargs: [x]}\n'
    assert regraft.Rules.parse(text % ">=1").apply("f(x=1)\n") == "f()\n"
    assert regraft.Rules.parse(text % "<1").apply("f(x=1)\n") == "f(x=1)\n"
    assert regraft.installed_versions(["pytest", "surely-not-installed-pkg"]) == {
        "pytest": __import__("pytest").__version__
    }
    missing = regraft.Rules.parse(text.replace("pytest", "surely-not-installed-pkg") % ">=1")
    with pytest.raises(regraft.RuleError) as info:
        missing.apply("f(x=1)\n")
    assert info.value.rule_id == "gated"
    assert "version is not known" in str(info.value)


# --- each error class ---------------------------------------------------------------------


def test_rule_error_points_into_the_rule_text():
    with pytest.raises(regraft.RuleError) as info:
        regraft.Rules.parse("id: bad\nmatch: f($$$A)\naction: {remove_kwarg: [x]}\n", name="bad.yaml")
    error = info.value
    assert isinstance(error, regraft.RegraftError)
    assert (error.path, error.line, error.column) == ("bad.yaml", 3, 10)
    assert "remove_kwargs" in error.diagnostic  # the did-you-mean
    assert "\x1b[" not in error.diagnostic  # rendered without colour


def test_a_pattern_that_is_not_python_is_a_rule_error():
    with pytest.raises(regraft.RuleError) as info:
        regraft.Rules.parse("id: bad\nmatch: 'f(($A'\naction: {remove_kwargs: [x]}\n")
    assert info.value.line == 2


def test_drift_error():
    rules = regraft.Rules.parse("id: need-g\nmatch: g($$$A)\naction: {remove_kwargs: [x]}\nexpect: 1\n")
    with pytest.raises(regraft.DriftError) as info:
        rules.apply("f(x=1)\n", filename="m.py")
    assert info.value.rule_id == "need-g"
    assert info.value.path == "m.py"
    assert "drift: rule `need-g` expects exactly 1 match(es) in m.py, found 0" in str(info.value)


def test_conflict_error():
    rules = regraft.Rules.parse(
        "- id: one\n  match: f($$$A)\n  action: {remove_kwargs: [x]}\n"
        "- id: two\n  match: f($$$A)\n  action: {set_kwargs: {x: '2'}}\n"
    )
    with pytest.raises(regraft.ConflictError) as info:
        rules.apply("y = 0\nf(x=1)\n")
    assert info.value.rule_id == "one"
    assert info.value.line == 2


def test_parse_error_for_a_source_that_is_not_python():
    rules = regraft.Rules.parse("id: r\nmatch: f($$$A)\naction: {remove_kwargs: [x]}\n")
    with pytest.raises(regraft.ParseError) as info:
        rules.apply("x = 1\ndef broken(:\n    pass\n", filename="broken.py")
    assert info.value.path == "broken.py"
    assert info.value.line == 2
    assert "not valid Python" in str(info.value)


def test_action_error_when_no_positional_form_exists():
    rules = regraft.Rules.parse(
        "id: pos\nmatch: layer($$$A)\naction: {kwargs_to_positional: {signature: Layer.forward}}\n"
    )
    source = "class Layer:\n    def forward(self, a, *, b=None):\n        pass\n\nlayer(1, b=2)\n"
    with pytest.raises(regraft.ActionError) as info:
        rules.apply(source)
    assert info.value.rule_id == "pos"
    assert info.value.line == 5
    assert "keyword-only" in str(info.value)


def test_a_missing_rule_path_is_an_error(tmp_path):
    with pytest.raises(regraft.RegraftError) as info:
        regraft.Rules.load(tmp_path / "nope")
    assert "nope" in str(info.value)


def test_bad_arguments_are_errors():
    rules = regraft.Rules.parse("id: r\nmatch: f($$$A)\naction: {remove_kwargs: [x]}\n")
    with pytest.raises(regraft.RegraftError, match="not a phase"):
        rules.apply("f()\n", phase="compile")
    with pytest.raises(regraft.RegraftError, match="PEP 440"):
        rules.apply("f()\n", versions={"transformers": "four"})
    with pytest.raises(ValueError):
        rules.apply("f()\n", on_error="ignore")
    with pytest.raises(regraft.RegraftError, match="not a rule format"):
        regraft.Rules.parse("", format="toml")


# --- warnings instead of failures ---------------------------------------------------------


def test_on_error_warn_returns_the_source_unchanged():
    rules = regraft.Rules.parse("id: need-g\nmatch: g($$$A)\naction: {remove_kwargs: [x]}\nexpect: 1\n")
    source = "g2(x=1)\n"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert rules.apply(source, on_error="warn") is source
    assert len(caught) == 1
    assert caught[0].category is RuntimeWarning
    assert "drift: rule `need-g`" in str(caught[0].message)


def test_on_miss_warn_patches_the_rest_and_warns():
    rules = regraft.Rules.parse(
        "- id: need-g\n  match: g($$$A)\n  action: {remove_kwargs: [x]}\n  expect: 1\n  on_miss: warn\n"
        "- id: drop-x\n  match: f($$$A)\n  action: {remove_kwargs: [x]}\n"
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert rules.apply("f(x=1)\n") == "f()\n"
    assert [w.category for w in caught] == [RuntimeWarning]
    assert "need-g" in str(caught[0].message)


# --- the runtime patch, end to end --------------------------------------------------------

MODULE = '''\
class Layer:
    """Records how it is called, as a checkpointing wrapper would see it."""

    def __init__(self):
        self.calls = []

    def __call__(self, *args, **kwargs):
        self.calls.append((args, kwargs))
        return self.forward(*args, **kwargs)

    def forward(self, hidden, mask=None, bias=None, scale=1, use_cache=False):
        return hidden * scale + (mask or 0) + (bias or 0) + (10 if use_cache else 0)


class Decoder:
    def __init__(self, layers):
        self.layers = layers

    def forward(self, hidden, mask=None):
        for layer in self.layers:
            hidden = layer(
                hidden,
                mask=mask,  # (bias is skipped)
                use_cache=(mask is not None and max(mask, 0) > 0),
                scale=2,
            )
        return hidden
'''

RULE = """\
id: decoder-layer-positional
inside:
  class: Decoder
  function: forward
  loop: "for $LAYER in self.layers"
match: "$OUT = $LAYER($$$ARGS)"
action:
  kwargs_to_positional:
    signature: Layer.forward
expect: 1
"""


def test_patching_a_class_at_run_time(tmp_path, monkeypatch):
    (tmp_path / "toy_model.py").write_text(MODULE)
    spec = importlib.util.spec_from_file_location("toy_model", tmp_path / "toy_model.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "toy_model", module)
    spec.loader.exec_module(module)

    before = module.Decoder([module.Layer(), module.Layer()])
    expected = before.forward(3, mask=1)
    assert all(kwargs for _, kwargs in (c for layer in before.layers for c in layer.calls))

    # What a runtime patcher does: the class's source, rewritten, executed in its module.
    rules = regraft.Rules.parse(RULE)
    source = inspect.getsource(module.Decoder)
    patched = rules.apply(
        source,
        filename=inspect.getsourcefile(module.Decoder),
        context=inspect.getsource(module),
    )
    assert "mask,  # (bias is skipped)\n                None,\n                2,\n" in patched
    namespace = dict(vars(module))
    exec(compile(patched, inspect.getsourcefile(module.Decoder), "exec"), namespace)
    module.Decoder.forward = namespace["Decoder"].forward

    after = module.Decoder([module.Layer(), module.Layer()])
    assert after.forward(3, mask=1) == expected
    for layer in after.layers:
        assert len(layer.calls) == 1
        args, kwargs = layer.calls[0]
        assert kwargs == {}, "the patched call passes positionals only"
        assert args[1:] == (1, None, 2, True)


def test_without_context_the_signature_is_not_guessed(tmp_path):
    rules = regraft.Rules.parse(RULE)
    decoder_only = MODULE[MODULE.index("class Decoder") :]
    with pytest.raises(regraft.ActionError) as info:
        rules.apply(decoder_only)
    # The rendered diagnostic wraps lines: compare its words.
    words = " ".join(info.value.diagnostic.replace("│", " ").split())
    assert "no definition of `Layer.forward` was found" in words
    assert "searched: - <string>: no definition or import of `Layer`" in words
    assert info.value.line == 7


def test_the_module_and_the_command_report_one_version(cli):
    out = subprocess.run([str(cli), "--version"], capture_output=True, text=True, check=True)
    # `regraft 0.1.0 (COMMIT DATE)`: the build after the version the module reports.
    assert out.stdout.split()[:2] == ["regraft", regraft.__version__]
    assert out.stdout.split()[2].startswith("("), out.stdout


GENERIC_RULE = """\
id: layers-positional
inside:
  class:
    has: "self.$LIST = nn.ModuleList([$CLS($$$A) for $I in $R])"
  function: forward
  loop: "for $LAYER in self.$LIST"
match: "$OUT = $LAYER($$$ARGS)"
action:
  kwargs_to_positional:
    signature: $CLS.forward
"""

BASE_MODULE = """\
class BaseLayer:
    def forward(self, hidden, mask=None, bias=None):
        return hidden
"""

MODEL_MODULE = """\
from ..base.modeling_base import BaseLayer as Inherited


class ToyLayer(Inherited):
    pass


class ToyModel:
    def __init__(self, config):
        self.layers = nn.ModuleList([ToyLayer(config) for _ in range(2)])

    def forward(self, hidden, m, b):
        for layer in self.layers:
            hidden = layer(hidden, bias=b, mask=m)
        return hidden
"""


def test_a_context_of_modules_is_followed_through_imports_and_bases():
    rules = regraft.Rules.parse(GENERIC_RULE)
    patched = rules.apply(
        MODEL_MODULE,
        versions={},
        context={"pkg.models.base.modeling_base": BASE_MODULE},
        module="pkg.models.toy.modeling_toy",
    )
    assert "hidden = layer(hidden, m, b)" in patched
    # Without the base module, the lookup fails and says where it looked.
    with pytest.raises(regraft.ActionError) as info:
        rules.apply(
            MODEL_MODULE,
            versions={},
            context={},
            module="pkg.models.toy.modeling_toy",
        )
    words = " ".join(info.value.diagnostic.replace("│", " ").split())
    assert "no module `pkg.models.base.modeling_base` in the context" in words


def test_the_wheel_installs_the_regraft_command(tmp_path):
    """`pip install .` puts `regraft` on PATH next to the interpreter, from the same library."""
    import subprocess

    command = Path(sys.executable).parent / "regraft"
    assert command.exists()
    out = subprocess.run([str(command), "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith(f"regraft {regraft.__version__} ("), out.stdout
    (tmp_path / "r.yaml").write_text('id: r\nmatch: "f($X, a=$A)"\naction: {remove_kwargs: [a]}\nexpect: 1\n')
    (tmp_path / "m.py").write_text("f(1, a=2)\n")
    out = subprocess.run([str(command), "apply", "-r", "r.yaml", "m.py"], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "f(1)\n"
    # A bad rule exits 2 with the diagnostic, as the Rust binary does.
    (tmp_path / "bad.yaml").write_text("id: r\nmatch: f(\n")
    out = subprocess.run([str(command), "lint", "-r", "bad.yaml"], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 2 and "bad.yaml" in out.stderr


def test_the_fingerprint_is_of_the_rule_texts_loaded(tmp_path):
    rule = 'id: r\nmatch: "f($X)"\naction: {replace: "g($X)"}\n'
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "r.yaml").write_text(rule)
    a, b = (regraft.Rules.load(tmp_path / name).fingerprint for name in ("a", "b"))
    assert a == b and len(a) == 64
    # Files that hold no rules do not count; a changed rule does.
    (tmp_path / "a" / "notes.txt").write_text("not a rule file")
    assert regraft.Rules.load(tmp_path / "a").fingerprint == a
    (tmp_path / "a" / "r.yaml").write_text(rule.replace("g($X)", "h($X)"))
    assert regraft.Rules.load(tmp_path / "a").fingerprint != a


def test_a_malformed_version_is_a_rule_error():
    rules = regraft.Rules.parse('id: r\nrequires: {transformers: ">=4"}\nmatch: "f($X)"\naction: {replace: "g($X)"}\n')
    with pytest.raises(regraft.RuleError, match="not a PEP 440 version"):
        rules.apply("f(1)\n", versions={"transformers": "banana"})


def test_python_minus_m_regraft_names_the_program_regraft():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "regraft", "--help"], capture_output=True,
                         text=True, check=True)
    assert "Usage: regraft " in out.stdout, out.stdout
    assert "__main__" not in out.stdout
