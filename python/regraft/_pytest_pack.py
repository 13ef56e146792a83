"""What the pytest plugin knows of one ``--regraft`` path (a *pack*): its rule files and rules,
read at collection, and the runs of ``regraft`` its items report on, made when the first item
that needs one runs and shared by the others.

Collection reads each rule file with ``regraft fmt --to yaml`` (its rules' ids, packages and
inline test names, in regraft's canonical layout) and loads the files together in-process,
which finds what only the whole set shows (``after`` naming a rule that is not there). Items
run ``regraft test --format json`` once for the pack, and ``regraft matrix`` once for each set
of packages its rules name, over the installed files of those distributions
(:mod:`regraft._installed`).
"""

import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from . import _installed
from ._installed import Outcome

RULE_SUFFIXES = (".yaml", ".yml", ".graft")

# Lines of `regraft test`'s human report that start a case, or end the report.
_CASE_LINE = re.compile(r"^(PASS|FAIL|UPDATED) \S+ › ")
_TOTALS_LINE = re.compile(r"^\d+ passed, \d+ failed$")


@dataclass
class Rule:
    """One rule as the plugin knows it after collection."""

    id: str
    """Its id as written in its file (the node's name)."""
    uid: str
    """Its id in the loaded pack: ``pack/id`` where two rule files share the id."""
    file: Path
    cases: List[str]
    """Its test cases, in the order ``regraft test`` runs them: inline, then the files of
    ``<id>.tests/`` by name."""
    packages: List[str]
    """The packages its ``requires`` and ``fixed_upstream`` name (what its version gate
    reads), normalised as regraft normalises them."""
    line: Optional[int] = None
    """Where its id is written (0-based), for reports."""


@dataclass
class RuleFile:
    """A rule file: its rules, or why it cannot be loaded (regraft's diagnostic)."""

    path: Path
    rules: List[Rule] = field(default_factory=list)
    error: Optional[str] = None




def rule_files(root: Path) -> List[Path]:
    """The rule files regraft loads from ``root``: itself, or the ``*.yaml``, ``*.yml`` and
    ``*.graft`` files below it, links not followed, hidden folders included, in regraft's
    order (by path, component by component)."""
    if not root.is_dir():
        return [root]
    found = []
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            if os.path.splitext(name)[1] in RULE_SUFFIXES and not os.path.islink(path) \
                    and os.path.isfile(path):
                found.append(Path(path))
    return sorted(found, key=lambda p: p.relative_to(root).parts)


# The command line of the native module, run without importing the `regraft` package: that
# import is most of a short command's time, and collection runs one command per rule file.
_MAIN = """\
import sys
from importlib.machinery import ExtensionFileLoader
from importlib.util import module_from_spec, spec_from_file_location
loader = ExtensionFileLoader("regraft._native", sys.argv[1])
native = module_from_spec(spec_from_file_location("regraft._native", sys.argv[1], loader=loader))
loader.exec_module(native)
sys.exit(native.main(["regraft", *sys.argv[2:]]))
"""


class Cli:
    """Runs the ``regraft`` command of the regraft this process imported (its native module),
    without colour and without reading a project configuration: the plugin passes everything
    it means."""

    def __init__(self) -> None:
        from . import _native

        self.native = os.path.abspath(_native.__file__)
        # A rule's `effect` runs in the interpreter the tests run in (its packages, its torch).
        self.env = dict(os.environ, NO_COLOR="1")
        self.env.setdefault("REGRAFT_PYTHON", sys.executable)

    def run(self, args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess:
        """``regraft ARGS`` in ``cwd``; its exit code and output, as text."""
        command = [sys.executable, "-I", "-c", _MAIN, self.native, "--color", "never",
                   "--no-config", *args]
        return subprocess.run(command, cwd=str(cwd), env=self.env, capture_output=True,
                              text=True, encoding="utf-8", errors="replace")


def _unquote(value: str) -> str:
    """A YAML scalar as regraft's canonical layout writes ids, names and packages."""
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return json.loads(value)
    return value


def parse_canonical(text: str) -> List[Tuple[str, List[str], List[str]]]:
    """``(id, inline test names, packages)`` of each rule in ``regraft fmt --to yaml``'s
    output, the packages being those its version gate reads (``requires``,
    ``fixed_upstream``). The canonical layout has one document per rule, top-level keys at
    column 0, those packages indented by two and each test case a ``- name:`` item; block
    scalars are indented, so no line of a rule's text starts at column 0."""
    rules = []
    for document in re.split(r"(?m)^---[ \t]*$", text):
        rule_id = None
        tests: List[str] = []
        packages: List[str] = []
        section = None
        for line in document.splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            if line[0] not in " -":
                key, _, value = line.partition(":")
                section = key
                if key == "id":
                    rule_id = _unquote(value)
                continue
            found = re.match(r"^- name:(.*)$", line) if section == "tests" else None
            if found:
                tests.append(_unquote(found.group(1)))
            found = re.match(r"^  ([^\s:#][^:]*):", line) \
                if section in ("requires", "fixed_upstream") else None
            if found and _unquote(found.group(1)) not in packages:
                packages.append(_unquote(found.group(1)))
        if rule_id is not None:
            rules.append((rule_id, tests, packages))
    return rules


def file_cases(rule_file: Path, rule_id: str) -> List[str]:
    """The case files of a rule, as ``regraft test`` finds them: ``NAME.py`` in
    ``<rule-id>.tests/`` beside the rule file, but not the ``NAME.expected.py`` snapshots."""
    folder = rule_file.parent / f"{rule_id}.tests"
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    # Sorted by file name, as regraft sorts them (`a-b.py` before `a.py`).
    return [n[:-3] for n in sorted(names)
            if os.path.splitext(n)[1] == ".py" and not n.endswith(".expected.py")]


def _rule_line(text: str, rule_id: str) -> Optional[int]:
    """The 0-based line where ``rule_id`` is declared (YAML ``id:`` or DSL ``rule``)."""
    quoted = re.escape(rule_id)
    yaml = rf"^(?:-\s+)?id:\s*['\"]?{quoted}['\"]?\s*(?:#.*)?$"
    dsl = rf"^rule\s+{quoted}\s*$"
    found = re.search(f"(?m){yaml}|{dsl}", text)
    return text.count("\n", 0, found.start()) if found else None


class Pack:
    """The rule files of one ``--regraft`` path, loaded together as regraft loads them, and the
    regraft runs their items share."""

    def __init__(self, root: Path, base: Path, cli: Cli) -> None:
        self.root = root
        self.base = base
        self.cli = cli
        self.files: Dict[Path, RuleFile] = {}
        self.rules: List[Rule] = []
        self.error: Optional[str] = None
        """Why the pack as a whole loads nothing, where no one file is to blame."""
        self._loaded = False
        self._cases: Optional[Dict[Tuple[str, int], dict]] = None
        self._case_errors: Dict[str, str] = {}
        self._details: Dict[str, Dict[str, str]] = {}
        self._surveys: Dict[Tuple[str, ...], "_installed.Survey"] = {}
        self._tmp: Optional[str] = None

    def display(self, path: Path) -> str:
        """``path`` as regraft is given it: relative to the invocation folder where it lies
        below it, so diagnostics name the file as the user would."""
        try:
            return str(path.relative_to(self.base))
        except ValueError:
            return str(path)

    # -- collection ----------------------------------------------------------------------

    def load(self) -> None:
        """Reads every rule file once: its rules, or the diagnostic that keeps it from loading."""
        if self._loaded:
            return
        self._loaded = True
        paths = rule_files(self.root)
        with concurrent.futures.ThreadPoolExecutor(max_workers=min(8, len(paths) or 1)) as pool:
            runs = list(pool.map(
                lambda p: self.cli.run(["fmt", "--to", "yaml", self.display(p)], self.base), paths))
        parsed: Dict[Path, list] = {}
        for path, run in zip(paths, runs):
            self.files[path] = RuleFile(path)
            if run.returncode != 0:
                self.files[path].error = (run.stderr.strip()
                                          or f"regraft fmt exited {run.returncode}")
            else:
                parsed[path] = parse_canonical(run.stdout)
        self._load_together(paths, parsed)

    def _load_together(self, paths: List[Path], parsed: Dict[Path, list]) -> None:
        """Loads the files that read alone as one set; a file the set's errors point at is left
        out with its diagnostic, and the rest loaded again."""
        from . import RegraftError, Rules
        from ._native import NativeRules

        healthy = [p for p in paths if p in parsed]
        while healthy:
            texts = []
            try:
                for path in healthy:
                    texts.append(path.read_text(encoding="utf-8-sig"))
                native = NativeRules.parse_many([
                    (t, "dsl" if p.suffix == ".graft" else "yaml", self.display(p))
                    for p, t in zip(healthy, texts)])
            except (RegraftError, OSError, UnicodeDecodeError) as error:
                blamed = self._blame(error, healthy)
                if blamed is None:
                    self.error = getattr(error, "diagnostic", None) or str(error)
                    return
                self.files[blamed].error = getattr(error, "diagnostic", None) or str(error)
                healthy.remove(blamed)
                continue
            self._attach(Rules(native).ids, healthy, texts, parsed)
            return

    def _blame(self, error: Exception, healthy: List[Path]) -> Optional[Path]:
        """The file an error is about, among ``healthy``."""
        named = getattr(error, "path", None) or getattr(error, "filename", None)
        if named is None:
            return None
        for path in healthy:
            if self.display(path) == named or str(path) == os.path.abspath(str(named)):
                return path
        return None

    def _attach(self, ids: List[str], paths: List[Path], texts: List[str],
                parsed: Dict[Path, list]) -> None:
        """Gives each file its rules: the pack's ids are its files' ids in load order."""
        count = sum(len(parsed[p]) for p in paths)
        if count != len(ids):
            self.error = (f"regraft loads {len(ids)} rule(s) from {self.display(self.root)}, but "
                          f"its files read as {count}: the plugin cannot tell which is which")
            return
        at = 0
        for path, text in zip(paths, texts):
            for rule_id, tests, packages in parsed[path]:
                cases = tests + file_cases(path, rule_id)
                rule = Rule(rule_id, ids[at], path, cases, packages, _rule_line(text, rule_id))
                self.files[path].rules.append(rule)
                self.rules.append(rule)
                at += 1
        if not ids:
            self.error = f"{self.display(self.root)} holds no rule"

    def file(self, path: Path) -> RuleFile:
        """The rules of one rule file of the pack."""
        self.load()
        return self.files.get(path) or RuleFile(path, error=f"{path} is not a rule file of "
                                                            f"{self.display(self.root)}")

    def rule_args(self) -> List[str]:
        """``-r FILE`` for each file that loads: a broken file is its own collection error, not
        a failure of every other file's items."""
        return [a for p in self._loaded_files() for a in ("-r", self.display(p))]

    # -- test cases ----------------------------------------------------------------------

    def case(self, rule: Rule, index: int) -> Outcome:
        """The outcome of a rule's ``index``-th test case, from the pack's one ``regraft test``."""
        if self._cases is None:
            self._run_tests()
        assert self._cases is not None
        if rule.uid in self._case_errors:
            return Outcome("failed", self._case_errors[rule.uid])
        entry = self._cases.get((rule.uid, index))
        if entry is None:
            return Outcome("failed", f"regraft test reported no case `{rule.cases[index]}` of "
                                     f"rule `{rule.id}`")
        if entry.get("passed"):
            return Outcome("passed")
        detail = self._detail(rule).get(rule.cases[index])
        return Outcome("failed", detail or entry.get("message") or "failed")

    def _run_tests(self) -> None:
        self._cases = {}
        runs = [r for r in self.rules if r.cases]
        if not runs:
            return
        entries, error = self._test_json([])
        if error is None:
            self._assign(runs, entries)
            return
        # One rule's broken case (a bad `# regraft:` line, a version that does not parse) stops
        # the whole run: each rule is run alone so only its own cases carry the error.
        for rule in runs:
            entries, error = self._test_json(["--filter", rule.id])
            if error is None:
                self._assign([r for r in runs if rule.id in r.id], entries, only=rule)
            else:
                self._case_errors[rule.uid] = error

    def _test_json(self, extra: List[str]) -> Tuple[list, Optional[str]]:
        run = self.cli.run(["test", "--format", "json", *self.rule_args(), *extra], self.base)
        if run.returncode in (0, 1):
            try:
                return json.loads(run.stdout), None
            except ValueError:
                pass
        return [], run.stderr.strip() or f"regraft test exited {run.returncode}"

    def _assign(self, rules: List[Rule], entries: list, only: Optional[Rule] = None) -> None:
        """Matches the report's entries to cases: in order (a shared id appears once per pack),
        else by rule id and case name."""
        assert self._cases is not None
        position = 0
        for rule in rules:
            for index, name in enumerate(rule.cases):
                entry = entries[position] if position < len(entries) else {}
                if entry.get("rule") == rule.id and entry.get("case") == name:
                    position += 1
                else:
                    entry = next((e for e in entries
                                  if e.get("rule") == rule.id and e.get("case") == name), None)
                if entry is not None and (only is None or rule is only):
                    self._cases[(rule.uid, index)] = entry

    def _detail(self, rule: Rule) -> Dict[str, str]:
        """The failing cases of ``rule`` as ``regraft test`` prints them for people: the message
        and the diff of expected and produced text (JSON carries the message alone)."""
        if rule.uid not in self._details:
            run = self.cli.run(["test", *self.rule_args(), "--filter", rule.id], self.base)
            blocks: Dict[str, List[str]] = {}
            current: Optional[List[str]] = None
            head = f"FAIL {rule.id} › "
            # Longest names first: a case named `a` must not take the line of a case `a: b`.
            names = sorted(set(rule.cases), key=len, reverse=True)
            for line in run.stdout.splitlines():
                if line.startswith(head):
                    rest = line[len(head):]
                    name = next((n for n in names if rest == n or rest.startswith(n + ": ")), None)
                    current = None if name is None else blocks.setdefault(name, [])
                    if current is not None:
                        current.append(rest[len(name) + 2:] if rest != name else "failed")
                elif _CASE_LINE.match(line) or line.startswith("NO TESTS ") \
                        or _TOTALS_LINE.match(line):
                    current = None
                elif current is not None:
                    current.append(line)
            self._details[rule.uid] = {k: "\n".join(v) for k, v in blocks.items()}
        return self._details[rule.uid]

    # -- the installed packages ----------------------------------------------------------

    def installed(self, rule: Rule) -> Outcome:
        """The rule checked against the installed distributions of the packages it names: one
        ``regraft matrix`` per set of packages, shared by the rules that name that set."""
        if not rule.packages:
            return Outcome("skipped", f"rule `{rule.id}` names no package (`requires`, "
                                      "`fixed_upstream`): no installed package to check it against")
        found = _installed.distributions()
        missing = [p for p in rule.packages if p not in found]
        if len(missing) == 1:
            return Outcome("skipped", f"{missing[0]} is not installed (rule `{rule.id}` names it)")
        if missing:
            return Outcome("skipped", f"{', '.join(missing)} are not installed (rule `{rule.id}` "
                                      "names them)")
        key = tuple(sorted(rule.packages))
        if key not in self._surveys:
            if self._tmp is None:
                self._tmp = tempfile.mkdtemp(prefix="regraft-pytest-")
            tree = Path(tempfile.mkdtemp(dir=self._tmp))
            self._surveys[key] = _installed.survey(self.cli, {p: found[p] for p in key}, tree,
                                                   [str(p) for p in self._loaded_files()])
        return self._surveys[key].outcome(rule, self.cli, [str(p) for p in self._loaded_files()])

    def _loaded_files(self) -> List[Path]:
        """The files whose rules loaded, in regraft's order (absolute)."""
        return sorted({r.file for r in self.rules},
                      key=lambda p: p.relative_to(self.root).parts if p != self.root else ())

    def close(self) -> None:
        """Removes the trees of installed files the checks read."""
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
