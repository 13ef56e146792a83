"""The matching oracle over a real release: every file of an unpacked transformers tree, with
patterns abstracted from that file itself (tests/python/oracles/matching.py draws them), each
pattern's match set from regraft (statement-local path and whole parse) against the reference
matcher's over CPython's ast. Prints the counts and the first disagreements.

    target/pyenv-3.13/bin/python bench/matching.py TREE [--patterns N] [--seed S] [--files N]

Each rule is a drawn pattern, sometimes scoped (`inside` a class and function holding one of
its matches), guarded (`not_inside`, `unless`) or conditioned (`where` regex), as in the test
command's oracle.

TREE is a release's package folder, e.g. one `pip download --no-deps transformers==4.57.6`
unpacked outside the repository. Needs CPython 3.12+ (the reference reads f-strings through
its tokenizer).
"""

import argparse
import pathlib
import signal
import sys
import time
import warnings

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "python"))

from oracles import Case, Seeded  # noqa: E402
from oracles.matching import draw_rule, misread_regions, regraft_matches, rule_yaml  # noqa: E402
from oracles.reference import NotModeled, Tree, find_bound, find_rule, pattern_tree  # noqa: E402


class _Slow(Exception):
    pass


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("tree", type=pathlib.Path)
    parser.add_argument("--patterns", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--files", type=int, default=0, help="at most this many files (0: all)")
    parser.add_argument("--show", type=int, default=5)
    parser.add_argument("--limit", type=int, default=10,
                        help="seconds the reference may take on one rule before it is skipped")
    options = parser.parse_args()
    warnings.simplefilter("ignore")
    from regraft import RegraftError, _native

    def slow(*_):
        raise _Slow()

    signal.signal(signal.SIGALRM, slow)
    files = sorted(options.tree.rglob("*.py"))
    if options.files:
        files = files[:options.files]
    counts = dict(files=0, unread=0, rules=0, scoped=0, guarded=0, conditioned=0, refused=0,
                  unmodeled=0, slow=0, agreed=0, differed=0)
    shown = []
    start = time.perf_counter()
    for n, path in enumerate(files):
        try:
            source = path.read_text(encoding="utf-8")
            tree = Tree(source)
        except (SyntaxError, UnicodeDecodeError, NotModeled, ValueError):
            counts["unread"] += 1
            continue
        counts["files"] += 1
        choose = Seeded(options.seed * 1_000_003 + n)
        misread = misread_regions(tree)
        kept = lambda found: {m for m in found if not misread(m[:2])}  # noqa: E731
        for _ in range(options.patterns):
            try:
                signal.alarm(options.limit)
                rule = draw_rule(choose, tree)
                if rule is None:
                    continue
                for pattern in (rule.pattern, rule.not_inside, rule.unless):
                    if pattern is not None:
                        pattern_tree(pattern)
                guards = [g for g in (rule.not_inside, rule.unless) if g is not None]
                if any(misread(span) for g in guards for span, _ in find_bound(tree, g)):
                    raise NotModeled("a guard on code tree-sitter reads otherwise")
                want = kept((s, e, g) for (s, e), g in find_rule(tree, rule))
            except (SyntaxError, NotModeled, RecursionError):
                counts["unmodeled"] += 1
                continue
            except _Slow:
                # The reference's backtracking over `$$$X` in a huge display: skipped, counted.
                counts["slow"] += 1
                continue
            finally:
                signal.alarm(0)
            text = rule_yaml(0, rule)
            try:
                _native.NativeRules.parse(text, "yaml", "p.yaml")
            except RegraftError:
                counts["refused"] += 1
                continue
            counts["rules"] += 1
            counts["scoped"] += bool(rule.inside_class or rule.inside_function)
            counts["guarded"] += bool(rule.not_inside or rule.unless)
            counts["conditioned"] += bool(rule.regex or rule.not_regex)
            case = Case(source, text, filename=str(path.relative_to(options.tree.parent)))
            wrong = []
            for whole in (False, True):
                got = kept(regraft_matches(case, whole).get("p0", set()))
                if got != want:
                    wrong.append((whole, sorted(want - got), sorted(got - want)))
            if wrong:
                counts["differed"] += 1
                if len(shown) < options.show:
                    shown.append((path, text, wrong, tree))
            else:
                counts["agreed"] += 1
    elapsed = time.perf_counter() - start
    print(f"{options.tree}: {counts['files']} files read ({counts['unread']} not), "
          f"{counts['rules']} rules compared ({counts['scoped']} scoped, {counts['guarded']} "
          f"guarded, {counts['conditioned']} with a `where` regex), {counts['agreed']} agreed, "
          f"{counts['differed']} differed; {counts['refused']} refused by regraft's loader, "
          f"{counts['unmodeled']} beyond the reference, {counts['slow']} too slow for it; "
          f"{elapsed:.0f} s")
    for path, text, wrong, tree in shown:
        print(f"--- {path}:\n{text}")
        for whole, only_ref, only_regraft in wrong:
            where = "whole parse" if whole else "statement-local"
            print(f"  {where}: only the reference {[(tree.text(m[:2])[:80], m[2]) for m in only_ref][:3]}, "
                  f"only regraft {[(tree.text(m[:2])[:80], m[2]) for m in only_regraft][:3]}")
    return 1 if counts["differed"] else 0


if __name__ == "__main__":
    sys.exit(main())
