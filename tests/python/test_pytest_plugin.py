"""The pytest plugin, run by pytest's own `pytester`: `--regraft RULES` turns rule test cases
and checks against an installed package into items, with regraft's diagnostic as the
failure text and `-k` selecting by rule id."""

import textwrap

pytest_plugins = ["pytester"]

RULES = """\
id: holds
requires: {fakepkg: ">=1"}
files: ["**/fakepkg/core.py"]
inside: {class: Engine}
match: "def run($$$P): $$$B"
expect: 1
---
id: drifted
requires: {fakepkg: ">=1"}
files: ["**/fakepkg/core.py"]
inside: {class: Engine}
match: "def start($$$P): $$$B"
expect: 1
"""


def _project(pytester, monkeypatch, rules=RULES):
    site = pytester.mkdir("site")
    pkg = site / "fakepkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "core.py").write_text("class Engine:\n    def run(self, x):\n        return x\n")
    info = site / "fakepkg-1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakepkg\nVersion: 1.2\n")
    rules_dir = pytester.mkdir("rules")
    (rules_dir / "pins.yaml").write_text(rules)
    case = rules_dir / "holds.tests"
    case.mkdir()
    (case / "holds-here.py").write_text(textwrap.dedent("""\
        # regraft: with fakepkg=1.2
        # regraft: unchanged
        class Engine:
            def run(self, x):
                return x
        """))
    monkeypatch.setenv("PYTHONPATH", str(site))
    return rules_dir


def test_cases_and_installed_checks_are_items(pytester, monkeypatch):
    rules = _project(pytester, monkeypatch)
    result = pytester.runpytest_subprocess("--regraft", str(rules), "-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "*PASSED*holds › holds-here*",
        "*PASSED*holds on fakepkg 1.2*",
        "*FAILED*drifted on fakepkg 1.2*",
    ])
    result.stdout.fnmatch_lines(["*drift: rule `drifted` expects exactly 1 match(es)*"])


def test_k_selects_by_rule_id_and_nothing_runs_without_the_option(pytester, monkeypatch):
    rules = _project(pytester, monkeypatch)
    result = pytester.runpytest_subprocess("--regraft", str(rules), "-k", "holds", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, deselected=1)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes()
