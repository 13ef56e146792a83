#!/usr/bin/env bash
# Prints how regraft's time and memory grow with the size of hostile inputs, to show they
# grow linearly (release build; figures in the README's Safety section):
#   bench/bounds.sh [BINARY]
# - N rules in one file, applied to a one-line file (5k, 10k, 20k, 40k);
# - one call with N keyword arguments, one removed (75k, 150k, 300k);
# - a 48 MB single-line file no rule matches.
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
echo "one 48 MB line: $(measure "$bin" apply -r "$tmp/k.yaml" --check "$tmp/line.py")"
