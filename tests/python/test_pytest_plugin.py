"""The pytest plugin, run by pytest's own `pytester` in a fresh pytest process each time:
`--regraft RULES` collects one collector per rule file, one per rule, and items with real
node ids (`rules/x.yaml::rule-id::case`, `rules/x.yaml::rule-id::installed`) whose regraft runs
happen when they run. The installed packages are fake distributions in a site folder on
PYTHONPATH: a package (`fakepkg`) and a single module (`solo`), each with its RECORD."""

import textwrap
import xml.etree.ElementTree as ElementTree
from importlib import metadata

import pytest

pytest_plugins = ["pytester"]

PINS = """\
id: holds
requires: {fakepkg: ">=1"}
files: ["**/fakepkg/core.py"]
inside: {class: Engine}
match: "def run($$$P): $$$B"
expect: 1
tests:
  - name: inline-unchanged
    with: {fakepkg: "1.2"}
    before: "class Engine:\\n    def run(self, x):\\n        return x\\n"
    unchanged: true
---
# No leading `**/`: the glob selects the installed file by its path below site-packages.
id: drifted
requires: {fakepkg: ">=1"}
files: ["fakepkg/core.py"]
inside: {class: Engine}
match: "def start($$$P): $$$B"
expect: 1
---
id: elsewhere
requires: {notinstalled: ">=1"}
files: ["**/notinstalled/*.py"]
match: "f($X)"
expect: 1
"""

SOLO = """\
id: solo-holds
requires: {solo: ">=1"}
files: ["solo.py"]
match: "def helper($$$P): $$$B"
expect: 1
---
id: solo-drifted
requires: {solo: ">=1"}
files: ["**/solo.py"]
match: "def gone($$$P): $$$B"
expect: 1
"""

IDS = [
    "rules/pins.yaml::holds::inline-unchanged",
    "rules/pins.yaml::holds::holds-here",
    "rules/pins.yaml::holds::installed",
    "rules/pins.yaml::drifted::installed",
    "rules/pins.yaml::elsewhere::installed",
    "rules/solo.yaml::solo-holds::installed",
    "rules/solo.yaml::solo-drifted::installed",
]


def _distribution(site, name, version, files):
    """A distribution installed in `site`: its files, METADATA and the RECORD listing them."""
    for path, text in files.items():
        target = site / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    listed = [*files, f"{info.name}/METADATA", f"{info.name}/RECORD"]
    (info / "RECORD").write_text("".join(f"{p},,\n" for p in listed))


@pytest.fixture
def project(pytester, monkeypatch):
    """A project with `rules/` (pins.yaml, solo.yaml) and the packages they check installed."""
    site = pytester.mkdir("site")
    _distribution(site, "fakepkg", "1.2", {
        "fakepkg/__init__.py": "",
        "fakepkg/core.py": "class Engine:\n    def run(self, x):\n        return x\n",
    })
    _distribution(site, "solo", "1.0", {"solo.py": "def helper(x):\n    return x\n"})
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.delenv("REGRAFT_BOOTSTRAP", raising=False)
    rules = pytester.mkdir("rules")
    (rules / "pins.yaml").write_text(PINS)
    (rules / "solo.yaml").write_text(SOLO)
    (rules / "holds.tests").mkdir()
    (rules / "holds.tests" / "holds-here.py").write_text(textwrap.dedent("""\
        # regraft: with fakepkg=1.2
        # regraft: unchanged
        class Engine:
            def run(self, x):
                return x
        """))
    return pytester


# Hypothesis's plugin takes most of an inner run's start: these runs do not need it.
QUIET = ("-p", "no:hypothesispytest")


def _run(pytester, *args):
    return pytester.runpytest_subprocess(*QUIET, "-p", "no:cacheprovider", *args)


def test_node_ids_are_file_rule_case_and_nothing_runs_at_collection(project):
    # A case whose `# regraft:` line is wrong fails `regraft test` itself: collecting does not
    # run it, so collection is clean.
    (project.path / "rules" / "drifted.tests").mkdir()
    (project.path / "rules" / "drifted.tests" / "bad-directive.py").write_text(
        "# regraft: bogus\nx = 1\n")
    result = _run(project, "--regraft", "rules", "--collect-only", "-q")
    assert result.ret == 0
    ids = IDS[:3] + ["rules/pins.yaml::drifted::bad-directive"] + IDS[3:]
    result.stdout.fnmatch_lines([*ids, "", "8 tests collected*"], consecutive=True)
    result = _run(project, "--regraft", "rules")
    result.stdout.fnmatch_lines(["collected 8 items"])
    # The broken case fails alone, with regraft's message; every other case still ran.
    result.assert_outcomes(passed=4, failed=3, skipped=1)
    result.stdout.fnmatch_lines(["*bogus*"])


def test_a_drifted_rule_fails_with_regrafts_diagnostic_first(project):
    result = _run(project, "--regraft", "rules", "-rfs")
    result.assert_outcomes(passed=4, failed=2, skipped=1)
    # The glob without `**/` selects the installed file: its drift is caught.
    result.stdout.fnmatch_lines([
        "*_ regraft: drifted on the installed packages _*",
        "rule `drifted` is missing on fakepkg 1.2: found 0, wanted exactly 1 in "
        "fakepkg/core.py; searched class `Engine` for `def start($$$P): $$$B`",
        "",
        "regraft explain drifted --in fakepkg/core.py:",
        "in fakepkg/core.py:",
        "  0 matches",
    ], consecutive=True)
    result.stdout.fnmatch_lines(["*near miss for rule `drifted`: wants `start`, found `run`*"])
    # The single-module distribution: its file is `solo.py`, selected with or without `**/`.
    result.stdout.fnmatch_lines([
        "*_ regraft: solo-drifted on the installed packages _*",
        "rule `solo-drifted` is missing on solo 1.0: found 0, wanted exactly 1 in solo.py*",
    ], consecutive=True)
    result.stdout.fnmatch_lines([
        "FAILED rules/pins.yaml::drifted::installed*",
        "FAILED rules/solo.yaml::solo-drifted::installed*",
    ])
    # A rule whose package is not installed skips its own item, naming the package; the other
    # rules are still checked.
    result.stdout.fnmatch_lines(["SKIPPED [[]1[]] rules/pins.yaml:*: notinstalled is not installed "
                                 "(rule `elsewhere` names it)"])
    assert "selects no file" not in result.stdout.str()


def test_a_rule_whose_edit_the_installed_package_never_runs_fails_as_unreached(pytester, monkeypatch):
    # `Engine.run` is defined and matched, but `fakepkg.api.start` calls `Engine.go` only:
    # the patch applies and would never run.
    site = pytester.mkdir("site")
    _distribution(site, "fakepkg", "1.2", {
        "fakepkg/__init__.py": "",
        "fakepkg/core.py": "class Engine:\n    def run(self, x):\n        return x\n\n"
                           "    def go(self, x):\n        return x\n",
        "fakepkg/api.py": "from .core import Engine\n\n\ndef start():\n    return Engine().go(1)\n",
    })
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.delenv("REGRAFT_BOOTSTRAP", raising=False)
    rules = pytester.mkdir("rules")
    (rules / "reach.yaml").write_text(textwrap.dedent("""\
        id: patch-run
        requires: {fakepkg: ">=1"}
        files: ["**/fakepkg/core.py"]
        inside: {class: Engine}
        match: "def run($$$P): $$$B"
        reached_from: [fakepkg.api.start]
        expect: 1
        ---
        id: patch-go
        requires: {fakepkg: ">=1"}
        files: ["**/fakepkg/core.py"]
        inside: {class: Engine}
        match: "def go($$$P): $$$B"
        reached_from: [fakepkg.api.start]
        expect: 1
        """))
    result = _run(pytester, "--regraft", "rules", "-rf")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*_ regraft: patch-run on the installed packages _*",
        "rule `patch-run` is unreached on fakepkg 1.2: no call from fakepkg.api.start reaches "
        "fakepkg.core.Engine.run",
    ], consecutive=True)


def test_k_selects_by_rule_id(project):
    result = _run(project, "--regraft", "rules", "-k", "drifted")
    result.assert_outcomes(failed=2, deselected=5)
    result = _run(project, "--regraft", "rules", "-k", "holds and not solo")
    result.assert_outcomes(passed=3, deselected=4)


def test_a_node_id_argument_selects_within_the_rules(project):
    result = _run(project, "--regraft", "rules", "rules/pins.yaml::holds", "-q")
    result.assert_outcomes(passed=3)


def test_a_broken_rule_file_is_a_collection_error(project):
    rules = project.path / "rules"
    (rules / "broken.yaml").write_text('id: broken\nmatch: "f("\nexpect: 1\n')
    (rules / "empty.yaml").write_text("# no rule here\n")
    result = _run(project, "--regraft", "rules")
    assert result.ret == pytest.ExitCode.INTERRUPTED  # 2: collection errors
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output and "Traceback" not in output
    result.stdout.fnmatch_lines([
        "*ERROR collecting rules/broken.yaml*",
        "*`match` is not valid Python*",
    ])
    result.stdout.fnmatch_lines(["*ERROR collecting rules/empty.yaml*", "*holds no rule*"])
    # The other files still collect and run when asked to.
    result = _run(project, "--regraft", "rules", "--continue-on-collection-errors")
    result.assert_outcomes(passed=4, failed=2, skipped=1, errors=2)


def test_a_rule_naming_a_rule_of_a_broken_file_is_blamed_itself(project):
    rules = project.path / "rules"
    (rules / "a.yaml").write_text('id: a\nafter: [b]\nmatch: "f($X)"\nexpect: 0\n')
    (rules / "b.yaml").write_text('id: b\nmatch: "f("\nexpect: 0\n')
    result = _run(project, "--regraft", "rules", "--continue-on-collection-errors")
    result.stdout.fnmatch_lines(["*ERROR collecting rules/a.yaml*", "*`after` names `b`*"])
    result.stdout.fnmatch_lines(["*ERROR collecting rules/b.yaml*"])
    result.assert_outcomes(passed=4, failed=2, skipped=1, errors=2)


def test_a_wrong_path_is_a_usage_error(project):
    result = _run(project, "--regraft", "nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # 4
    result.stderr.fnmatch_lines(["ERROR: --regraft nope: no such file or folder"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    project.mkdir("empty")
    result = _run(project, "--regraft", "empty")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --regraft empty: no rule file*"])


def test_xdist_workers_report_the_same(project):
    result = _run(project, "--regraft", "rules", "-p", "xdist", "-n", "2")
    result.stdout.fnmatch_lines(["*2 workers [[]7 items[]]*"])
    result.assert_outcomes(passed=4, failed=2, skipped=1)


def test_last_failed_reruns_only_the_failures(project):
    first = project.runpytest_subprocess(*QUIET, "--regraft", "rules")
    first.assert_outcomes(passed=4, failed=2, skipped=1)
    again = project.runpytest_subprocess(*QUIET, "--regraft", "rules", "--lf", "-q")
    again.assert_outcomes(failed=2, deselected=5)
    again.stdout.fnmatch_lines(["FAILED rules/pins.yaml::drifted::installed*",
                                "FAILED rules/solo.yaml::solo-drifted::installed*"])


def test_junit_xml_names_file_and_rule_as_the_class(project):
    _run(project, "--regraft", "rules", "--junitxml=report.xml")
    cases = ElementTree.parse(project.path / "report.xml").getroot().iter("testcase")
    found = sorted((c.get("classname"), c.get("name")) for c in cases)
    assert found == sorted([
        ("rules.pins.yaml.holds", "inline-unchanged"),
        ("rules.pins.yaml.holds", "holds-here"),
        ("rules.pins.yaml.holds", "installed"),
        ("rules.pins.yaml.drifted", "installed"),
        ("rules.pins.yaml.elsewhere", "installed"),
        ("rules.solo.yaml.solo-holds", "installed"),
        ("rules.solo.yaml.solo-drifted", "installed"),
    ])


def test_a_failing_case_shows_the_diff_against_its_snapshot(project):
    rules = project.path / "rules"
    (rules / "flag.yaml").write_text(textwrap.dedent("""\
        id: adds-flag
        match: "f($$$A)"
        action: {set_kwargs: {flag: "True"}}
        expect: {min: 0}
        """))
    (rules / "adds-flag.tests").mkdir()
    (rules / "adds-flag.tests" / "call.py").write_text("y = f(1)\n")
    (rules / "adds-flag.tests" / "call.expected.py").write_text("y = f(1, flag=False)\n")
    result = _run(project, "--regraft", "rules/flag.yaml", "-rs")
    result.assert_outcomes(failed=1, skipped=1)
    result.stdout.fnmatch_lines([
        "*_ regraft: adds-flag › call _*",
        "output differs from rules/adds-flag.tests/call.expected.py",
    ], consecutive=True)
    result.stdout.fnmatch_lines(["-y = f(1, flag=False)", "+y = f(1, flag=True)"])
    result.stdout.fnmatch_lines(["SKIPPED*rule `adds-flag` names no package*"])


def test_gates_and_shared_ids(project):
    gates = project.mkdir("gates")
    (gates / "one.yaml").write_text(textwrap.dedent("""\
        id: gated
        requires: {fakepkg: "<1"}
        files: ["**/core.py"]
        match: "def run($$$P): $$$B"
        expect: 1
        ---
        id: retired
        fixed_upstream: {fakepkg: ">=1"}
        files: ["**/core.py"]
        match: "def run($$$P): $$$B"
        expect: 1
        ---
        id: redundant
        requires: {fakepkg: ">=1"}
        files: ["**/core.py"]
        match: "return $X"
        action: {replace: "return $X"}
        expect: 1
        ---
        id: same
        requires: {fakepkg: ">=1"}
        files: ["**/core.py"]
        match: "def run($$$P): $$$B"
        expect: 1
        """))
    # The same id in another file: regraft calls them `one/same` and `two/same`.
    (gates / "two.yaml").write_text(textwrap.dedent("""\
        id: same
        requires: {fakepkg: ">=1", solo: ">=1"}
        files: ["**/core.py", "solo.py"]
        match: "def run($$$P): $$$B"
        expect: 1
        """))
    result = _run(project, "--regraft", "gates", "-rfs")
    result.assert_outcomes(passed=2, failed=1, skipped=2, warnings=1)
    result.stdout.fnmatch_lines([
        "*rule `gated` is inactive on fakepkg 1.2: fakepkg 1.2 does not satisfy <1",
        "*rule `retired` is retired on fakepkg 1.2: fixed upstream in fakepkg >=1*",
    ])
    result.stdout.fnmatch_lines(["*RegraftWarning: rule `redundant` is redundant on fakepkg 1.2*"])
    # The rule of two.yaml, checked over both packages, misses in solo.py: its own explain.
    result.stdout.fnmatch_lines([
        "*_ regraft: same on the installed packages _*",
        "rule `same` is missing on fakepkg 1.2, solo 1.0: found 0, wanted exactly 1 in solo.py*",
        "",
        "regraft explain same --in solo.py:",
    ], consecutive=True)
    result.stdout.fnmatch_lines(["FAILED gates/two.yaml::same::installed*"])


@pytest.mark.parametrize("option", [False, True])
def test_regraft_is_imported_only_with_the_option(project, option):
    project.makepyfile(test_modules=f"""
        import sys

        def test_modules():
            assert "pytest_regraft" in sys.modules  # the entry point did load
            assert ("regraft" in sys.modules) is {option}
            assert ("regraft._native" in sys.modules) is {option}
        """)
    args = ["--regraft", "rules", "-k", "test_modules"] if option else []
    result = _run(project, "test_modules.py", *args)
    result.assert_outcomes(passed=1, deselected=7 if option else 0)
    [entry] = [e for e in metadata.distribution("regraft").entry_points if e.group == "pytest11"]
    assert entry.value == "pytest_regraft", "the entry point must be the module without regraft"


def test_hostile_paths_ids_and_repeats(project):
    odd = project.mkdir("my rules")
    (odd / "two words.yaml").write_text(textwrap.dedent("""\
        id: odd.id_1-x
        requires: {solo: ">=1"}
        files: ["solo.py"]
        match: "def helper($$$P): $$$B"
        expect: 1
        tests:
          - name: installed
            with: {solo: "1.0"}
            before: "def helper(x):\\n    return x\\n"
            unchanged: true
        """))
    # The same folder twice, and a file of it twice on its own: one pack, each item once.
    result = _run(project, "--regraft", "my rules", "--regraft", "my rules",
                  "--regraft", "my rules/two words.yaml", "--regraft", "my rules/two words.yaml",
                  "--collect-only", "-q")
    result.stdout.fnmatch_lines([
        "my rules/two words.yaml::odd.id_1-x::installed",
        "my rules/two words.yaml::odd.id_1-x::installed-2",
        "",
        "2 tests collected*",
    ], consecutive=True)
    result = _run(project, "--regraft", "my rules", "-k", "odd.id_1-x")
    result.assert_outcomes(passed=2)


@pytest.mark.parametrize("folder", [".regraft", ".config/regraft"])
def test_a_hidden_rule_folder_under_the_collected_arguments_is_collected(project, folder):
    hidden = project.path / folder
    hidden.mkdir(parents=True)
    (hidden / "solo.yaml").write_text(SOLO)
    project.makepyfile(test_plain="def test_plain():\n    pass\n")
    (project.path / ".config" / "test_skipped.py").parent.mkdir(exist_ok=True)
    (project.path / ".config" / "test_skipped.py").write_text("def test_x():\n    assert 0\n")
    # The invocation folder as the argument: it holds the rules, collected there too.
    result = _run(project, "--regraft", folder, "-p", "no:randomly", ".")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([f"FAILED {folder}/solo.yaml::solo-drifted::installed*"])
    # No argument at all: `--regraft` asks for the rules' items alone, not the project's tests.
    result = _run(project, "--regraft", folder, "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    assert "test_plain" not in result.stdout.str()


def test_with_testpaths_and_no_argument_only_the_rule_items_are_collected(project):
    """`pytest --regraft rules` in a project whose `testpaths` name its own tests (this
    repository's do) collects the rules' items only."""
    (project.path / "tests").mkdir()
    (project.path / "tests" / "test_own.py").write_text("def test_own():\n    pass\n")
    project.makeini("[pytest]\ntestpaths = tests\n")
    result = _run(project, "--regraft", "rules", "--collect-only", "-q")
    collected = [l for l in result.stdout.lines if "::" in l]
    assert collected and all(l.startswith("rules/") for l in collected), collected
    result = _run(project, "--collect-only", "-q")
    assert any("test_own" in l for l in result.stdout.lines), result.stdout.lines
