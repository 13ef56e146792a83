"""Oracles: generated programs, regraft run on them in-process, CPython as the judge.

Each oracle module has ``case(choose)`` building one generated program and its rule from a
chooser, and ``judge(case)`` returning ``None`` when CPython agrees that meaning was kept (or
regraft refused with the source untouched), else a text saying what differs. The pytest suite
drives the choosers with hypothesis (shrinking a failure to a small program); ``bench/oracles.py``
drives them with a seeded ``random.Random`` for thousands of cases and prints the figures.
"""

from __future__ import annotations

import os
import pathlib
import random
import subprocess
import sys
import tempfile
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, TypeVar

T = TypeVar("T")


class Chooser:
    """What a generator draws from: a choice among options, a count, a coin."""

    def pick(self, options: Sequence[T]) -> T:
        raise NotImplementedError

    def count(self, low: int, high: int) -> int:
        raise NotImplementedError

    def coin(self, p: float = 0.5) -> bool:
        return self.count(0, 99) < int(p * 100)

    def some(self, options: Sequence[T], low: int, high: int) -> List[T]:
        """A sequence of ``low`` to ``high`` picks."""
        return [self.pick(options) for _ in range(self.count(low, high))]


class Seeded(Chooser):
    """A chooser over ``random.Random(seed)``: the bench's thousands of cases."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def pick(self, options: Sequence[T]) -> T:
        return options[self.random.randrange(len(options))]

    def count(self, low: int, high: int) -> int:
        return self.random.randint(low, high)


class Drawn(Chooser):
    """A chooser over hypothesis's ``data``: failures shrink to the smallest program."""

    def __init__(self, data: Any) -> None:
        from hypothesis import strategies as st

        self.data, self.st = data, st

    def pick(self, options: Sequence[T]) -> T:
        return self.data.draw(self.st.sampled_from(list(options)))

    def count(self, low: int, high: int) -> int:
        return self.data.draw(self.st.integers(low, high))


@dataclass
class Case:
    """One generated program, the rule applied to it, and what the oracle needs to judge it."""

    source: str
    rule: str
    filename: str = "generated_mod.py"
    facts: Dict[str, Any] = field(default_factory=dict)
    """Generator-side facts the judge uses (which names to call, with what)."""
    refusal: Optional[str] = None
    """Set by the judge: regraft's refusal, when it refused."""


@dataclass
class Outcome:
    """What regraft did with a case: the output text, or the refusal."""

    output: Optional[str]
    refusal: Optional[str]


def run_regraft(case: Case) -> Outcome:
    """Applies the case's rule in-process (the engine the CLI runs), or with the command line
    at ``$REGRAFT_ORACLE_CLI`` when that is set (``apply --write``: its exit code and the file
    written are what is judged)."""
    cli = os.environ.get("REGRAFT_ORACLE_CLI")
    if cli:
        return _run_cli(cli, case)
    import regraft

    rules = regraft.Rules.parse(case.rule, "yaml", "oracle.yaml")
    try:
        return Outcome(rules.apply(case.source, case.filename, versions={}), None)
    except regraft.RegraftError as error:
        return Outcome(None, str(error))


def written(case: Case) -> "tuple[Optional[str], Optional[str]]":
    """Runs regraft on the case (its refusal kept on ``case.refusal``) and holds the output to
    CPython's ``compile()`` and to the input's line ends: ``(output, None)`` to judge further,
    ``(None, None)`` for a refusal (always acceptable), ``(None, failure)`` otherwise."""
    outcome = run_regraft(case)
    case.refusal = outcome.refusal
    if outcome.refusal is not None:
        return None, None
    output = outcome.output
    assert output is not None
    error = compiles(output)
    if error:
        return None, f"output does not compile: {error}\n--- output\n{output}"
    if "\r\n" in case.source and output.replace("\r\n", "").count("\n"):
        return None, f"a CRLF file got bare line feeds\n--- output\n{output!r}"
    return output, None


def _run_cli(cli: str, case: Case) -> Outcome:
    with tempfile.TemporaryDirectory() as folder:
        target = pathlib.Path(folder, case.filename)
        target.write_bytes(case.source.encode())
        pathlib.Path(folder, "oracle.yaml").write_text(case.rule)
        run = subprocess.run([cli, "apply", "--no-config", "--color", "never", "-r", "oracle.yaml",
                              "--write", case.filename], cwd=folder, capture_output=True,
                             text=True)
        written = target.read_bytes().decode()
        if run.returncode != 0:
            if written != case.source:
                return Outcome(written, f"exit {run.returncode} but the file was written")
            return Outcome(None, run.stderr)
        return Outcome(written, None)


def load(source: str, name: str, extra: Optional[Dict[str, Any]] = None) -> types.ModuleType:
    """Executes ``source`` as a fresh module ``name`` (registered while it runs, as an import
    would), returning it; whatever it raises propagates."""
    module = types.ModuleType(name)
    module.__dict__.update(extra or {})
    sys.modules[name] = module
    try:
        exec(compile(source, f"<{name}>", "exec", dont_inherit=True), module.__dict__)
    finally:
        sys.modules.pop(name, None)
    return module


def comparable(value: Any) -> Any:
    """``value`` with instances of generated classes (whose identity differs between the two
    modules) replaced by their class's name, so results compare by meaning."""
    if isinstance(value, types.GeneratorType):
        return ("generator", outcome_of(lambda: list(value)))
    if isinstance(value, (list, tuple)):
        return type(value)(comparable(v) for v in value)
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items()}
    if isinstance(value, type):
        return f"<class {value.__qualname__}>"
    if type(value).__module__.startswith("oracle_"):
        return f"<{type(value).__qualname__} instance>"
    return value


def outcome_of(call: Callable[[], Any]) -> Any:
    """A call's result or its exception (type and message), materialising generators."""
    try:
        value = call()
        if isinstance(value, types.GeneratorType):
            value = ("generator", outcome_of(lambda: list(value)))
        return ("ok", comparable(value))
    except Exception as error:  # the judge compares exceptions as values
        return ("raised", type(error).__name__, str(error))


def compiles(source: str) -> Optional[str]:
    """CPython's verdict on ``source`` as a module: None, or the error."""
    try:
        compile(source, "<output>", "exec", dont_inherit=True)
        return None
    except (SyntaxError, ValueError) as error:
        return f"{type(error).__name__}: {error}"
