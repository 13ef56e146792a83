#!/usr/bin/env bash
# What a pack shaped like a real patcher's port costs (bench/real-pack.py: metavariable heads
# narrowed by `where` regexes, `self.$E($X)` with regexes on both captures, decorator
# deletions across most files, imports inside any function, statement runs, class scopes with
# `has`/`count`, and the example packs' rules), over a transformers `models/` tree:
#
#   bench/fetch-transformers.sh 4.57.6
#   bench/real-pack.sh [TREE] [N] [ROUNDS] [SEED]   # N rules (150), ROUNDS (3), SEED (1)
#
# Prints, as CPU time (user + system), median of ROUNDS interleaved rounds:
#   - the pack against one rule `$X = $Y($$$A)` and against a whole parse of every file (the
#     same pattern scoped to any function), target <= 1.5x;
#   - that one rule against ast-grep's `scan` of its twin (where target/bench-venv has
#     ast-grep, as bench/compare.sh installs it), target <= 0.30x;
#   - the ten most expensive rules, each run alone once, against the one rule.
set -euo pipefail
cd "$(dirname "$0")/.."
tree="${1:-${REGRAFT_CORPUS:-target/corpus}/transformers-4.57.6/transformers}"
n="${2:-150}"
rounds="${3:-3}"
seed="${4:-1}"
bin="${REGRAFT_BIN:-target/release/regraft}"
sg=target/bench-venv/bin/ast-grep
[ -x "$bin" ] || cargo build --release --locked --bin regraft >&2
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
python3 bench/real-pack.py "$tree" "$tmp/pack.yaml" "$n" "$seed"
printf 'id: parse-all\nmatch: "$X = $Y($$$A)"\nexpect: {min: 0}\n' > "$tmp/one.yaml"
# The same pattern scoped to any function: no statement locates it, so every file is parsed
# whole (what the one rule cost before check-only rules parsed only candidate statements).
printf 'id: parse-whole\ninside: {function: {regex: ".*"}}\nmatch: "$X = $Y($$$A)"\nexpect: {min: 0}\n' > "$tmp/whole.yaml"
printf 'id: parse-all\nlanguage: python\nseverity: info\nrule:\n  pattern: "$X = $Y($$$A)"\n' > "$tmp/one-sg.yml"
version="$(basename "$(dirname "$tree")")"; version="${version#transformers-}"
files="$(find "$tree/models" -name '*.py' | wc -l)"

python3 - "$bin" "$tree/models" "$version" "$tmp" "$rounds" "$sg" "$files" <<'PY'
import os, re, statistics, subprocess, sys
bin_, models, version, tmp, rounds, sg, files = sys.argv[1:]
rounds = int(rounds)

def cpu(cmd):
    r = subprocess.run(["/usr/bin/time", "-f", "%U %S"] + cmd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    user, system = r.stderr.strip().splitlines()[-1].split()
    return float(user) + float(system)

def check(rules):
    # `--check` exits 1 where rules would apply, 3 on drift: the time is what counts.
    return [bin_, "apply", "--check", "--no-config", "-r", rules, "--with",
            f"transformers={version}", models]

runs = {"one": [], "whole": [], "pack": [], "sg": []}
have_sg = os.access(sg, os.X_OK)
for _ in range(rounds):
    runs["one"].append(cpu(check(f"{tmp}/one.yaml")))
    runs["whole"].append(cpu(check(f"{tmp}/whole.yaml")))
    runs["pack"].append(cpu(check(f"{tmp}/pack.yaml")))
    if have_sg:
        runs["sg"].append(cpu([sg, "scan", "-r", f"{tmp}/one-sg.yml", models]))
one, pack = statistics.median(runs["one"]), statistics.median(runs["pack"])
whole = statistics.median(runs["whole"])
docs = open(f"{tmp}/pack.yaml", encoding="utf-8").read().split("\n---\n")
print(f"over {files} files of {models}, CPU seconds (median of {rounds}, interleaved):")
print(f"  one parse-every-file rule:  {one:.2f}")
print(f"  a whole parse of every file: {whole:.2f}")
print(f"  pack of {len(docs)} rules:         {pack:.2f} ({pack / one:.2f}x the one rule, "
      f"{pack / whole:.2f}x a whole parse; target <= 1.5x)")
if have_sg:
    theirs = statistics.median(runs["sg"])
    print(f"  ast-grep, the same rule:    {theirs:.2f} (regraft {one / theirs:.2f}x; target <= 0.30x)")
else:
    print("  ast-grep: not installed (bench/compare.sh installs it into target/bench-venv)")

# Each rule alone: `after:`/`group:` name other rules of the pack, so they are left out.
alone = []
for doc in docs:
    rid = re.search(r"^id: (\S+)", doc, re.M).group(1)
    doc = re.sub(r"^(after|group): .*\n", "", doc, flags=re.M)
    path = f"{tmp}/alone.yaml"
    open(path, "w", encoding="utf-8").write(doc)
    alone.append((cpu(check(path)), rid))
alone.sort(reverse=True)
print(f"  the ten most expensive rules alone (sum of all {len(alone)}: "
      f"{sum(c for c, _ in alone):.1f} s, {sum(c for c, _ in alone) / pack:.1f}x the pack):")
for c, rid in alone[:10]:
    print(f"    {rid:40} {c:6.2f} ({c / one:.2f}x)")
PY
