"""The installed sources a rule is checked against, for the pytest plugin.

A distribution's files are read from its file list (``importlib.metadata``: the ``RECORD``),
not from the folder its import name resolves to, so a single-module distribution (``foo.py``)
and a package split across top-level names are found whole. They are laid out in a fresh tree
at the paths the list gives them (``transformers/models/...``, ``foo.py``) — hard links where
the file system allows, copies otherwise — and ``regraft matrix`` walks that tree as its
target ``.``. A rule's ``files`` globs thus see each file by its path below site-packages, as
``regraft apply`` sees it when run in site-packages on the package: ``transformers/x.py`` and
``**/transformers/x.py`` select the same file.
"""

import importlib.util
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path, PurePosixPath
from typing import Dict, List, Optional, Tuple


@dataclass
class Outcome:
    """What an item reports: ``passed``, ``failed``, ``skipped`` or ``warned`` (passed, with a
    warning), and the text that goes with it."""

    status: str
    text: str = ""


_DISTRIBUTIONS: Optional[Dict[str, metadata.Distribution]] = None
_EXPLAIN_LINES = 120


def normalize(name: str) -> str:
    """A distribution name as regraft's ``requires`` writes it: lower case, runs of ``-_.`` as
    one ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def distributions() -> Dict[str, metadata.Distribution]:
    """The installed distributions by normalised name; where one is installed twice, the one
    found first on ``sys.path`` (the one ``import`` finds)."""
    global _DISTRIBUTIONS
    if _DISTRIBUTIONS is None:
        found: Dict[str, metadata.Distribution] = {}
        for dist in metadata.distributions():
            name = dist.metadata.get("Name")  # a broken install may have none
            if name:
                found.setdefault(normalize(name), dist)
        _DISTRIBUTIONS = found
    return _DISTRIBUTIONS


def sources(dist: metadata.Distribution) -> List[Tuple[str, Path]]:
    """``(path below site-packages, file)`` for each Python source the distribution installed.
    Where its file list names none (an editable install, or no ``RECORD``), the folders and
    modules its top-level names import from."""
    found = []
    for entry in dist.files or []:
        posix = PurePosixPath(str(entry).replace("\\", "/"))
        if posix.suffix != ".py" or posix.is_absolute() or ".." in posix.parts:
            continue  # scripts and data installed outside site-packages
        if posix.parts[0].startswith("__editable__"):
            continue  # an editable install's finder, not the package's source
        path = Path(str(dist.locate_file(entry)))
        if path.is_file():
            found.append((posix.as_posix(), path))
    return found or _imported_sources(dist)


def _imported_sources(dist: metadata.Distribution) -> List[Tuple[str, Path]]:
    names = (dist.read_text("top_level.txt") or "").split()
    if not names:
        names = [normalize(dist.metadata.get("Name") or "").replace("-", "_")]
    found = []
    for name in names:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is None:
            continue
        if spec.submodule_search_locations:
            for location in spec.submodule_search_locations:
                for folder, dirs, files in os.walk(location):
                    dirs[:] = sorted(d for d in dirs
                                     if not d.startswith(".") and d != "__pycache__")
                    relative = os.path.relpath(folder, location).replace(os.sep, "/")
                    prefix = name if relative == "." else f"{name}/{relative}"
                    found.extend((f"{prefix}/{f}", Path(folder, f)) for f in sorted(files)
                                 if f.endswith(".py"))
        elif spec.origin and spec.origin.endswith(".py"):
            found.append((f"{name}.py", Path(spec.origin)))
    return found


def lay_out(files: List[Tuple[str, Path]], tree: Path) -> int:
    """Puts each file at its path below ``tree``; the number of files placed."""
    placed = 0
    for relative, source in files:
        target = tree.joinpath(*relative.split("/"))
        if target.exists():
            continue  # two distributions sharing a namespace file: the first one wins
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source, target)
        except OSError:
            shutil.copyfile(source, target)
        placed += 1
    return placed


@dataclass
class Survey:
    """``regraft matrix``'s row for each rule, over the installed files of one set of
    distributions."""

    label: str
    """``pkg 1.2`` (and ``, other 3.4``): what the rules were checked against."""
    tree: Path
    versions: List[str]
    """``PKG=VER`` for each distribution."""
    rows: Dict[str, dict] = field(default_factory=dict)
    error: Optional[str] = None
    """Why regraft gave no rows (the tree holds no Python file, a version it cannot read)."""

    def outcome(self, rule, cli, rule_paths: List[str]):
        """The item's outcome for ``rule`` from its row."""
        if self.error is not None:
            return Outcome("failed", self.error)
        row = self.rows.get(rule.uid)
        if row is None:
            return Outcome("failed", f"regraft matrix reported nothing for rule `{rule.uid}` on "
                                     f"{self.label}")
        status, message = row.get("status"), row.get("message") or ""
        said = f"rule `{rule.id}` is {status} on {self.label}" + (f": {message}" if message else "")
        if status == "ok":
            return Outcome("passed")
        if status == "redundant":
            return Outcome("warned", f"{said}; the patch may be retired (`fixed_upstream`)")
        if status in ("inactive", "retired"):
            return Outcome("skipped", said)
        return Outcome("failed", said + self._explain(rule, cli, rule_paths, message))

    def _explain(self, rule, cli, rule_paths: List[str], message: str) -> str:
        """``regraft explain`` of the rule on the file the failure names: its matches and near
        misses, each with why it failed."""
        named = re.findall(r" in (\S+?)[;,:]?(?=\s|$)", message)
        files = [f for f in named if (self.tree / f).is_file()]
        if not files:
            return ""
        versions = [a for v in self.versions for a in ("--with", v)]
        # The whole pack (a rule run `after` another sees its output), but its own file alone
        # where the pack holds its id twice: explain takes ids as written, not as `pack/id`.
        candidates = [rule_paths, [str(rule.file)]] if rule.uid == rule.id else [[str(rule.file)]]
        for paths in candidates:
            run = cli.run(["explain", rule.id, *[a for p in paths for a in ("-r", p)],
                           *versions, "--in", files[0]], self.tree)
            if run.returncode == 0:
                break
        else:
            return ""
        lines = run.stdout.splitlines()
        # The rule's own summary (phase, scope, compiled query) comes first; the file's part is
        # what says why it missed.
        start = next((i for i, line in enumerate(lines) if line.startswith("in ")), len(lines))
        kept = lines[start:]
        if len(kept) > _EXPLAIN_LINES:
            kept = kept[:_EXPLAIN_LINES] + [f"... ({len(kept) - _EXPLAIN_LINES} more lines)"]
        if not kept:
            return ""
        return "\n\nregraft explain " + rule.id + " --in " + files[0] + ":\n" + "\n".join(kept)


def survey(cli, dists: Dict[str, metadata.Distribution], tree: Path,
           rule_paths: List[str]) -> Survey:
    """Lays out the sources of the distributions (by normalised name) in ``tree`` and runs
    ``regraft matrix`` over it."""
    versions = [f"{name}={dist.version}" for name, dist in dists.items()]
    label = ", ".join(v.replace("=", " ", 1) for v in versions)
    result = Survey(label, tree, versions)
    files = [f for d in dists.values() for f in sources(d)]
    if lay_out(files, tree) == 0:
        result.error = f"{label}: no Python source file installed (its file list names none)"
        return result
    args = ["matrix", "--format", "json", *[a for p in rule_paths for a in ("-r", p)],
            "--target", f"{versions[0]}:.", *[a for v in versions[1:] for a in ("--with", v)]]
    run = cli.run(args, tree)
    try:
        rows = json.loads(run.stdout)
    except ValueError:
        result.error = run.stderr.strip() or f"regraft matrix exited {run.returncode}"
        return result
    result.rows = {row.get("rule"): row for row in rows}
    return result
