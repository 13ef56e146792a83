"""The rewrite oracle: ``replace: {of: $X, by: ...}`` and alternatives that carry their own
actions. Generated modules call ``CALL(x)`` and ``OTHER(y)`` with one argument of every
expression form (operators of each precedence, conditionals, lambdas, walrus, ``await``,
``yield``, generators, starred, strings and f-strings, a multi-line layout with a comment) in
every place a call stands (a statement, an assignment, another call's argument, an f-string
field, a default, a decorator, a lambda, a comprehension). The rule rewrites only the argument
``CALL`` binds, by a template that puts it next to an operator, an attribute, a subscript or a
call; with alternatives, ``OTHER`` is renamed by the second. CPython judges: the output's
``ast.dump`` must equal the input's AST with exactly that change made on the tree — so every
site is found, and the argument is parenthesized wherever the template's operators would
otherwise bind into it — or regraft refuses.
"""

from __future__ import annotations

import ast
import copy
from typing import List, Optional

from . import Case, Chooser, written

# The argument, by the kind of function it may stand in.
PLAIN = ["a", "a + b", "a if b else c", "lambda: a", "(y := a)", "not a", "a or b", "-a",
         "a ** b", "a.b", "a[0]", "'s'", "f'{a}'", "[a, b]", "a < b < c", "(a, b)",
         "x for x in b", "*a", "a @ b", "a and not b", "(a +\n        b)", "{a: b}", "~a",
         "a is not b", "lambda q=1: q", "b'x'", "a * -b"]
ASYNC = PLAIN + ["await a", "await a.b", "-(await a)"]
GENERATOR = PLAIN + ["(yield a)", "(yield)", "(yield from b)"]

# Each writes MARK outside the argument: the rule's `where` leaves a rewritten call alone, so
# the rule is its own fixed point.
BY = ["$X + MARK", "MARK - $X", "-$X + MARK", "$X.MARK", "MARK($X)", "$X if MARK else None",
      "MARK if $X else None", "not $X or MARK", "$X ** MARK", "MARK ** $X", "[$X, MARK]",
      "$X[MARK]", "$X * MARK", "$X, MARK", "($X, MARK)", "MARK @ $X", "lambda: $X + MARK",
      "f'{$X}{MARK}'", "($X)(MARK)", "MARK[$X]"]

# Where a call stands; {call} is the call's text.
PLACES = ["    {call}", "    r = {call}", "    g({call}, 2)", '    s = f"{{{call}}}"',
          "    k = lambda: {call}", "    v = [{call} for _ in c]", "    assert {call}",
          "    return {call}"]
# A lambda or a comprehension is a scope of its own: no `await` or `yield` of the function's.
OWN_SCOPE = ("    k = lambda", "    v = [")


def _call(choose: Chooser, name: str, pool: List[str]) -> str:
    argument = choose.pick(pool)
    if "\n" not in argument and "for" not in argument and choose.coin(0.25):
        comment = "  # note" if choose.coin(0.5) else ""
        return f"{name}(\n        {argument},{comment}\n    )"
    return f"{name}({argument})"


def _site(choose: Chooser, pool: List[str], alternatives: bool) -> str:
    name = "OTHER" if alternatives and choose.coin(0.3) else "CALL"
    call = _call(choose, name, pool)
    place = choose.pick(PLACES)
    if place.startswith(OWN_SCOPE) and ("await" in call or "yield" in call):
        place = "    r = {call}"
    if "\n" in call and place.startswith('    s = f"'):
        place = "    r = {call}"  # an f-string field holds no line break before 3.12
    if "'" in call and place.startswith('    s = f"') and "f'" in call:
        place = "    r = {call}"
    return place.format(call=call)


def case(choose: Chooser) -> Case:
    """A module of a plain, an async and a generator function calling CALL (and OTHER)."""
    alternatives = choose.coin(0.4)
    by = choose.pick(BY)
    lines = ["import os", "", "MARK = k = g = None", "", ""]
    for header, pool in (("def f(a, b, c):", PLAIN), ("async def fa(a, b, c):", ASYNC),
                         ("def fg(a, b, c):", GENERATOR)):
        lines.append(header)
        body = [_site(choose, pool, alternatives) for _ in range(choose.count(0, 3))]
        # A generator stays one whatever the sites say; every body ends in a statement.
        lines += body + (["    yield 0"] if header.startswith("def fg") else ["    pass"])
        lines += ["", ""]
    if choose.coin(0.3):
        argument = choose.pick([p for p in PLAIN if "\n" not in p])
        lines += [f"def h(p=CALL({argument})):", "    return p", "", ""]
    if choose.coin(0.3):
        lines += [f"@CALL({choose.pick(['a', 'a + b', 'a if b else c', 'lambda: a'])})",
                  "def h2():", "    pass", ""]
    source = "\n".join(lines) + "\n"
    by_yaml = '"' + by + '"'
    if alternatives:
        rule = ("id: rewrites-oracle\nmatch:\n  any:\n"
                f"  - match: CALL($X)\n    action:\n      replace: {{of: $X, by: {by_yaml}}}\n"
                "  - match: OTHER($X)\n    action: {replace: 'NEW($X)'}\n")
    else:
        rule = f"id: rewrites-oracle\nmatch: CALL($X)\naction:\n  replace: {{of: $X, by: {by_yaml}}}\n"
    rule += "where: {$X: {not_regex: MARK}}\nexpect: {min: 0}\n"
    return Case(source, rule, facts={"by": by, "alternatives": alternatives})


def _filled(by: str, argument: ast.expr) -> ast.expr:
    """The template's expression with the argument's tree where ``$X`` stands."""
    template = ast.parse(by.replace("$X", "__X__"), mode="eval").body

    class Put(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            return copy.deepcopy(argument) if node.id == "__X__" else node

    return Put().visit(template)


class _Edit(ast.NodeTransformer):
    """The intended change, made on the input's tree: CALL's one positional argument (a
    starred one too: ``[$X, MARK]`` of ``*a`` is ``[*a, MARK]``) rewritten by the template;
    OTHER renamed NEW where alternatives are on."""

    def __init__(self, by: str, alternatives: bool) -> None:
        self.by, self.alternatives = by, alternatives

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if not isinstance(node.func, ast.Name) or len(node.args) != 1 or node.keywords:
            return node
        if node.func.id == "CALL":
            node.args[0] = _filled(self.by, node.args[0])
        elif node.func.id == "OTHER" and self.alternatives:
            node.func.id = "NEW"
        return node


def judge(case: Case) -> Optional[str]:
    """None when the output's AST is the intended change of the input's, or regraft refused."""
    output, failure = written(case)
    if output is None:
        return failure
    expected = ast.dump(_Edit(case.facts["by"], case.facts["alternatives"]).visit(
        ast.parse(case.source)))
    if ast.dump(ast.parse(output)) != expected:
        return ("the output's AST is not the intended change\n--- input\n" + case.source +
                "\n--- output\n" + output)
    return None
