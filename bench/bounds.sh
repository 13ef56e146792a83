#!/usr/bin/env bash
# Prints how regraft's time and memory grow with the size of hostile inputs, to show they
# grow linearly (release build; figures in docs/src/concepts/safety.md):
#   bench/bounds.sh [BINARY]
# - N rules in one file, applied to a one-line file (5k, 10k, 20k, 40k);
# - one call with N keyword arguments, one removed (75k, 150k, 300k);
# - a 48 MB single-line file no rule matches;
# - an `after:` chain of 60 and 300 rules over a 250 KB module;
# - one statement with 50k and 100k matches.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/release/regraft}"
[ -x "$bin" ] || cargo build --release --locked --bin regraft >&2
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
measure() { /usr/bin/time -f "%e s %M KB" "$@" 2>&1 >/dev/null | tail -1; }
echo 'f1(2)' > "$tmp/one.py"
for n in 5000 10000 20000 40000; do
  python3 - "$tmp/rules$n.yaml" "$n" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(int(sys.argv[2])):
        f.write(f'---\nid: r{i}\nmatch: "f{i}($X)"\naction: {{replace: "g{i}($X)"}}\nexpect: {{min: 0}}\n')
PY
  echo "rules $n: $(measure "$bin" apply -r "$tmp/rules$n.yaml" "$tmp/one.py")"
done
printf 'id: r\nmatch: "f($$$A)"\naction: {remove_kwargs: [a1]}\n' > "$tmp/k.yaml"
for n in 75000 150000 300000; do
  python3 -c "import sys; open(sys.argv[1],'w').write('x = f(' + ', '.join('a%d=%d' % (i, i) for i in range($n)) + ')\n')" "$tmp/s.py"
  echo "keywords $n ($(wc -c < "$tmp/s.py") bytes): $(measure "$bin" apply -r "$tmp/k.yaml" --check "$tmp/s.py" || true)"
done
python3 -c "import sys; open(sys.argv[1],'w').write('x = [' + ', '.join(['1'] * 16_000_000) + ']\n')" "$tmp/line.py"
echo "one 48 MB line (cap raised): $(measure "$bin" apply -r "$tmp/k.yaml" --check --max-file-size 67108864 "$tmp/line.py")"
# An `after:` chain: rule i+1 matches what rule i wrote, on a 250 KB module where every
# function calls f0 (2,000 sites): one step per rule, each linear in the module.
python3 - "$tmp" <<'PY'
import sys
tmp = sys.argv[1]
for n in (60, 300):
    with open(f"{tmp}/chain{n}.yaml", "w") as f:
        for i in range(n):
            f.write(f'---\nid: r{i}\nmatch: "f{i}($X)"\naction: {{replace: "f{i+1}($X)"}}\nexpect: {{min: 0}}\n')
            if i:
                f.write(f"after: [r{i-1}]\n")
with open(f"{tmp}/mod.py", "w") as f:
    f.write("".join(f"def fn{i}(a):\n    return f0(a) + h{i}(a)\n\n" for i in range(7_700)))
PY
for n in 60 300; do
  echo "after-chain of $n rules, 250 KB module: $(measure "$bin" apply -r "$tmp/chain$n.yaml" --check "$tmp/mod.py" || true)"
done
# One statement holding many matches: a dict literal of N entries, each value a call replaced.
printf 'id: r\nmatch: "f($X)"\naction: {replace: "g($X)"}\nexpect: {min: 0}\n' > "$tmp/r.yaml"
for n in 50000 100000; do
  python3 -c "import sys; n=int(sys.argv[2]); open(sys.argv[1],'w').write('x = {' + ', '.join(f'\"k{i}\": f({i})' for i in range(n)) + '}\n')" "$tmp/d.py" "$n"
  echo "one statement, $n matches ($(wc -c < "$tmp/d.py") bytes): $(measure "$bin" apply -r "$tmp/r.yaml" --check "$tmp/d.py" || true)"
done
