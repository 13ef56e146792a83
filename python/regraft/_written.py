"""What is known of a patched module's text, for the import hook: where each rule's edits
wrote (line ranges, and with liveness the functions they wrote in), kept true through the
edits of packs that patch the module after, and the error that names the rule when patched
code fails as the module runs."""

from __future__ import annotations

import bisect
import sys
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from . import _sources
from ._native import RegraftError

_PHASES = {"init": 0, "pre_compile": 1, "post_compile": 2}


def facts(source: str, patched: str, written: Sequence[Tuple[str, int, int]], report: Any,
          live: bool) -> Dict[str, Any]:
    """The facts of one pack's run (``written`` and ``report`` as ``Rules.apply`` gives them):
    ``lines``, by rule, the first and last line each edit wrote; with ``live``, ``units``, the
    functions they wrote in (see ``_live.units``)."""
    if not written:
        return {}
    found: Dict[str, Any] = {"lines": lines_by_rule(patched, written)}
    if live:
        from . import _live

        try:
            found["units"] = _live.units(patched, written,
                                         deleted=(source, deletions(source, report)))
        except SyntaxError:
            pass  # compiling it says so, in CPython's own words
    return found


def lines_by_rule(text: str, written: Sequence[Tuple[str, int, int]]) -> Dict[str, List[List[int]]]:
    """``written``'s ``str`` ranges of ``text`` as first and last lines (from 1), by rule."""
    starts = _sources.line_starts(text)
    found: Dict[str, List[List[int]]] = {}
    for rule, start, end in written:
        first = bisect.bisect_right(starts, start)
        found.setdefault(rule, []).append([first, max(first, bisect.bisect_right(starts, end - 1))])
    return found


def deletions(source: str, report: Any) -> Dict[str, List[Tuple[int, int]]]:
    """By rule, the ``str`` ranges of ``source`` its deletions removed: the edits with no
    replacement of the rules that ran first on it (the first phase's first step; later steps
    saw other text)."""
    ran = [r for r in getattr(report, "rules", []) if r.status == "applied"]
    if not ran:
        return {}
    first = min((_PHASES.get(r.phase, 1), r.step) for r in ran)
    starts = _sources.line_starts(source)

    def index(line: int, column: int) -> int:
        return starts[min(line, len(starts)) - 1] + column - 1

    found: Dict[str, List[Tuple[int, int]]] = {}
    for r in ran:
        if (_PHASES.get(r.phase, 1), r.step) != first:
            continue
        for m in r.matches:
            for e in m.edits:
                if e.replacement == "":
                    # The code deleted, without the indentation and line end around it.
                    a, b = index(e.line, e.column), index(e.end_line, e.end_column)
                    text = source[a:b]
                    a += len(text) - len(text.lstrip())
                    b -= len(text) - len(text.rstrip())
                    found.setdefault(r.rule, []).append((a, max(a, b)))
    return found


def moved(earlier: Sequence[Dict[str, Any]], before: str, after: str) -> None:
    """Moves the line numbers ``earlier`` packs' facts give (in ``before``) to ``after``, the
    text a later pack made of it: unchanged lines by the difference of the two, lines it
    rewrote to where its rewrite stands."""
    import difflib

    old, new = before.split("\n"), after.split("\n")
    blocks = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()

    def line(n: int) -> int:
        k = n - 1  # the opcodes count lines from 0
        for tag, a0, a1, b0, _ in blocks:
            if a0 <= k < a1:
                return b0 + (k - a0) + 1 if tag == "equal" else b0 + 1
        return len(new)

    for f in earlier:
        f["lines"] = {rule: [[line(a), max(line(a), line(b))] for a, b in spans]
                      for rule, spans in f.get("lines", {}).items()}
        if "units" in f:
            f["units"] = {rule: [(q, line(n) if n else n, c) for q, n, c in keys]
                          for rule, keys in f["units"].items()}


def _failing_lines(error: BaseException, name: str) -> Tuple[int, int]:
    """The first and last line of what raised ``error`` in code compiled as ``name``: the
    innermost such frame's instruction (3.11 and later know its whole span)."""
    span = (0, 0)
    tb = error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == name:
            span = (tb.tb_lineno, tb.tb_lineno)
            if sys.version_info >= (3, 11) and tb.tb_lasti >= 0:
                positions = list(code.co_positions())
                at = tb.tb_lasti // 2
                if at < len(positions) and positions[at][0] is not None:
                    span = (positions[at][0], positions[at][1] or positions[at][0])
        tb = tb.tb_next
    return span


def import_failure(module: str, name: str, packs: Sequence[Mapping[str, Any]],
                   error: BaseException) -> Optional[BaseException]:
    """The error to raise for patched code of ``module`` (compiled as ``name``) that failed as
    it ran, naming the rules and the cache entry; ``None`` where the failure is the module's
    own: an ``ImportError`` (an optional dependency missing) raised where no rule wrote, or
    what is no error (``pytest.skip``), or a failure of another patched module it imports
    (named there)."""
    if not isinstance(error, Exception) or isinstance(error, RegraftError):
        return None
    first, last = _failing_lines(error, name)
    wrote = [rule for f in packs for rule, spans in f.get("lines", {}).items()
             if first and any(a <= last and first <= b for a, b in spans)]
    if not wrote and isinstance(error, ImportError):
        return None
    rules = ", ".join(f"`{r}`" for r in dict.fromkeys(
        wrote or [rule for f in packs for rule in f.get("lines", {})]))
    if wrote:
        where = f", at line {first}, which {'rule' if len(set(wrote)) == 1 else 'rules'} {rules} wrote"
    else:
        where = f", at line {first} of the text {rules} patched" if first else f" (patched by {rules})"
    entries = [f["entry"] for f in packs if f.get("entry")]
    cached = f"; the patched text is the cache entry {entries[-1]}" if entries else ""
    return RegraftError(f"regraft: the patched {module} fails to run: "
                        f"{type(error).__name__}: {error}{where}{cached}")
