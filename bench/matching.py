"""The matching oracle over a real release: every file of an unpacked transformers tree, with
patterns abstracted from that file itself (tests/python/oracles/matching.py draws them), each
pattern's match set from regraft (statement-local path and whole parse) against the reference
matcher's over CPython's ast. Prints the counts and the first disagreements.

    target/pyenv-3.13/bin/python bench/matching.py TREE [--patterns N] [--seed S] [--files N]

TREE is a release's package folder, e.g. one `pip download --no-deps transformers==4.57.6`
unpacked outside the repository. Needs CPython 3.12+ (the reference reads f-strings through
its tokenizer).
"""

import argparse
import json
import pathlib
import sys
import time
import warnings

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "python"))

from oracles import Case, Seeded  # noqa: E402
from oracles.matching import draw, misread_regions, regraft_matches  # noqa: E402
from oracles.reference import NotModeled, Tree, find, pattern_tree  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("tree", type=pathlib.Path)
    parser.add_argument("--patterns", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--files", type=int, default=0, help="at most this many files (0: all)")
    parser.add_argument("--show", type=int, default=5)
    options = parser.parse_args()
    warnings.simplefilter("ignore")
    from regraft import RegraftError, _native

    files = sorted(options.tree.rglob("*.py"))
    if options.files:
        files = files[:options.files]
    counts = dict(files=0, unread=0, patterns=0, refused=0, unmodeled=0, agreed=0, differed=0)
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
        for _ in range(options.patterns):
            try:
                pattern = draw(choose, tree)
                if pattern is None:
                    continue
                pattern_tree(pattern)
                want = {s for s in find(tree, pattern) if not misread(s)}
            except (SyntaxError, NotModeled, RecursionError):
                counts["unmodeled"] += 1
                continue
            rule = f"- id: p0\n  match: {json.dumps(pattern)}\n"
            try:
                _native.NativeRules.parse(rule, "yaml", "p.yaml")
            except RegraftError:
                counts["refused"] += 1
                continue
            counts["patterns"] += 1
            case = Case(source, rule, filename=str(path.relative_to(options.tree.parent)))
            wrong = []
            for whole in (False, True):
                got = {s for s in regraft_matches(case, whole).get("p0", set()) if not misread(s)}
                if got != want:
                    wrong.append((whole, sorted(want - got), sorted(got - want)))
            if wrong:
                counts["differed"] += 1
                if len(shown) < options.show:
                    shown.append((path, pattern, wrong, tree))
            else:
                counts["agreed"] += 1
    elapsed = time.perf_counter() - start
    print(f"{options.tree}: {counts['files']} files read ({counts['unread']} not), "
          f"{counts['patterns']} patterns compared, {counts['agreed']} agreed, "
          f"{counts['differed']} differed; {counts['refused']} refused by regraft's loader, "
          f"{counts['unmodeled']} beyond the reference; {elapsed:.0f} s")
    for path, pattern, wrong, tree in shown:
        print(f"--- {path}: {pattern!r}")
        for whole, only_ref, only_regraft in wrong:
            where = "whole parse" if whole else "statement-local"
            print(f"  {where}: only the reference {[tree.text(s)[:80] for s in only_ref][:3]}, "
                  f"only regraft {[tree.text(s)[:80] for s in only_regraft][:3]}")
    return 1 if counts["differed"] else 0


if __name__ == "__main__":
    sys.exit(main())
