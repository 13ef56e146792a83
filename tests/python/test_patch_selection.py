"""`patch()` with a whole pack asks only the rules whose `files` select the patched module for
a version: the shipped Whisper rule (`requires: transformers`) does not stop a patch of a
Llama class where no transformers version is known — and a rule that does select the module
still refuses to guess."""

import importlib
import sys
import textwrap
from pathlib import Path

import pytest

import regraft

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def llama(tmp_path, monkeypatch):
    package = tmp_path / "transformers" / "models" / "llama"
    package.mkdir(parents=True)
    for folder in (tmp_path / "transformers", package.parent, package):
        (folder / "__init__.py").write_text("")
    (package / "modeling_llama.py").write_text(textwrap.dedent('''\
        class LlamaMLP:
            def forward(self, x):
                return x
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "transformers" or m.startswith("transformers.")]:
        monkeypatch.delitem(sys.modules, name)
    importlib.invalidate_caches()
    return importlib.import_module("transformers.models.llama.modeling_llama")


def test_a_rule_that_does_not_select_the_module_is_not_asked_for_a_version(llama):
    rules = regraft.Rules.load(str(ROOT / "rules" / "whisper-decoder-layer-positional.yaml"))
    handle = regraft.patch(llama.LlamaMLP, rules)
    assert handle.rules == []
    assert llama.LlamaMLP().forward(3) == 3


def test_a_rule_that_selects_the_module_still_wants_its_version(llama, tmp_path):
    rule = tmp_path / "r.yaml"
    rule.write_text(textwrap.dedent('''\
        id: llama-mlp-double
        requires: {transformers: ">=4.50"}
        files: ["**/models/llama/modeling_llama.py"]
        inside: {class: LlamaMLP, function: forward}
        match: "return x"
        action: {replace: "return x * 2"}
        expect: 1
    '''))
    with pytest.raises(regraft.RuleError, match="whose version is not known"):
        regraft.patch(llama.LlamaMLP, regraft.Rules.load(str(rule)))
    handle = regraft.patch(llama.LlamaMLP, regraft.Rules.load(str(rule)),
                           versions={"transformers": "4.57.6"})
    assert handle.rules == ["llama-mlp-double"]
    assert llama.LlamaMLP().forward(3) == 6
