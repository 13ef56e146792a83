"""Runs every oracle of tests/python/oracles on thousands of seeded cases and prints, per
oracle, how many kept meaning, how many regraft refused and how many failed (with the first
failures shown in full).

    target/pyenv-3.13/bin/python bench/oracles.py [--cases N] [--seed S] [--show K] [NAME ...]
"""

import argparse
import collections
import pathlib
import sys
import time
import warnings

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "python"))

from oracles import Seeded  # noqa: E402
import oracles  # noqa: E402,F401

NAMES = ["derive", "matching", "names", "outline", "rewrites", "statements", "validity"]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--show", type=int, default=2)
    parser.add_argument("names", nargs="*", default=NAMES)
    options = parser.parse_args()
    warnings.simplefilter("ignore")
    failed_total = 0
    for name in options.names:
        oracle = __import__(f"oracles.{name}", fromlist=["case"])
        counts = collections.Counter()
        shown = 0
        start = time.perf_counter()
        for i in range(options.cases):
            case = oracle.case(Seeded(options.seed * 1_000_003 + i))
            failure = oracle.judge(case)
            if failure is None:
                counts["refused" if case.refusal else "kept"] += 1
                continue
            counts["failed"] += 1
            if shown < options.show:
                shown += 1
                print(f"--- {name} case {i} (seed {options.seed}) failed\n{case.rule}{failure}\n")
        took = time.perf_counter() - start
        failed_total += counts["failed"]
        print(f"{name}: {options.cases} cases, seed {options.seed}: {counts['kept']} kept "
              f"meaning, {counts['refused']} refused, {counts['failed']} failed ({took:.1f} s)")
    return 1 if failed_total else 0


if __name__ == "__main__":
    sys.exit(main())
