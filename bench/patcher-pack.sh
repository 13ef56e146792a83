#!/usr/bin/env bash
# What a patcher-shaped pack costs (bench/patcher-pack.py: N rules selecting by class and
# function name and by structure, statement runs, an outline, a template with an import) over
# a transformers `models/` tree, against one rule that parses every file (`$X = $Y($$$A)`) and
# the shipped pack, interleaved over ROUNDS rounds (CPU time: user + system, median):
#
#   bench/fetch-transformers.sh 4.57.6
#   bench/patcher-pack.sh [TREE] [N] [ROUNDS]   # TREE default target/corpus/transformers-4.57.6
#
# (bench/rule-pack.sh writes workload (d) of the comparison with ast-grep: another pack.)
set -euo pipefail
cd "$(dirname "$0")/.."
tree="${1:-target/corpus/transformers-4.57.6/transformers}"
n="${2:-120}"
rounds="${3:-3}"
bin="${REGRAFT_BIN:-target/release/regraft}"
[ -x "$bin" ] || cargo build --release --locked --bin regraft >&2
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
python3 bench/patcher-pack.py "$tree" "$tmp/pack.yaml" "$n"
printf 'id: parse-all\nmatch: "$X = $Y($$$A)"\nexpect: {min: 0}\n' > "$tmp/one.yaml"
version="$(basename "$(dirname "$tree")")"; version="${version#transformers-}"
cpu() {
  # `--check` exits 1 where rules would apply: the time is what counts.
  { /usr/bin/time -f "%U %S" "$bin" apply --check --no-config -r "$1" \
    --with "transformers=$version" "$tree/models" 2>&1 >/dev/null || true; } | tail -1 \
    | awk '{printf "%.2f\n", $1 + $2}'
}
declare -A runs
for _ in $(seq "$rounds"); do
  for w in one shipped pack; do
    case "$w" in
      one) rules="$tmp/one.yaml" ;;
      shipped) rules="rules" ;;
      pack) rules="$tmp/pack.yaml" ;;
    esac
    runs[$w]+="$(cpu "$rules") "
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
one="$(echo "${runs[one]}" | median)"
shipped="$(echo "${runs[shipped]}" | median)"
pack="$(echo "${runs[pack]}" | median)"
files="$(find "$tree/models" -name '*.py' | wc -l)"
echo "over $files files of $tree/models, CPU seconds (median of $rounds, interleaved):"
echo "  one parse-every-file rule:   $one"
echo "  shipped pack (rules/):       $shipped ($(awk -v a="$shipped" -v b="$one" 'BEGIN {printf "%.2f", a / b}')x)"
echo "  patcher pack ($n rules):    $pack ($(awk -v a="$pack" -v b="$one" 'BEGIN {printf "%.2f", a / b}')x)"
