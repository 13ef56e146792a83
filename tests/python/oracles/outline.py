"""The `outline` oracle: a generated class (or module-level function) with one function of a
generated shape is outlined; the original and the outlined module are executed and the
function is called on generated arguments. Results, exceptions, ``__doc__``,
``inspect.signature``, generator-ness, what decorators do, what runs at import time and how
often defaults are evaluated must be identical — or regraft refuses.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any, Dict, List, Optional, Tuple

from . import Case, Chooser, comparable, load, outcome_of, written

PRELUDE = '''\
import contextlib
import functools
import inspect

EVALS = []
AT_IMPORT = []
COUNTER = 0
LIMIT = "module"


def note(tag, value):
    EVALS.append(tag)
    return value


def wrapping(f):
    @functools.wraps(f)
    def wrapper(*a, **k):
        return ("wrapped", f(*a, **k))
    return wrapper


def generator_aware(f):
    # As torch.no_grad does: a generator function is wrapped as a generator.
    if inspect.isgeneratorfunction(f):
        @functools.wraps(f)
        def gen(*a, **k):
            for item in f(*a, **k):
                yield ("g", item)
        return gen

    @functools.wraps(f)
    def plain(*a, **k):
        return ("f", f(*a, **k))
    return plain


def record(call):
    try:
        AT_IMPORT.append(("ok", call()))
    except Exception as error:
        AT_IMPORT.append(("raised", type(error).__name__, str(error)))


def calls_at_definition(cls):
    record(lambda: CALL_AT_IMPORT(cls))
    return cls


class CallingBase:
    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        record(lambda: CALL_AT_IMPORT(cls))


'''

DECORATORS = ["", "", "staticmethod", "classmethod", "property", "setter", "wrapping",
              "generator_aware", "contextmanager"]
BODIES = ["record", "record", "generator", "generator_return", "try_finally", "docstring_only",
          "doc_and_body", "mutate_default", "comprehension", "global", "super_alias",
          "super_explicit", "zero_super", "dunder_class", "private", "reads_own_name"]
CLASS_BODIES = {"super_alias", "super_explicit", "zero_super", "dunder_class", "private"}
DEFAULTS = ["1", "None", "[]", "note('{p}', 7)", "LIMIT", "CLASS_LIMIT"]
ANNOTATIONS = ["", "", "int", "'Later'", "CLASS_T", "list"]
NAMES = ["${class}_${def}", "${class}_${def}", "${def}_impl", "__hidden_${def}", "note", "PARAM"]


def _mangled(cls: str, name: str) -> str:
    """The attribute a class body's ``name`` is stored under (Python's private-name rule)."""
    if not name.startswith("__") or name.endswith("__") or not cls.strip("_"):
        return name
    return f"_{cls.lstrip('_')}{name}"


def _params(choose: Chooser, first: Optional[str]) -> List[Tuple[str, str, str, str]]:
    """(kind, name, default, annotation) for a generated parameter list; kinds are ``pos``
    (positional-only), ``arg``, ``star`` (``*args``), ``bare`` (a lone ``*``), ``kw`` and
    ``kwargs``; the first parameter is ``first`` (``self``, ``cls``) if given."""
    out: List[Tuple[str, str, str, str]] = []
    if first:
        out.append(("pos" if choose.coin(0.2) else "arg", first, "", ""))
    names = iter(f"p{i}" for i in range(20))
    defaulted = False
    for kind in ("pos", "arg"):
        for _ in range(choose.count(0, 2)):
            defaulted = defaulted or choose.coin(0.4)
            default = choose.pick(DEFAULTS) if defaulted else ""
            out.append((kind, next(names), default, choose.pick(ANNOTATIONS)))
    if out and out[-1][0] == "pos" and all(k == "pos" for k, *_ in out) and choose.coin(0.5):
        pass  # positional-only up to the end: `/` closes the list
    star = choose.pick(["", "", "star", "bare"])
    kws = choose.count(1 if star == "bare" else 0, 2)
    if star == "star":
        out.append(("star", "args", "", choose.pick(["", "int"])))
    elif star == "bare" or kws:
        out.append(("bare", "", "", ""))
    for _ in range(kws):
        default = choose.pick(DEFAULTS + [""])
        out.append(("kw", next(names), default, choose.pick(ANNOTATIONS)))
    if choose.coin(0.3):
        out.append(("kwargs", "kwargs", "", choose.pick(["", "int"])))
    return out


def _param_text(params: List[Tuple[str, str, str, str]]) -> str:
    parts: List[str] = []
    for i, (kind, name, default, ann) in enumerate(params):
        if kind == "bare":
            parts.append("*")
            continue
        prefix = {"star": "*", "kwargs": "**"}.get(kind, "")
        text = prefix + name + (f": {ann}" if ann else "")
        if default:
            text += (" = " if ann else "=") + default.format(p=name)
        parts.append(text)
        following = params[i + 1][0] if i + 1 < len(params) else None
        if kind == "pos" and following != "pos":
            parts.append("/")
    return ", ".join(parts)


def _body(kind: str, params: List[Tuple[str, str, str, str]], cls: str, indent: str,
          fname: str) -> List[str]:
    """The body's lines (without indentation) for a body kind."""
    names = [n for k, n, *_ in params if k != "bare"]
    values = "(" + "".join(f"{n}, " for n in names) + ")"
    mutable = [n for k, n, d, _ in params if d == "[]"]
    if kind == "record":
        return [f"return {values}"]
    if kind == "generator":
        return [f"for item in {values}:", "    yield item"]
    if kind == "generator_return":
        return [f"yield {values}", "return 'finished'"]
    if kind == "try_finally":
        return ["try:", f"    return {values}", "finally:", "    EVALS.append('finally')"]
    if kind == "docstring_only":
        return ['"""Only a docstring."""']
    if kind == "doc_and_body":
        return ['"""A docstring.', "", '    Over two lines."""', f"return {values}"]
    if kind == "mutate_default":
        return [f"{n}.append(1)" for n in mutable] + [
            "return (" + "".join(f"len({n}), " for n in mutable) + ")"]
    if kind == "comprehension":
        return [f"return [(lambda v: v)(v) for v in {values}]"]
    if kind == "global":
        return ["global COUNTER", "COUNTER += 1", f"return (COUNTER, {values})"]
    if kind == "super_alias":
        return ["s = super", "return s().__init_subclass__ is not None"]
    if kind == "super_explicit":
        return [f"return super({cls}, {names[0] if names else 'None'}).__class__.__name__"]
    if kind == "zero_super":
        return ["return super().__class__.__name__"]
    if kind == "dunder_class":
        return ["return __class__.__name__"]
    if kind == "private":
        return ["return __secret"]
    if kind == "reads_own_name":
        return [f"return {fname!r}, {values}"]
    raise AssertionError(kind)


def case(choose: Chooser) -> Case:
    """One generated module and an outline rule for its function ``m``."""
    method = choose.coin(0.85)
    cls = choose.pick(["C", "C", "__X", "_Private"]) if method else ""
    decorator = choose.pick(DECORATORS) if method else choose.pick(["", "wrapping",
                                                                      "generator_aware"])
    fname = choose.pick(["m", "m", "__m", "__call__"]) if method else "m"
    if decorator in ("property", "setter"):
        fname = "m"
    first = {"staticmethod": None, "classmethod": "cls"}.get(decorator, "self") if method else None
    if decorator in ("property", "setter"):
        params = [("arg", "self", "", "")]
        if decorator == "setter":
            params.append(("arg", "value", "", ""))
    else:
        params = _params(choose, first)
    body = choose.pick(BODIES if method else [b for b in BODIES if b not in CLASS_BODIES])
    if decorator == "contextmanager":
        body = choose.pick(["generator", "generator_return"])
    if body == "mutate_default" and not any(d == "[]" for _, _, d, _ in params):
        body = "record"
    name = choose.pick(NAMES)
    if name == "PARAM":
        if decorator in ("property", "setter"):
            name = "${class}_${def}"
        else:
            # The outline's name is also a parameter's: inside the forwarder it names that.
            name = "clash"
            params = _valid(params + [("kw", "clash", "0", "")])
    type_params = method and sys.version_info >= (3, 12) and choose.coin(0.1)
    caller = choose.pick(["", "", "", "decorator", "init_subclass", "between"])
    if not method and caller != "between":
        caller = ""
    indent = "    " if method else ""
    lines: List[str] = []
    if caller == "decorator":
        lines.append("@calls_at_definition")
    if method:
        base = "(CallingBase)" if caller == "init_subclass" else ""
        lines += [f"class {cls}{base}:", "    CLASS_LIMIT = 5", "    CLASS_T = int",
                  "    __secret = 'class secret'", ""]
    getter_needed = decorator == "setter"
    if getter_needed:
        lines += [f"{indent}@property", f"{indent}def m(self):",
                  f"{indent}    return getattr(self, 'stored', None)", ""]
    if decorator == "setter":
        lines.append(f"{indent}@m.setter")
    elif decorator == "contextmanager":
        lines.append(f"{indent}@contextlib.contextmanager")
    elif decorator:
        lines.append(f"{indent}@{decorator}")
    tp = "[T]" if type_params else ""
    lines.append(f"{indent}def {fname}{tp}({_param_text(params)}):")
    body_lines = _body(body, params, cls, indent, fname)
    if decorator == "setter":
        body_lines = ["self.stored = (value, 'set')"] + (
            body_lines if body not in ("generator", "generator_return", "docstring_only")
            else [])
    lines += [f"{indent}    {line}" if line else "" for line in body_lines]
    lines.append("")
    target = f"{cls}" if method else fname
    args, kwargs = _arguments(choose, params, first is not None)
    call_at_import = _call_expression(decorator, method, fname, cls, args, kwargs)
    between = [f"AT_BETWEEN = repr(outcome_probe(lambda: CALL_AT_IMPORT({target})))"]
    after = ""
    if caller == "between":
        lines += [""] + between + ["", "", "def later():", "    return None", ""]
        after = ", after: later"
    source = PRELUDE + f"CALL_AT_IMPORT = lambda target: {call_at_import}\n\n" + \
        "def outcome_probe(call):\n    try:\n        return ('ok', call())\n" \
        "    except Exception as error:\n        return ('raised', type(error).__name__)\n\n\n" + \
        "\n".join(lines) + "\n"
    inside = f"inside: {{class: '{cls}'}}\n" if method else ""
    rule = (f"id: outline-oracle\nmatch: 'def {fname}($$$P): $$$B'\n{inside}"
            f"action: {{outline: {{name: '{name}'{after}}}}}\nexpect: {{min: 1}}\n")
    calls = [(args, kwargs)] + [_arguments(choose, params, first is not None)
                                for _ in range(choose.count(1, 4))]
    return Case(source, rule, facts={
        "method": method, "cls": cls, "fname": fname, "decorator": decorator, "body": body,
        "calls": calls, "name": name, "caller": caller})


def _valid(params: List[Tuple[str, str, str, str]]) -> List[Tuple[str, str, str, str]]:
    """Keyword-only parameters after a `*` (added where there is none), `**kwargs` last."""
    kwargs = [p for p in params if p[0] == "kwargs"]
    rest = [p for p in params if p[0] != "kwargs"]
    kws = [p for p in rest if p[0] == "kw"]
    positional = [p for p in rest if p[0] not in ("kw",)]
    if kws and not any(p[0] in ("star", "bare") for p in positional):
        positional.append(("bare", "", "", ""))
    return positional + kws + kwargs


def _arguments(choose: Chooser, params, bound_first: bool) -> Tuple[List[Any], Dict[str, Any]]:
    """Arguments for one call: each parameter passed by position or keyword, or left to its
    default, sometimes extra or missing ones."""
    args: List[Any] = []
    kwargs: Dict[str, Any] = {}
    positional_open = True
    for i, (kind, name, default, _) in enumerate(params):
        if i == 0 and bound_first:
            continue
        value = choose.pick([0, 1, 2, "s", (3,)])
        if kind in ("pos", "arg"):
            how = choose.pick(["position", "position", "keyword", "omit"])
            if how == "omit" and (default or choose.coin(0.1)):
                positional_open = False
                continue
            if kind == "arg" and (how == "keyword" or not positional_open):
                kwargs[name] = value
                positional_open = False
            elif positional_open:
                args.append(value)
            else:
                kwargs[name] = value
        elif kind == "star" and positional_open:
            args += [choose.pick([7, 8])] * choose.count(0, 2)
        elif kind == "kw":
            if not default or choose.coin(0.6):
                kwargs[name] = value
        elif kind == "kwargs" and choose.coin(0.5):
            kwargs["extra"] = 9
    if choose.coin(0.1):
        kwargs["unknown_keyword"] = 1
    return args, kwargs


def _call_expression(decorator: str, method: bool, fname: str, cls: str, args, kwargs) -> str:
    """A Python expression calling the function on ``target`` (the class, or the function)."""
    attr = _mangled(cls, fname) if method else fname
    arglist = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
    if not method:
        head = f"target({arglist})"
    elif decorator == "property":
        return f"getattr(target(), {attr!r})"
    elif decorator == "setter":
        return f"(lambda o: (setattr(o, {attr!r}, 4), o.stored))(target())"
    else:
        head = f"getattr(target(), {attr!r})({arglist})"
    if decorator == "contextmanager":
        return f"(lambda cm: cm.__enter__())({head})"
    return f"(lambda v: list(v) if inspect.isgenerator(v) else v)({head})"


def _observe(module: Any, facts: Dict[str, Any]) -> Dict[str, Any]:
    """What a caller can see of the function in an executed module."""
    seen: Dict[str, Any] = {"evals": list(module.EVALS),
                            "at_import": comparable(list(module.AT_IMPORT)),
                            "between": getattr(module, "AT_BETWEEN", None)}
    if facts["method"]:
        cls = getattr(module, facts["cls"])
        attr = _mangled(facts["cls"], facts["fname"])
        raw = cls.__dict__[attr]
        function = getattr(raw, "fget", None) or getattr(raw, "__func__", None) or raw
        if facts["decorator"] == "setter":
            function = raw.fset
    else:
        cls, function = None, getattr(module, facts["fname"])
    seen["doc"] = function.__doc__
    seen["generator"] = inspect.isgeneratorfunction(function)
    try:
        seen["signature"] = str(inspect.signature(function))
    except (TypeError, ValueError) as error:
        seen["signature"] = repr(error)
    for i, (args, kwargs) in enumerate(facts["calls"]):
        target = cls if facts["method"] else function
        expression = _call_expression(facts["decorator"], facts["method"], facts["fname"],
                                      facts["cls"], args, kwargs)
        namespace = dict(module.__dict__, target=target)
        seen[f"call{i}"] = outcome_of(lambda: eval(expression, namespace))
        # A second call sees what the first left behind (mutable defaults, counters).
        seen[f"again{i}"] = outcome_of(lambda: eval(expression, namespace))
    seen["evals_after"] = list(module.EVALS)
    return seen


def judge(case: Case) -> Optional[str]:
    """None when the outlined module behaves as the original (or regraft refused)."""
    output, failure = written(case)
    if output is None:
        return failure
    if output == case.source:
        return "changed nothing without refusing (expect: 1 should have failed)"
    try:
        original = load(case.source, "oracle_original")
    except Exception:
        return None  # the generator wrote a module that cannot run: not regraft's to judge
    try:
        outlined = load(output, "oracle_outlined")
    except Exception as error:
        return f"the outlined module fails at import: {type(error).__name__}: {error}\n{output}"
    before, after = _observe(original, case.facts), _observe(outlined, case.facts)
    differences = [f"{key}: {before[key]!r} != {after.get(key)!r}"
                   for key in before if before[key] != after.get(key)]
    if differences:
        return "\n".join(differences) + "\n--- original\n" + case.source[len(PRELUDE):] + \
            "\n--- outlined\n" + output[len(PRELUDE):]
    return None
