"""The import hook: ``install(rules, packages=[...])`` patches whole modules as they are
imported, ``uninstall(hook)`` takes it away (and, asked to, re-imports what it patched)."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import linecache
import marshal
import os
import sys
import types
import warnings
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from . import _cache, _sources, _written
from ._native import RegraftError


class _Loader(importlib.machinery.SourceFileLoader):
    """Reads a module's source, patches it (or takes the patched text from the cache), and
    compiles it at the file's own line numbers; never writes bytecode of the patched text."""

    def __init__(self, fullname: str, path: str, hooks: List["Hook"]) -> None:
        super().__init__(fullname, path)
        self._hooks = hooks
        self._patched: Optional[str] = None
        self._facts: List[Dict[str, Any]] = []
        """What each pack that changed the module says of its text (see ``patched_source``)."""
        self._name = ""
        """The file name the patched code was compiled under."""

    def get_source(self, fullname: str) -> Optional[str]:
        """The text this loader compiled: the patched one, where it patched the module (what
        ``linecache`` asks a module's loader for once the file is gone from disk)."""
        return self._patched if self._patched is not None else super().get_source(fullname)

    def get_code(self, fullname: str) -> types.CodeType:
        path = self.get_filename(fullname)
        with open(path, "rb") as f:
            raw = f.read()
        source = importlib.util.decode_source(raw)
        # CPython's compile() judges the whole patched text (the patch leaves that check to
        # it); where it refuses, the packs are asked again with every check of their own, for
        # a refusal that names the rule and the place.
        patched = self._patched_by_all(fullname, path, source, compiled=True)
        try:
            return self._code(fullname, path, source, patched)
        except SyntaxError:
            checked = self._patched_by_all(fullname, path, source, compiled=False)
            if checked == patched:
                raise  # CPython refuses what every check passes: its own word, as it is
            return self._code(fullname, path, source, checked)

    def _patched_by_all(self, fullname: str, path: str, source: str, compiled: bool) -> str:
        """``source`` patched by every installed pack that selects the module, the first
        installed first: a later pack sees the earlier one's edits, as a rule ``after:``
        another does."""
        patched = source
        self._facts = []
        for hook in self._hooks:
            before = patched
            patched, facts = hook.patched_source(fullname, path, patched, compiled)
            if patched != before:
                if self._facts:
                    # What earlier packs wrote has moved with this pack's edits.
                    _written.moved(self._facts, before, patched)
                self._facts.append(dict(facts))
                if fullname not in hook.modules:
                    hook.modules.append(fullname)
        return patched

    def _code(self, fullname: str, path: str, source: str, patched: str) -> types.CodeType:
        if patched == source:
            # Nothing changed: the normal loader, with its bytecode cache.
            self._patched = None
            return importlib.machinery.SourceFileLoader(fullname, path).get_code(fullname)
        # The module file's own entry shows the patched text to `inspect.getsource` of its
        # classes; the code names a file that holds it (see `_sources`), so tracebacks show
        # the patched line with any handler, also after `linecache.clearcache()`.
        self._patched = patched
        # One list serves both entries (nothing changes a cached list in place): cutting a
        # module into lines is a tenth of what a warm start adds to an import.
        lines = _sources.lines(patched)
        linecache.cache[path] = (len(patched), None, lines, path)
        name = _sources.register(path, fullname, patched, path, lines)
        self._name = name
        units: Dict[str, List[Any]] = {}
        for facts in self._facts:
            for rule, keys in facts.get("units", {}).items():
                units.setdefault(rule, []).extend(keys)
        if not units:
            return self._hooks[-1].code_of(patched, name)
        return self._live_code(fullname, path, patched, name, units)

    def _live_code(self, fullname: str, path: str, patched: str, name: str,
                   units: Dict[str, List[Any]]) -> types.CodeType:
        """The patched code with a liveness probe in each function a rule wrote in: put into
        the tree, never into the text (which tracebacks show), compiled on every start (a mode
        for test and smoke runs: probes are objects, not bytecode to cache)."""
        import ast

        from . import _live

        tree = ast.parse(patched, name)
        table, holders = _live.instrument(tree, patched, units, fullname, path)
        try:
            code = compile(tree, name, "exec", dont_inherit=True)
        except RecursionError:
            # CPython before 3.12 compiles a tree recursively in Python's own limit: a long
            # expression it compiles from text it cannot from a tree.
            warnings.warn(f"regraft: {fullname} is too deeply nested for liveness probes "
                          f"(CPython {sys.version_info[0]}.{sys.version_info[1]} cannot compile "
                          "its tree): its patched functions are not tracked", RuntimeWarning,
                          stacklevel=2)
            return self._hooks[-1].code_of(patched, name)
        table.loader = self
        table.register()
        return _live.bind(code, holders)

    def exec_module(self, module: types.ModuleType) -> None:
        """Runs the module's code; patched code that fails to run is an error naming the rules
        that wrote it, never stock code."""
        code = self.get_code(module.__name__)
        try:
            exec(code, module.__dict__)
        except BaseException as error:
            if self._patched is None:
                raise
            failure = _written.import_failure(module.__name__, self._name, self._facts, error)
            if failure is None:
                raise
            raise failure from error

    def set_data(self, path: str, data: bytes, *, _mode: int = 0o666) -> None:
        """Bytecode of patched code must not land in __pycache__ for the unpatched file."""


class _Unpatched:
    """Stands in for the loader of a module a rule selects that has no source file to patch (a
    zip import, bytecode only) until the module is created, to warn then: ``find_spec`` runs
    under the import system's global lock, and a warning runs user code (a ``showwarning``
    replaced, a filter) that must not run there — one that waits for another thread's import
    would wait forever. Creating the module puts the real loader back on the spec first, so the
    module gets it as its ``__loader__``; anything else is the real loader's."""

    def __init__(self, spec: Any, message: str) -> None:
        self._inner = spec.loader
        self._spec = spec
        self._message: Optional[str] = message

    def _announce(self) -> None:
        if self._spec.loader is self:
            self._spec.loader = self._inner
        message, self._message = self._message, None
        if message:
            warnings.warn(message, RuntimeWarning, stacklevel=3)

    def create_module(self, spec: Any) -> Any:
        """Warns, then creates the module as the real loader does."""
        self._announce()
        create = getattr(self._inner, "create_module", None)
        return create(spec) if create is not None else None

    def load_module(self, fullname: str) -> Any:
        """Warns, then loads as the real loader does (one without ``exec_module``, such as
        Python 3.9's ``zipimporter``, is asked this instead)."""
        self._announce()
        return self._inner.load_module(fullname)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_inner", "_spec", "_message"):
            raise AttributeError(name)
        return getattr(self._inner, name)


class Hook(importlib.abc.MetaPathFinder):
    """The finder ``install()`` puts on ``sys.meta_path``."""

    def __init__(self, rules: Any, packages: Sequence[str], phase: Optional[str],
                 versions: Optional[Mapping[str, str]], cache: Optional[str], on_error: str,
                 live: Optional[bool] = False) -> None:
        self.rules = rules
        self.live = live
        """Whether the functions its rules patch carry liveness probes (see ``_live``); ``None``:
        as ``REGRAFT_LIVE`` says when each module is patched (so ``pytest --regraft-live`` reaches
        a hook a plugin installed before it could set the variable)."""
        self.packages = tuple(packages)
        self.phase = phase
        self.versions = versions
        self.cache = cache
        self._cache = _cache.Cache(cache) if cache else None
        self.on_error = on_error
        self.hits = 0
        self.misses = 0
        self.skipped = 0
        """Modules no rule selects, left to the normal loader."""
        self._installed: Optional[Mapping[str, str]] = None
        self.modules: List[str] = []
        """The modules this hook patched as they were imported, in that order."""

    def live_now(self) -> bool:
        """Whether a module patched now gets liveness probes."""
        return self.live if self.live is not None else live_from_environment()

    @property
    def installed(self) -> bool:
        """Whether the hook is on ``sys.meta_path``: ``False`` for one that ``install`` did not
        put there (``outside_support="skip"``, every rule disabled) or that was uninstalled."""
        return self in sys.meta_path

    def _selects(self, fullname: str) -> bool:
        return any(fullname == p or fullname.startswith(p + ".") for p in self.packages)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if not self._selects(fullname):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None:
            return spec
        if not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            # A zip import or bytecode-only module: no source file to patch. Say so where a
            # rule would have run on it, rather than import it unpatched in silence.
            origin = spec.origin or ""
            if origin and spec.has_location and spec.loader is not None and self._may_patch(origin, fullname):
                spec.loader = _Unpatched(spec, f"regraft: {fullname} is loaded by "
                                         f"{type(spec.loader).__name__} from {origin}, not from a "
                                         "source file: its rules did not run")
            return spec
        # This hook is the first on `sys.meta_path` asked: it loads for every installed pack.
        hooks = [h for h in reversed(sys.meta_path)
                 if isinstance(h, Hook) and h._selects(fullname) and h._may_patch(spec.origin, fullname)]
        if self not in sys.meta_path and self._may_patch(spec.origin, fullname):
            hooks.append(self)
        if not hooks:
            # No rule selects this file (by its path, phase and version gates): the normal
            # loader runs it from its bytecode cache, and nothing of it is cached here.
            self.skipped += 1
            return spec
        spec.loader = _Loader(fullname, spec.origin, hooks)
        return spec

    def _versions(self) -> Mapping[str, str]:
        if self.versions is not None:
            return self.versions
        if self._installed is None:
            from . import installed_versions

            self._installed = installed_versions(self.rules.packages)
        return self._installed

    def _may_patch(self, filename: str, fullname: str) -> bool:
        """Whether any rule would run on the module's file (asked natively, without reading
        it); the rules' globs see the module's path below its import root."""
        try:
            return self.rules._would_run(filename, self._versions(), self.phase, None, fullname)
        except RegraftError:
            return True  # let patching report the problem where it happens

    def patched_source(self, fullname: str, path: str, source: str,
                       compiled: bool = False) -> Tuple[str, Dict[str, Any]]:
        """``source`` patched by this hook's rules (from the cache where it holds it), and
        what is known of the patched text: ``lines``, by rule, the line ranges its edits
        wrote; ``units``, with liveness on, the functions they wrote in; ``entry``, the cache
        entry holding it. ``compiled``: the caller compiles the result and asks again without
        this where CPython refuses it — that second asking reads no cache entry (it may be the
        refused text) and replaces it."""
        versions = self._versions()
        live = self.live_now()
        key = None
        if self._cache is not None:
            from . import __version__

            key = self._cache.key([source, path, fullname, self.rules.fingerprint,
                                   repr(sorted(versions.items())), self.phase or "",
                                   self.on_error, __version__, "live" if live else ""])
            found = self._cache.read(key) if compiled else None
            if found is not None:
                self.hits += 1
                text, drift, facts = found
                # Drift warned about when the entry was made is warned about on every start.
                for message in drift:
                    warnings.warn(message, RuntimeWarning, stacklevel=2)
                return text, dict(facts, entry=self._cache.entry(key))
        self.misses += 1
        run: Dict[str, Any] = {}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            patched = self.rules.apply(source, filename=path, versions=versions, phase=self.phase,
                                       on_error=self.on_error, module=fullname,
                                       _compiled=compiled, _facts=run)
        drift = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        for w in caught:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        facts = _written.facts(source, patched, run.get("written", []), run.get("report"),
                               live) if patched != source else {}
        if key is not None:
            self._cache.write(key, patched, drift, facts)
            facts = dict(facts, entry=self._cache.entry(key))
        return patched, facts

    def code_of(self, patched: str, path: str) -> types.CodeType:
        """``patched`` compiled under the file name ``path``; with a cache, the bytecode is kept
        beside the text (keyed on both and on this interpreter's bytecode version), so a warm
        start compiles nothing."""
        if self._cache is None:
            return compile(patched, path, "exec", dont_inherit=True)
        key = self._cache.key([patched, path, importlib.util.MAGIC_NUMBER.hex()])
        stored = self._cache.read_code(key)
        if stored is not None:
            try:
                code = marshal.loads(stored)
                if isinstance(code, types.CodeType):
                    return code
            except (ValueError, EOFError, TypeError):
                pass
        code = compile(patched, path, "exec", dont_inherit=True)
        self._cache.write_code(key, marshal.dumps(code))
        return code


def install(rules: Any, packages: Sequence[str] = ("transformers",), *, phase: Optional[str] = None,
            versions: Optional[Mapping[str, str]] = None, cache: Optional[str] = None,
            on_error: Optional[str] = None, children: bool = False,
            supports: Optional[Mapping[str, str]] = None, outside_support: str = "warn",
            live: Optional[bool] = None) -> Hook:
    """Patches the modules of ``packages`` as they are imported (modules imported before keep
    their code: import them after this, or ``importlib.reload`` them). ``cache`` is a folder
    for patched sources keyed by source × path × rules × versions, so a second start rewrites
    nothing; it must belong to the current user and be writable by nobody else (else it is not
    used, with a warning), and each entry is verified before it is run (see ``_cache``).
    Survives ``importlib.reload``; ``uninstall(hook)`` removes it.

    ``children=True`` carries the hook into child interpreters this process starts (data-loader
    workers and ``multiprocessing`` children started with ``spawn``, tools that start their own
    Python workers): the same rules and settings go into the environment variable
    ``REGRAFT_BOOTSTRAP``, and the ``regraft-bootstrap.pth`` the wheel installs re-installs
    them at the child's start, before its first import. Off by default: a child sees only
    what its parent asked for.

    ``on_error`` (``"raise"`` unless given) is what a rule that fails on a module does:
    raise, or ``"warn"`` and import the module with the other rules' edits. A hook carried into
    a child (``children=True``) is one nobody there asked for: it warns unless the parent gave
    ``on_error`` itself (a data-loader worker should not die of a drift the parent would have
    raised at its own import).

    ``supports`` declares the package versions the rules were written for (``{"transformers":
    ">=4.46,<5.30"}``, PEP 440); where an installed version falls outside, ``outside_support``
    decides: ``"warn"`` (install, with a ``RuntimeWarning``), ``"skip"`` (warn and install
    nothing: a patcher never half-patches a release it does not know) or ``"error"`` (raise
    ``RegraftError``).

    ``live=True`` (``None``: ``REGRAFT_LIVE=1`` in the environment, as ``pytest
    --regraft-live`` sets it) puts a probe into every function a rule patches: its first call
    is recorded, and ``regraft.unexercised()`` lists the patched functions never called — a
    rule that applies while upstream no longer runs what it patched."""
    carried = on_error or "warn"
    on_error = on_error or "raise"
    if outside_support not in ("warn", "skip", "error"):
        raise ValueError(f"outside_support must be 'warn', 'skip' or 'error', not {outside_support!r}")
    enabled = rules._enabled()
    if enabled is None:
        warnings.warn("regraft: REGRAFT_DISABLE turns every rule off: the import hook is not "
                      "installed", RuntimeWarning, stacklevel=2)
        return Hook(rules, packages, phase, versions, cache, on_error, live)
    hook = Hook(enabled, packages, phase, versions, cache, on_error, live)
    for active in sys.meta_path:
        if isinstance(active, Hook) and _same_activation(active, hook):
            # One activation per process: a second hook would rewrite nothing more (the first
            # already patches these imports) but would make two of everything to undo.
            warnings.warn("regraft: these rules are already installed for "
                          f"{', '.join(hook.packages)}; the hook installed first is returned",
                          RuntimeWarning, stacklevel=2)
            return active
    # The window is checked against the versions given and against those installed: the
    # installed code is what runs. Reading them here also means `find_spec`, which runs under
    # the import system's global lock, never reads package metadata (which runs the
    # distribution finders of `sys.meta_path`: user code).
    outside = _outside_support(supports or {}, hook._versions())
    if not outside and versions is not None:
        outside = _outside_support(supports or {}, {})
    if outside:
        message = (f"regraft: {outside} is outside the versions these rules support "
                   f"({', '.join(f'{p} {s}' for p, s in (supports or {}).items())})")
        if outside_support == "error":
            raise RegraftError(message)
        warnings.warn(message + ("; not installed" if outside_support == "skip" else ""),
                      RuntimeWarning, stacklevel=2)
        if outside_support == "skip":
            return hook
    if children:
        from . import _carry

        _carry.export(rules, packages, phase, versions, cache, carried, live)
        hook._exported = True
    sys.meta_path.insert(0, hook)
    return hook


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")


def live_from_environment() -> bool:
    """``REGRAFT_LIVE``: on for 1/true/yes/on, off for 0/false/no/off or unset (and under
    ``python -E``, which ignores ``PYTHON*`` and this alike); anything else is off, said once."""
    if sys.flags.ignore_environment:
        return False
    value = os.environ.get("REGRAFT_LIVE", "").strip().lower()
    if value in _TRUE:
        return True
    if value not in _FALSE and value not in _WARNED:
        _WARNED.append(value)
        warnings.warn(f"regraft: REGRAFT_LIVE={value!r} is none of 1/true/yes/on or 0/false/no/off: "
                      "liveness stays off", RuntimeWarning, stacklevel=3)
    return False


_WARNED: List[str] = []


def _same_activation(a: Hook, b: Hook) -> bool:
    """Whether two hooks would patch the same modules with the same rules the same way."""
    return (a.rules.fingerprint == b.rules.fingerprint and a.packages == b.packages
            and a.phase == b.phase and a.versions == b.versions and a.on_error == b.on_error
            and a.live == b.live)


def _outside_support(supports: Mapping[str, str], installed: Mapping[str, str]) -> str:
    """The first ``package version`` installed outside its supported specifiers, or ``""``. A
    package that is not installed is no concern of the window; one that is installed but
    whose version cannot be read (no ``Version`` in its metadata, metadata that cannot be
    read, a version PEP 440 cannot parse) is outside it: nothing says it is inside."""
    from ._native import admits

    for package, specifiers in supports.items():
        admits(specifiers, "0")  # a specifier that does not parse is the caller's error
        version = installed.get(package)
        if version is None:
            present, version = _installed_version(package)
            if not present:
                continue
            if not version:
                return f"{package} (installed, its version unreadable)"
        try:
            inside = admits(specifiers, version)
        except Exception:  # the native parser's error for a version PEP 440 cannot parse
            return f"{package} {version} (not a PEP 440 version)"
        if not inside:
            return f"{package} {version}"
    return ""


def _installed_version(package: str) -> Tuple[bool, Optional[str]]:
    """Whether ``package`` is installed, and its version as its metadata says (None where
    that cannot be read)."""
    from importlib import metadata

    try:
        return True, metadata.version(package)
    except metadata.PackageNotFoundError:
        return False, None
    except Exception:  # metadata that cannot be read or parsed: installed, version unknown
        return True, None


def uninstall(hook: Hook, *, reload: bool = False) -> List[str]:
    """Removes a hook ``install()`` returned. A hook installed with ``children=True`` stops
    being handed to children started later. Modules it patched keep their patched code unless
    ``reload=True``: then each is re-imported from its own source (``importlib.reload``, last
    patched first) and the list of them is returned. A reload rebinds the module's names; what
    other code took from it before (``from m import Cls``, instances of its classes) keeps the
    patched objects — as after any reload."""
    if hook in sys.meta_path:
        sys.meta_path.remove(hook)
    if getattr(hook, "_exported", False):
        from . import _carry

        _carry.withdraw()
        hook._exported = False
    reloaded: List[str] = []
    if reload:
        for name in reversed(hook.modules):
            module = sys.modules.get(name)
            if module is not None:
                # The patched text registered for the file would still be what tracebacks
                # and `inspect.getsource` show.
                linecache.cache.pop(getattr(module, "__file__", None) or "", None)
                # Its probes go with the code they were in; another pack still patching the
                # module gives it new ones as the reload runs.
                if "regraft._live" in sys.modules:
                    sys.modules["regraft._live"].forget([name])
                importlib.reload(module)
                reloaded.append(name)
        hook.modules.clear()
    return reloaded
