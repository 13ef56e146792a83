"""pytest plugin (off unless asked): ``pytest --regraft RULES`` collects regraft's checks as
test items, so a patcher's ordinary test run catches upstream drift.

- every test case of every rule (``regraft test``), named ``<rule-id> › <case>``;
- every rule checked against the *installed* packages' source (``regraft apply --check`` over
  the files its ``files`` select in the installed package, at its installed version), named
  ``<rule-id> on <package> <version>``: a pin that no longer holds or a patch that drifted
  fails with regraft's diagnostic.

``-k`` selects by rule id (items carry it in their names). Registered through the ``pytest11``
entry point; nothing happens without ``--regraft``.
"""

import importlib.util
import json
import os
import re
import subprocess
import sys
from typing import Dict, List, Optional, Tuple

import pytest

_CASE = re.compile(r"^(PASS|FAIL|UPDATED) (\S+) › (.+?)(?:: (.*))?$")


def pytest_addoption(parser):
    group = parser.getgroup("regraft")
    group.addoption("--regraft", action="append", default=[], metavar="RULES",
                    help="collect the test cases and installed-package checks of these rule files or folders")


class RegraftFailure(Exception):
    """A regraft check that did not pass; its text is regraft's own report."""


class RegraftItem(pytest.Item):
    """One regraft check: its outcome was computed at collection (one run per rule folder)."""

    def __init__(self, *, failure: Optional[str], where: str, **kw):
        super().__init__(**kw)
        self.failure = failure
        self.where = where

    def runtest(self):
        if self.failure is not None:
            raise RegraftFailure(self.failure)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, RegraftFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.where, None, f"regraft: {self.name}"


def _regraft(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "regraft", *args], capture_output=True, text=True, env=env)


def _cases(path: str) -> List[Tuple[str, Optional[str]]]:
    """``(rule › case, failure text or None)`` for every case ``regraft test`` runs."""
    run = _regraft("test", "-r", path)
    out: List[Tuple[str, Optional[str]]] = []
    for line in run.stdout.splitlines():
        found = _CASE.match(line)
        if found:
            status, rule, case, why = found.groups()
            out.append((f"{rule} › {case}", None if status != "FAIL" else (why or "failed")))
        elif out and out[-1][1] is not None and not re.match(r"^(NO TESTS|\d+ passed)", line):
            name, failure = out[-1]
            out[-1] = (name, failure + "\n" + line)
    if run.returncode not in (0, 1):
        out.append((f"regraft test {path}", run.stderr.strip() or f"exited {run.returncode}"))
    return out


def _installed(package: str) -> Optional[Tuple[str, str]]:
    """The installed package's source folder and version, without importing it."""
    from importlib import metadata

    try:
        version = metadata.version(package)
        spec = importlib.util.find_spec(package)
    except (metadata.PackageNotFoundError, ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0], version


def _installed_checks(path: str) -> List[Tuple[str, Optional[str]]]:
    """``(rule on package version, failure text or None)`` for each rule, checked against the
    installed packages its ``requires`` names."""
    from . import Rules

    rules = Rules.load(path)
    found: Dict[str, Tuple[str, str]] = {}
    for package in rules.packages:
        where = _installed(package)
        if where is not None:
            found[package] = where
    if not found:
        return []
    label = ", ".join(f"{p} {v}" for p, (_, v) in sorted(found.items()))
    withs = [a for p, (_, v) in sorted(found.items()) for a in ("--with", f"{p}={v}")]
    dirs = [d for d, _ in found.values()]
    run = _regraft("apply", "--check", "--no-config", "-r", path, *withs, "--format", "json", *dirs)
    failures: Dict[str, List[str]] = {}
    try:
        files = json.loads(run.stdout)
    except ValueError:
        return [(f"regraft apply --check {path}", run.stderr.strip() or f"exited {run.returncode}")]
    for entry in files:
        error = entry.get("error")
        if not error:
            continue
        named = re.findall(r"rule `([^`]+)`", error.get("message", ""))
        detail = _regraft("apply", "--check", "--no-config", "-r", path, *withs, entry["path"]).stderr
        for rule in named or ["(file)"]:
            failures.setdefault(rule, []).append(detail.strip() or error.get("message", ""))
    return [(f"{rule} on {label}", "\n\n".join(failures[rule]) if rule in failures else None)
            for rule in rules.ids]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    # First, so `-k` (the mark plugin's deselection, later in this hook) sees these items.
    for path in config.getoption("regraft"):
        path = os.path.abspath(path)
        for name, failure in _cases(path) + _installed_checks(path):
            items.append(RegraftItem.from_parent(session, name=name, failure=failure, where=path))
