"""The `derive_class` oracle: a generated class whose ``__init__`` has a generated signature
(every parameter kind, annotations, defaults — some read module-level names, some evaluated
with a side effect) records what each parameter received; the rule derives a subclass with
one more parameter. Called on generated arguments, the derived class must bind what the
original binds (or raise the same), keep the added parameter, and take the class's docstring —
or regraft refuses.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from . import Case, Chooser, load, outcome_of, written
from .outline import _arguments, _param_text, _params, _valid

PRELUDE = '''\
EVALS = []
LIMIT = "module"


def note(tag, value):
    EVALS.append(tag)
    return value


class Base:
    def __init__(self, *args, **kwargs):
        self.base_args = (args, kwargs)

'''


CONSTANTS = ["1", "None", "'s'", "(1, -2)", "-1.5"]


def case(choose: Chooser) -> Case:
    # Mostly constants: a default that is not one is refused (evaluated again at module level
    # it could mean something else), and a run of refusals judges nothing.
    params = [(kind, name, default if default in CONSTANTS or not default or choose.coin(0.15)
               else choose.pick(CONSTANTS), ann)
              for kind, name, default, ann in _valid(_params(choose, "self"))]
    cls = choose.pick(["Trainer", "DPOTrainer", "_Hidden", "Config2"])
    doc = choose.pick(['', '"""A trainer."""\n    ', '"""Multi\n    line."""\n\n    '])
    decorator = choose.pick(["", "", "", "", "", "@staticmethod\n    "])
    names = [name for kind, name, _, _ in params[1:] if kind not in ("bare",)]
    record = ", ".join(f"{name!r}: {name}" for name in names)
    calls_super = choose.coin(0.5)
    body = f"self.seen = {{{record}}}"
    if calls_super:
        body += "\n        super().__init__()"
    source = PRELUDE + (
        f"class {cls}(Base):\n    {doc}LIMIT = 'class'\n\n"
        f"    {decorator}def __init__({_param_text(params)}):\n        {body}\n"
        f"\n\nAFTER = 1\n"
    )
    added = choose.pick(["extra_p=5", "extra_p: int = note('added', 5)", "seen=1", "p0=3"])
    rule = (
        "id: derive-oracle\n"
        f"inside: {{class: {cls}}}\n"
        "match: 'def __init__($$$P): $$$B'\n"
        "action:\n  derive_class:\n    name: 'Derived${class}'\n"
        f"    parameters: \"{added}\"\n"
        f"    after_super: 'self.added = {added.split('=')[0].split(':')[0].strip()}'\n"
        "expect: 1\n"
    )
    calls = [_arguments(choose, params, bound_first=True) for _ in range(choose.count(1, 4))]
    return Case(source, rule, facts={"cls": cls, "calls": calls, "added": added})


def _observe(module: Any, cls: str, name: str, calls: List) -> Dict[str, Any]:
    target = getattr(module, name)
    facts: Dict[str, Any] = {"doc": getattr(module, cls).__doc__}
    for i, (args, kwargs) in enumerate(calls):
        def make(args=args, kwargs=kwargs):
            obj = target(*args, **kwargs)
            return (getattr(obj, "seen", None), getattr(obj, "base_args", None))
        outcome = outcome_of(make)
        if outcome[0] == "raised":
            # The message names the class; what is raised, and why, must agree.
            outcome = ("raised", outcome[1], outcome[2].replace(f"Derived{cls}", cls))
        facts[f"call {i}"] = outcome
    return facts


def judge(case: Case) -> Optional[str]:
    """None when the derived class forwards as the original binds (or regraft refused)."""
    output, failure = written(case)
    if output is None:
        return failure
    if output == case.source:
        return "changed nothing without refusing (expect: 1 should have failed)"
    cls = case.facts["cls"]
    try:
        original = load(case.source, "oracle_original")
    except Exception:
        return None  # the generator wrote a module that cannot run: not regraft's to judge
    try:
        derived = load(output, "oracle_derived")
    except Exception as error:
        return f"the derived module fails at import: {type(error).__name__}: {error}\n{output}"
    calls = case.facts["calls"]
    before = _observe(original, cls, cls, calls)
    after = _observe(derived, cls, f"Derived{cls}", calls)
    differences = [f"{key}: {before[key]!r} != {after.get(key)!r}"
                   for key in before if before[key] != after.get(key)]
    added = case.facts["added"]
    default = 5 if "extra_p" in added else None
    if default is not None:
        made = outcome_of(lambda: getattr(derived, f"Derived{cls}")(*calls[0][0], **calls[0][1]).added)
        if before["call 0"][0] == "ok" and made != ("ok", default):
            differences.append(f"the added parameter: {made!r}, not its default {default}")
    if differences:
        return "\n".join(differences) + "\n--- original\n" + case.source[len(PRELUDE):] + \
            "\n--- derived\n" + output[len(PRELUDE):]
    return None
