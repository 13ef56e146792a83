"""regraft: declarative, versioned source patches for Python libraries, at run time.

Runtime patchers take a class's source, rewrite it with regexes, exec it and swap it in. This
module does that with regraft rules, on the live object, with true line numbers::

    import regraft, transformers.models.whisper.modeling_whisper as mw
    rules = regraft.Rules.load("rules/")
    handle = regraft.patch(mw.WhisperDecoder, rules)   # or a method: mw.WhisperDecoder.forward
    ...
    handle.revert()

``regraft.install(rules, packages=["transformers"])`` patches modules as they are imported.
Every failure raises :class:`RegraftError` (or a subclass) whose ``str()`` is one line
(``rule-id: message (file:line:col)``) and whose ``.diagnostic`` is the rendered diagnostic,
with ``rule_id``, ``path``, ``line`` and ``column`` where known.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import sys
import warnings
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Tuple, Union

from ._native import __version__  # the crate's version: `regraft --version` says the same
from ._native import (
    ActionError,
    ConflictError,
    DriftError,
    NativeRules,
    ParseError,
    RegraftError,
    RuleError,
)

__all__ = [
    "__version__",
    "ActionError",
    "CheckReport",
    "ConflictError",
    "DriftError",
    "Edit",
    "Match",
    "ParseError",
    "RegraftError",
    "RuleCheck",
    "RuleError",
    "Rules",
    "Patch",
    "PatchInfo",
    "apply",
    "install",
    "installed_versions",
    "patch",
    "patched",
    "uninstall",
    "unexercised",
    "Unexercised",
]

PathLike = Union[str, "os.PathLike[str]"]


def installed_versions(packages: List[str]) -> Dict[str, str]:
    """The installed versions of ``packages`` in the running interpreter; absent ones are left out."""
    # Imported here, not with regraft: it took ~7 ms of the ~70 ms importing regraft costs,
    # which every worker a hook is carried into (`install(children=True)`) pays at its start.
    from importlib import metadata

    found = {}
    for package in packages:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    return found


@dataclass(frozen=True)
class Edit:
    """One planned replacement: lines and columns from 1, in the text the rule's phase ran on."""

    line: int
    column: int
    end_line: int
    end_column: int
    replacement: str


@dataclass(frozen=True)
class Match:
    """One match of a rule: where it is, what its metavariables bound, and the edits it plans."""

    line: int
    column: int
    end_line: int
    end_column: int
    bindings: Dict[str, str]
    edits: List[Edit]
    guarded: bool = False


@dataclass(frozen=True)
class RuleCheck:
    """What one rule did on the checked source."""

    rule: str
    phase: str
    status: str
    """``applied``, ``redundant``, ``guarded``, ``no-match``, ``failed`` or ``inactive``."""
    matches: List[Match]
    reason: Optional[str] = None
    """Why the rule is inactive, when it is."""
    error: Optional[RegraftError] = None
    """The error the rule raised or, for ``on_miss: warn|skip``, the drift it reports."""
    step: int = 0
    """Its planning step within the phase (rules with ``after`` run later, on earlier output)."""


@dataclass(frozen=True)
class CheckReport:
    """Per-rule results of :meth:`Rules.check`; the source itself is not changed."""

    rules: List[RuleCheck] = field(default_factory=list)

    def __getitem__(self, rule_id: str) -> RuleCheck:
        for check in self.rules:
            if check.rule == rule_id:
                return check
        raise KeyError(rule_id)

    @property
    def ok(self) -> bool:
        """Whether no rule failed or missed its expectation."""
        return all(check.error is None for check in self.rules)


def _position(at: Mapping[str, int]) -> "tuple[int, int]":
    return at["line"], at["column"]


def _edit(raw: Mapping) -> Edit:
    return Edit(*_position(raw["start"]), *_position(raw["end"]), raw["replacement"])


def _match(raw: Mapping) -> Match:
    return Match(
        *_position(raw["start"]),
        *_position(raw["end"]),
        bindings=dict(raw["bindings"]),
        edits=[_edit(e) for e in raw["edits"]],
        guarded=raw.get("guarded", False),
    )


def _report(raw: str, errors: Mapping[str, RegraftError]) -> CheckReport:
    """The native per-rule reports (JSON) as a :class:`CheckReport`."""
    return CheckReport(
        [
            RuleCheck(
                rule=r["rule"],
                phase=r["phase"],
                status=r["status"],
                matches=[_match(m) for m in r["matches"]],
                reason=r.get("reason"),
                error=errors.get(r["rule"]),
                step=r.get("step", 0),
            )
            for r in json.loads(raw)
        ]
    )


class Rules:
    """A compiled set of regraft rules, loaded once and applied to any number of sources."""

    def __init__(self, native: NativeRules, fingerprint: str = "") -> None:
        self._native = native
        self.fingerprint = fingerprint
        """sha256 of the rule texts: what the import hook's cache keys patched sources by."""
        self._origin: Optional[Dict[str, str]] = None
        """How to read these rules again in another interpreter (``install(children=True)``)."""
        self._disabled: Dict[str, Optional["Rules"]] = {}
        """These rules less what ``REGRAFT_DISABLE`` turns off, by its value."""

    @classmethod
    def load(cls, path: PathLike) -> "Rules":
        """Loads a rule file, or every ``*.yaml``, ``*.yml`` and ``*.graft`` file below a folder."""
        native = NativeRules.load(os.fspath(path))
        digest = hashlib.sha256()
        # The texts the rules were read from, not a second walk and read of the folder.
        for text in native.texts():
            digest.update(text.encode())
        rules = cls(native, digest.hexdigest())
        rules._origin = {"path": os.path.abspath(os.fspath(path))}
        return rules

    @classmethod
    def parse(cls, text: str, format: str = "yaml", name: str = "<rules>") -> "Rules":
        """Parses rules from text: ``format`` is ``"yaml"`` or ``"dsl"``; ``name`` labels diagnostics."""
        native = NativeRules.parse(text, format, name)
        rules = cls(native, hashlib.sha256(text.encode()).hexdigest())
        rules._origin = {"text": text, "format": format, "name": name}
        return rules

    def _enabled(self) -> Optional["Rules"]:
        """These rules less those ``REGRAFT_DISABLE`` turns off (rule ids, packs — a rule file's
        name without extension —, groups, families, or ``*``, comma-separated), as the runtime
        applies them; ``None`` where none is left. Python's ``-E``/``-I`` ignore the variable,
        as they do Python's own."""
        raw = "" if sys.flags.ignore_environment else os.environ.get("REGRAFT_DISABLE", "")
        names = sorted({n.strip() for n in raw.split(",") if n.strip()})
        if not names:
            return self
        key = ",".join(names)
        cached = self._disabled.get(key, False)
        if cached is not False:
            return cached
        rules = self._without(names)
        self._disabled[key] = rules
        return rules

    @property
    def ids(self) -> List[str]:
        """The rule ids, in load order."""
        return self._native.ids()

    @property
    def packages(self) -> List[str]:
        """The packages the rules' ``requires`` gate on."""
        return self._native.packages()

    def _request(
        self,
        source: str,
        filename: Optional[PathLike],
        versions: Optional[Mapping[str, str]],
        phase: Optional[str],
        context: Union[str, Mapping[str, str], None],
        module: Optional[str],
        unit: Optional[str] = None,
    ) -> tuple:
        """The native call's arguments: a plain file name, versions as pairs, and the context
        as one source or as modules by dotted name."""
        if versions is None:
            versions = installed_versions(self.packages)
        name = None if filename is None else os.fspath(filename)
        pairs = [(str(k), str(v)) for k, v in versions.items()]
        if context is None or isinstance(context, str):
            source_context, modules = context, None
        else:
            source_context, modules = None, [(str(k), str(v)) for k, v in context.items()]
        return source, name, pairs, phase, (source_context, modules, module, unit)

    def apply(
        self,
        source: str,
        filename: Optional[PathLike] = None,
        versions: Optional[Mapping[str, str]] = None,
        phase: Optional[str] = None,
        context: Union[str, Mapping[str, str], None] = None,
        on_error: str = "raise",
        module: Optional[str] = None,
        unit: Optional[str] = None,
        *,
        _compiled: bool = False,
        _facts: Optional[dict] = None,
    ) -> str:
        """Returns ``source`` patched by every active rule.

        ``filename`` is matched by the rules' ``files`` globs; without one, every rule looks at
        the source. With ``module`` (the source's dotted name) as well, the globs see the
        module's path below the folder it is imported from (``pkg/sub/mod.py``, as ``regraft
        apply`` run in site-packages and the pytest plugin see it), wherever ``filename`` is:
        the import hook and ``patch`` pass both. ``versions`` maps packages to versions; ``None`` reads them from the running
        interpreter. ``phase`` runs one phase only. ``context`` is where
        ``kwargs_to_positional`` signatures that ``source`` does not define are looked for: one
        source (the module of a class patched on its own), or a mapping of dotted module names
        to sources, followed through ``source``'s ``from ... import`` statements and its
        classes' bases; ``module`` is also the name against which relative imports resolve. ``on_error="warn"`` turns any failure into a ``RuntimeWarning`` and
        returns ``source`` unchanged, so an import never fails because a patch drifted.
        ``unit`` says ``source`` is one class or function of its module (its name), as
        ``inspect.getsource`` gives it: rules scoped to another class or function leave it
        alone instead of reporting their own class missing as drift.

        ``_compiled`` (the import hook's): the caller compiles the result itself, so the check
        that CPython compiles the whole output is left to it; it must ask again without this
        where ``compile()`` refuses the result, for the precise refusal. ``_facts`` (the
        import hook's): a dict that receives, under ``written``, where each rule's edits wrote
        in the result — ``(rule id, start, end)`` as ``str`` indices — and under ``report`` the
        :class:`CheckReport` of the run.
        """
        if on_error not in ("raise", "warn"):
            raise ValueError(f"on_error must be 'raise' or 'warn', not {on_error!r}")
        rules: Optional[Rules] = self
        dropped: List[str] = []
        while rules is not None:
            try:
                output, report, written = rules._apply_reporting(source, filename, versions, phase,
                                                                 context, module, unit, _compiled)
                if _facts is not None:
                    _facts.update(written=written, report=report)
                return output
            except RegraftError as error:
                if on_error == "raise":
                    raise
                # Isolation per rule: the rule that failed is dropped, alone, and the others
                # still apply; a failure no rule owns leaves the source as it was.
                rule = getattr(error, "rule_id", None)
                if not rule or rule in dropped:
                    warnings.warn(str(error), RuntimeWarning, stacklevel=2)
                    return source
                dropped.append(rule)
                warnings.warn(f"{error} — applied without rule `{rule}`", RuntimeWarning,
                              stacklevel=2)
                rules = rules._without([rule])
        return source

    def _without(self, names: List[str]) -> Optional["Rules"]:
        """These rules less ``names`` (rule ids, packs, groups or families); ``None`` where
        none is left."""
        native = self._native.without(names)
        if native is None:
            return None
        digest = hashlib.sha256(f"{self.fingerprint}|off:{','.join(names)}".encode()).hexdigest()
        rules = Rules(native, digest)
        rules._origin = self._origin
        return rules

    def _would_run(self, filename: str, versions: Mapping[str, str], phase: Optional[str], unit: Optional[str],
                   module: Optional[str] = None) -> bool:
        """Whether any rule would run on top-level ``unit`` of the file ``filename`` (of the
        module ``module``, dotted: see ``apply``)."""
        pairs = [(str(k), str(v)) for k, v in versions.items()]
        return self._native.would_run(filename, pairs, phase, unit, module)

    def _apply_reporting(self, source, filename, versions, phase, context, module, unit,
                         compiled=False) -> tuple:
        """The patched text, what each rule did and where each rule's edits wrote in the text
        (see ``apply``'s ``_written``), from one run; `on_miss: warn` drift is warned about,
        failures raise."""
        source, unit, unwrap = _method_unit(source, unit)
        output, drift, raw, written = self._native.apply(
            *self._request(source, filename, versions, phase, context, module, unit), compiled
        )
        for warning in drift:
            warnings.warn(str(warning), RuntimeWarning, stacklevel=3)
        unwrapped = unwrap(output)
        if unwrapped is not output:
            written = _unwrapped_ranges(output, written, unwrap.lines, unwrap.pad)
        return unwrapped, _report(raw, {}), written

    def check(
        self,
        source: str,
        filename: Optional[PathLike] = None,
        versions: Optional[Mapping[str, str]] = None,
        phase: Optional[str] = None,
        context: Union[str, Mapping[str, str], None] = None,
        module: Optional[str] = None,
        unit: Optional[str] = None,
    ) -> CheckReport:
        """Runs every rule on ``source`` and reports matches per rule, without editing anything.

        A rule that fails (drift, conflict, an action that cannot apply) carries its error in
        the report instead of raising; only unusable input (rules whose package version is
        unknown, a source that is not Python) raises.
        """
        raw, errors = self._native.check(
            *self._request(source, filename, versions, phase, context, module, unit)
        )
        return _report(raw, errors)

    def __repr__(self) -> str:
        return f"Rules({', '.join(self.ids)})"


def _method_unit(source: str, unit: Optional[str]) -> Tuple[str, Optional[str], Callable[[str], str]]:
    """A method's own source (``unit="Cls.method"``, as ``inspect.getsource`` gives a method,
    indented or dedented) set inside its classes, so rules scoped to ``class Cls`` › ``function
    method`` see it where they look (the unit: the innermost class and the method), and the returned
    function takes the classes away again. Every line gets the same prefix (none where the
    method is indented enough) and loses it after: string contents are not re-indented. Line
    numbers in diagnostics count the class headers. Other units pass through."""
    if not unit or "." not in unit:
        return source, unit, lambda text: text
    classes = unit.split(".")[:-1]
    lines = source.splitlines(keepends=True)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    first = next((line for line in lines if line.strip()), "")
    indent = first[: len(first) - len(first.lstrip(" \t"))]
    pad = " " * max(0, len(classes) - len(indent))
    method_indent = pad + indent
    headers = "".join(f"{method_indent[:i]}class {name}:{newline}" for i, name in enumerate(classes))
    wrapped = headers + "".join(pad + line for line in lines)

    def unwrap(text: str) -> str:
        kept = text.splitlines(keepends=True)[len(classes):]
        return "".join(line[len(pad):] if line.startswith(pad) else line for line in kept)

    unwrap.lines, unwrap.pad = len(classes), pad  # type: ignore[attr-defined]
    return wrapped, f"{classes[-1]}.{unit.rsplit('.', 1)[1]}", unwrap


def _unwrapped_ranges(wrapped: str, written: List[Tuple[str, int, int]], headers: int,
                      pad: str) -> List[Tuple[str, int, int]]:
    """``written``'s ranges of a method set inside its classes (``_method_unit``), moved to the
    method's own text: the class headers' lines gone, ``pad`` off every line that has it."""
    starts = [0] + [i + 1 for i, c in enumerate(wrapped) if c == "\n"]
    kept_starts: List[int] = []
    at = 0
    for line in range(headers, len(starts)):
        kept_starts.append(at)
        end = starts[line + 1] if line + 1 < len(starts) else len(wrapped)
        text = wrapped[starts[line]:end]
        at += len(text) - (len(pad) if text.startswith(pad) else 0)

    def moved(i: int) -> int:
        line = max(bisect.bisect_right(starts, i) - 1, headers)
        column = max(i - starts[line], 0)
        if wrapped.startswith(pad, starts[line]):
            column = max(column - len(pad), 0)
        return kept_starts[line - headers] + column

    return [(rule, moved(a), moved(b)) for rule, a, b in written]


def apply(
    source: str,
    rules: Union[Rules, PathLike],
    filename: Optional[PathLike] = None,
    versions: Optional[Mapping[str, str]] = None,
    phase: Optional[str] = None,
    context: Optional[str] = None,
    on_error: str = "raise",
) -> str:
    """Shortcut for ``Rules.load(rules).apply(source, ...)``; ``rules`` may already be loaded."""
    loaded = rules if isinstance(rules, Rules) else Rules.load(rules)
    return loaded.apply(source, filename, versions, phase, context, on_error)


from ._hook import install, uninstall  # noqa: E402

# `patch` and what it returns are loaded at their first use: a process that only installs the
# import hook (every worker a hook is carried into) does not build them.
_RUNTIME = ("Patch", "PatchInfo", "patch", "patched")


# Liveness (see `_live`): what a process that never turns it on does not load.
_LIVE = ("unexercised", "Unexercised")


def __getattr__(name: str):
    if name in _LIVE:
        from . import _live

        return getattr(_live, name)
    if name in _RUNTIME or name == "runtime":
        import importlib

        # Not `from . import runtime`: that asks this function for `runtime` first.
        runtime = importlib.import_module(__name__ + ".runtime")
        return runtime if name == "runtime" else getattr(runtime, name)
    raise AttributeError(f"module 'regraft' has no attribute {name!r}")
