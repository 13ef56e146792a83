"""What changed between two `regraft matrix --format json` results: one line per cell (rule ×
release) whose status differs, appeared or went away, with a release column present in both;
nothing when the results agree. The drift workflow opens an issue when this prints anything.

    python .github/drift/changed.py BEFORE.json AFTER.json
"""

import json
import sys


def cells(rows: list) -> dict:
    """(rule, target) → status."""
    return {(r["rule"], r["target"]): r["status"] for r in rows}


def changes(before: list, after: list) -> list:
    """Lines naming each cell that differs: a rule whose result changed on a release both runs
    looked at, and every cell of a release the new run looked at first."""
    old, new = cells(before), cells(after)
    old_targets = {t for _, t in old}
    out = []
    for (rule, target), status in sorted(new.items()):
        was = old.get((rule, target))
        if was is None and target not in old_targets:
            out.append(f"{rule} on {target}: {status} (a release not looked at before)")
        elif was != status:
            out.append(f"{rule} on {target}: {was or 'absent'} → {status}")
    for (rule, target), status in sorted(old.items()):
        if (rule, target) not in new and any(t == target for _, t in new):
            out.append(f"{rule} on {target}: {status} → absent")
    return out


def main() -> int:
    with open(sys.argv[1]) as f:
        before = json.load(f)
    with open(sys.argv[2]) as f:
        after = json.load(f)
    for line in changes(before, after):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
