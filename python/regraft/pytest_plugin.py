"""pytest plugin: ``pytest --regraft RULES`` collects regraft's checks as test items, so a
patcher's ordinary test run catches upstream drift.

``RULES`` is a rule file or a folder of them (repeatable). Each rule file is a collector
(:class:`RuleFile`), each rule in it a collector named by its id (:class:`RuleNode`), and under
it one item per test case (``rules/x.yaml::rule-id::case``: ``regraft test``) and one item
``rules/x.yaml::rule-id::installed``: the rule checked against the installed distributions of
the packages its ``requires`` and ``fixed_upstream`` name (``regraft matrix`` over their
installed files). A rule whose package is not installed skips that item, naming the package;
a pin that no longer holds, or a patch that drifted, fails with regraft's diagnostic.

Nothing runs at collection but reading the rule files: the first item of a ``--regraft`` path
to run makes the regraft run the path's other items share. The entry point is
:mod:`pytest_regraft`, which imports this module (and so the native extension) only when
``--regraft`` is given.
"""

import json
import os
import warnings
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set

import pytest

from ._pytest_pack import Cli, Outcome, Pack, Rule, rule_files


class RegraftFailure(Exception):
    """A regraft check that did not pass; its text is regraft's own report."""


class RegraftLoadError(Exception):
    """A rule file regraft cannot load; its text is regraft's diagnostic."""


class RegraftWarning(UserWarning):
    """A check that passed but says something: a patch upstream no longer needs."""


class RegraftPlugin:
    """The collector behind ``--regraft``: makes the rule files below the ``--regraft`` paths
    :class:`RuleFile` collectors wherever pytest's collection meets them, and adds those paths
    to pytest's arguments where no argument reaches them."""

    NAME = "regraft-collector"

    def __init__(self, config: pytest.Config, raw: List[str]) -> None:
        self.base = Path(config.invocation_params.dir)
        self.roots = _roots(raw, self.base)
        self.cli = Cli()
        self.packs: Dict[Path, Pack] = {}
        self.rule_files: Dict[Path, List[Path]] = {r: rule_files(r) for r in self.roots}
        self.holders: Set[Path] = {p for files in self.rule_files.values() for f in files
                                   for p in f.parents}
        """The folders that hold a rule file of a ``--regraft`` path, at any depth."""
        self.loaded: Set[Path] = {f for files in self.rule_files.values() for f in files}
        """The rule files regraft loads from the ``--regraft`` paths (a link it does not
        follow is not one)."""
        self.folders: Set[Path] = set(_add_to_arguments(config, self.roots, self.base))
        """Folders collected for their rule files alone: a ``--regraft`` folder no argument
        reaches (pytest was not asked to collect tests there), and folders pytest would skip
        (``norecursedirs``, ``--ignore``) that hold rule files or a ``--regraft`` path."""

    def pack(self, path: Path) -> Optional[Pack]:
        """The pack of the ``--regraft`` path that holds ``path``."""
        for root in self.roots:
            if path == root or root in path.parents:
                if root not in self.packs:
                    self.packs[root] = Pack(root, self.base, self.cli)
                return self.packs[root]
        return None

    @pytest.hookimpl(tryfirst=True)
    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config):
        """A ``--regraft`` file is collected whatever ``norecursedirs`` or ``--ignore`` say, and
        so is a folder they would skip (``.regraft/``) that holds rule files of a ``--regraft``
        path, though for those files only."""
        path = Path(os.path.abspath(collection_path))
        if path in self.roots and not path.is_dir():
            return False
        if path not in self.holders:
            return None
        if _ignored_by_others(self, collection_path, config):
            self.folders.add(path)
            return False
        return None

    @pytest.hookimpl(tryfirst=True)
    def pytest_collect_directory(self, path: Path, parent: pytest.Collector):
        """A folder collected for its rule files alone becomes a :class:`RuleFolder`; any
        other is pytest's."""
        if Path(os.path.abspath(path)) in self.folders:
            return RuleFolder.from_parent(parent, path=path, plugin=self)
        return None

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector):
        """A ``--regraft`` rule file, or a rule file below a ``--regraft`` folder, becomes a
        :class:`RuleFile`."""
        if Path(os.path.abspath(file_path)) in self.loaded:
            return RuleFile.from_parent(parent, path=file_path, plugin=self)
        return None

    def pytest_report_header(self, config: pytest.Config) -> str:
        """Names the rule paths the run checks."""
        from . import __version__

        shown = ", ".join(os.path.relpath(r, self.base) if self.base in r.parents else str(r)
                          for r in self.roots)
        return f"regraft {__version__}: --regraft {shown}"

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """Removes the trees of installed files the checks read."""
        for pack in self.packs.values():
            pack.close()


class LivePlugin:
    """``--regraft-live``: each ``regraft_smoke`` test runs with every liveness probe armed
    again, and fails where a rule (those the marker names; else every rule that patched a
    module) ran none of its patched code in it; the summary lists patched functions that
    never ran in the whole session."""

    NAME = "regraft-live"

    def __init__(self) -> None:
        self.workers: List[dict] = []
        """What each pytest-xdist worker reported: its patched functions that ran and not."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item):
        """Runs a ``regraft_smoke`` test under a liveness watch, then judges what ran."""
        marker = item.get_closest_marker("regraft_smoke")
        if marker is None:
            return (yield)
        from . import _live

        with _live.watch() as watched:
            result = yield
        if not marker.args and not _live.rules_installed()[0]:
            pytest.fail("regraft: no rule patched a module this process imported with liveness on "
                        "(is the hook installed before the patched modules are imported?)",
                        pytrace=False)
        idle = watched.idle_rules([str(rule) for rule in marker.args])
        if idle:
            pytest.fail("\n".join(_idle_line(rule, probes) for rule, probes in idle.items()),
                        pytrace=False)
        return result

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """In a pytest-xdist worker: hands the controller what ran here and what did not."""
        output = getattr(session.config, "workeroutput", None)
        if output is not None:
            from dataclasses import asdict

            from . import _live

            output["regraft_live"] = json.dumps({
                "never": [asdict(u) for u in _live.unexercised()],
                "ran": [asdict(u) for u in _live.exercised()],
            })

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:
        """In the pytest-xdist controller: keeps what a worker reported."""
        data = getattr(node, "workeroutput", {}).get("regraft_live")
        if data:
            self.workers.append(json.loads(data))

    def pytest_terminal_summary(self, terminalreporter) -> None:
        """Lists the patched functions that never ran in the session: in no worker, where
        pytest-xdist ran the tests."""
        from dataclasses import asdict

        from . import _live

        key = lambda u: (u["module"], u["qualname"], u["line"])  # noqa: E731
        reports = [{"never": [asdict(u) for u in _live.unexercised()],
                    "ran": [asdict(u) for u in _live.exercised()]}, *self.workers]
        ran = {key(u) for r in reports for u in r["ran"]}
        never = {key(u): u for r in reports for u in r["never"] if key(u) not in ran}
        if not never:
            return
        terminalreporter.section("regraft: patched code that never ran")
        for u in never.values():
            rules = ", ".join(f"`{r}`" for r in u["rules"])
            terminalreporter.write_line(f"{u['module']}.{u['qualname']} ({u['filename']}:{u['line']}), "
                                        f"patched by {rules}")


def _idle_line(rule: str, probes: list) -> str:
    """Why ``rule`` took no effect in a smoke test."""
    if not probes:
        return (f"regraft: rule `{rule}` patched nothing this process imported (with liveness "
                "on): it cannot have taken effect")
    where = "; ".join(f"{p.module}.{p.qualname} ({p.filename}:{p.line})" for p in probes)
    return f"regraft: rule `{rule}` took no effect here: none of its patched code ran — {where}"


def _ignored_by_others(plugin: RegraftPlugin, path: Path, config: pytest.Config) -> bool:
    """What the other plugins (pytest's ``norecursedirs``, ``--ignore``, conftests) say of
    collecting ``path``."""
    others = config.pluginmanager.subset_hook_caller("pytest_ignore_collect", [plugin])
    arguments = {"collection_path": path, "config": config}
    if "path" in (others.spec.argnames if others.spec else ()):
        # pytest 8 still declares the py.path argument; pytest 9 dropped it.
        from _pytest.compat import legacy_path

        arguments["path"] = legacy_path(path)
    return bool(others(**arguments))


def _roots(raw: List[str], base: Path) -> List[Path]:
    """The ``--regraft`` paths, absolute, each once; one inside another given folder is part of
    that folder's pack. A path that does not exist, or a folder without rule files, is a usage
    error."""
    roots: List[Path] = []
    for given in raw:
        path = Path(os.path.abspath(base / os.path.expanduser(given)))
        if not path.exists():
            raise pytest.UsageError(f"--regraft {given}: no such file or folder")
        if path.is_dir() and not rule_files(path):
            raise pytest.UsageError(f"--regraft {given}: no rule file (*.yaml, *.yml, *.graft) "
                                    "in this folder")
        if path not in roots:
            roots.append(path)
    return [r for r in roots if not any(o in r.parents and o.is_dir() for o in roots)]


def _add_to_arguments(config: pytest.Config, roots: List[Path], base: Path) -> List[Path]:
    """Adds each root to the paths pytest collects, unless an argument already holds it or lies
    inside it (pytest 8 collects an argument that overlaps another only once, losing the rest
    of the wider one); the folders added. Where no path was given, the roots alone."""
    # No path on the command line: pytest filled in its `testpaths` (or the working folder).
    # `pytest --regraft rules` asks for the rules' items, not the project's own tests too.
    source = getattr(config, "args_source", None)
    if source in (pytest.Config.ArgsSource.TESTPATHS, pytest.Config.ArgsSource.INVOCATION_DIR):
        config.args[:] = []
    given = [Path(os.path.abspath(base / arg.split("::")[0])) for arg in config.args]
    added = []
    for root in roots:
        if not any(g == root or g in root.parents or root in g.parents for g in given):
            config.args.append(str(root))
            if root.is_dir():
                added.append(root)
    return added


class RuleFolder(pytest.Directory):
    """A folder collected for the rule files of the ``--regraft`` paths alone: those below it,
    and the folders on the way to them, in regraft's order."""

    def __init__(self, *, plugin: RegraftPlugin, **kw) -> None:
        super().__init__(**kw)
        self.plugin = plugin

    def collect(self) -> Iterator[pytest.Collector]:
        """The rule files right here, and the folders below holding more."""
        here = Path(os.path.abspath(self.path))
        children: Dict[str, type] = {}
        for files in self.plugin.rule_files.values():
            for file in files:
                if here in file.parents:
                    parts = file.relative_to(here).parts
                    children[parts[0]] = RuleFile if len(parts) == 1 else RuleFolder
        for name in sorted(children):
            yield children[name].from_parent(self, path=self.path / name, plugin=self.plugin)


class RuleFile(pytest.File):
    """A rule file: one :class:`RuleNode` per rule. A file regraft cannot load is a collection
    error showing regraft's diagnostic."""

    def __init__(self, *, plugin: RegraftPlugin, **kw) -> None:
        super().__init__(**kw)
        self.plugin = plugin

    def collect(self) -> Iterator["RuleNode"]:
        """A :class:`RuleNode` per rule, in the file's order."""
        path = Path(os.path.abspath(self.path))
        pack = self.plugin.pack(path)
        assert pack is not None
        loaded = pack.file(path)
        if loaded.error is not None:
            raise RegraftLoadError(loaded.error)
        if pack.error is not None:
            raise RegraftLoadError(pack.error)
        for rule in loaded.rules:
            yield RuleNode.from_parent(self, name=rule.id, rule=rule, pack=pack)

    def repr_failure(self, excinfo, style=None):
        """regraft's diagnostic alone, not a traceback through the plugin."""
        if isinstance(excinfo.value, RegraftLoadError):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)


class RuleNode(pytest.Collector):
    """One rule: an item per test case, then its check against the installed packages."""

    def __init__(self, *, rule: Rule, pack: Pack, **kw) -> None:
        super().__init__(**kw)
        self.rule = rule
        self.pack = pack

    def collect(self) -> Iterator["RegraftItem"]:
        """The rule's test cases, in ``regraft test``'s order, then ``installed``."""
        names = _unique(self.rule.cases + ["installed"])
        for index, name in enumerate(names[:-1]):
            yield CaseItem.from_parent(self, name=name, rule=self.rule, pack=self.pack,
                                       index=index)
        yield InstalledItem.from_parent(self, name=names[-1], rule=self.rule, pack=self.pack)

    def reportinfo(self):
        """The rule's line in its file."""
        return self.path, self.rule.line, f"regraft rule {self.rule.id}"


def _unique(names: List[str]) -> List[str]:
    """The names, a repeated one suffixed ``-2``, ``-3``...: node ids must differ (an inline
    case and a case file may share a name, a case may be named ``installed``)."""
    taken: Set[str] = set()
    out = []
    for name in names:
        candidate, count = name, 1
        while candidate in taken:
            count += 1
            candidate = f"{name}-{count}"
        taken.add(candidate)
        out.append(candidate)
    return out


class RegraftItem(pytest.Item):
    """An item reporting one outcome of a regraft run, computed when the item runs."""

    def __init__(self, *, rule: Rule, pack: Pack, **kw) -> None:
        super().__init__(**kw)
        self.rule = rule
        self.pack = pack

    def outcome(self) -> Outcome:
        """Runs (or reuses) the regraft run this item reports on."""
        raise NotImplementedError

    def runtest(self) -> None:
        """Passes, fails with regraft's report, skips saying why, or warns."""
        outcome = self.outcome()
        if outcome.status == "failed":
            raise RegraftFailure(outcome.text)
        if outcome.status == "skipped":
            raise _skip(outcome.text)
        if outcome.status == "warned":
            warnings.warn_explicit(RegraftWarning(outcome.text), RegraftWarning,
                                   str(self.path), (self.rule.line or 0) + 1)

    def repr_failure(self, excinfo, style=None):
        """regraft's report alone, not a traceback through the plugin."""
        if isinstance(excinfo.value, RegraftFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)


def _skip(reason: str) -> BaseException:
    """A skip reported at the item (the rule's line in its file), not at this module."""
    try:
        return pytest.skip.Exception(reason, _use_item_location=True)
    except TypeError:  # a pytest without the keyword: the location is this module's
        return pytest.skip.Exception(reason)


class CaseItem(RegraftItem):
    """One test case of a rule, as ``regraft test`` runs it."""

    def __init__(self, *, index: int, **kw) -> None:
        super().__init__(**kw)
        self.index = index

    def outcome(self) -> Outcome:
        """From the pack's ``regraft test`` run."""
        return self.pack.case(self.rule, self.index)

    def reportinfo(self):
        """The rule's line; the rule and the case."""
        case = self.rule.cases[self.index]
        return self.path, self.rule.line, f"regraft: {self.rule.id} › {case}"


class InstalledItem(RegraftItem):
    """A rule checked against the installed distributions of the packages it names."""

    def outcome(self) -> Outcome:
        """From the pack's ``regraft matrix`` run over the packages the rule names."""
        return self.pack.installed(self.rule)

    def reportinfo(self):
        """The rule's line; what is checked."""
        return self.path, self.rule.line, f"regraft: {self.rule.id} on the installed packages"
