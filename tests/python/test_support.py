"""A declared support window: `install(supports=..., outside_support=...)` decides what happens
on a package version the rules were not written for, before anything is patched."""

import sys
import warnings

import pytest

import regraft

from test_runtime import POSITIONAL


def _install(**kw):
    return regraft.install(regraft.Rules.parse(POSITIONAL), packages=["toymodels"],
                           versions={"transformers": "4.40.0"}, **kw)


def test_outside_the_window_warns_skips_or_raises():
    with pytest.warns(RuntimeWarning, match=r"transformers 4\.40\.0 is outside .*>=4\.46"):
        hook = _install(supports={"transformers": ">=4.46"})
    assert hook in sys.meta_path, "warn: installed all the same"
    regraft.uninstall(hook)
    with pytest.warns(RuntimeWarning, match="not installed"):
        hook = _install(supports={"transformers": ">=4.46"}, outside_support="skip")
    assert hook not in sys.meta_path, "skip: nothing patched"
    with pytest.raises(regraft.RegraftError, match="outside the versions"):
        _install(supports={"transformers": ">=4.46"}, outside_support="error")
    with pytest.raises(regraft.RuleError, match="not a PEP 440 specifier"):
        _install(supports={"transformers": ">=four"})
    with pytest.raises(ValueError, match="outside_support"):
        _install(supports={}, outside_support="maybe")


@pytest.mark.parametrize("metadata, shown", [
    ("Metadata-Version: 2.1\nName: brokenpkg\n", "version unreadable"),
    ("Metadata-Version: 2.1\nName: brokenpkg\nVersion: not a version\n", "not a PEP 440"),
])
def test_an_installed_version_that_cannot_be_read_is_outside_the_window(
        tmp_path, monkeypatch, metadata, shown):
    info = tmp_path / "brokenpkg-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(metadata)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(regraft.RegraftError, match=shown):
        _install(supports={"brokenpkg": ">=1"}, outside_support="error")
    with pytest.warns(RuntimeWarning, match=shown):
        hook = _install(supports={"brokenpkg": ">=1"}, outside_support="skip")
    assert hook not in sys.meta_path


@pytest.mark.parametrize("supports", [{"transformers": ">=4.30,<5"},
                                      {"surely-not-installed-pkg": ">=1"}])
def test_inside_the_window_or_not_installed_installs_quietly(supports):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hook = _install(supports=supports, outside_support="error")
    assert hook in sys.meta_path
    regraft.uninstall(hook)
