#!/usr/bin/env bash
# Records what a regraft binary does on the real transformers models/ tree, so two builds can
# be compared byte for byte (a refactoring must change nothing):
#   bench/equivalence.sh OUT_DIR [BINARY]      # BINARY defaults to target/release/regraft
#   diff -r OUT_BEFORE OUT_AFTER
# For the shipped rules, the four bench/compare.sh workloads, a real-shaped pack
# (bench/real-pack.py) and the example packs it keeps `apply --diff`
# output, `apply --check --format json` output, stderr and exit codes. The tree is fetched by
# bench/fetch-transformers.sh into $REGRAFT_CORPUS (default target/corpus); nothing upstream
# is committed.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: $0 OUT_DIR [BINARY]}"
bin="${2:-target/release/regraft}"
version="${VERSION:-4.57.6}"
bench/fetch-transformers.sh "$version" >&2
tree="${REGRAFT_CORPUS:-target/corpus}/transformers-$version/transformers/models"
rm -rf "$out"; mkdir -p "$out/rules/c"

source bench/rules.sh
rule a "$out/rules" '$OUT = decoder_layer($$$ARGS)'
rule b "$out/rules" '$X = $Y($$$A)'
i=0
for p in "${C_PATTERNS[@]}"; do
  i=$((i+1)); rule "c$i" "$out/rules/c" "$p"
done
cp rules/*.yaml "$out/rules/c/"
bench/rule-pack.sh "$tree" "$out/rules/d"
# A pack shaped like a real patcher's port (bench/real-pack.py), and the example packs.
python3 bench/real-pack.py "$(dirname "$tree")" "$out/rules/real.yaml" 150 2>/dev/null

run() { # NAME RULES
  local name="$1" rules="$2"
  set +e
  "$bin" apply -r "$rules" --with "transformers=$version" --diff "$tree" > "$out/$name.diff" 2> "$out/$name.diff.stderr"
  echo "$?" > "$out/$name.diff.exit"
  "$bin" apply -r "$rules" --with "transformers=$version" --check --format json "$tree" > "$out/$name.json" 2> "$out/$name.json.stderr"
  echo "$?" > "$out/$name.json.exit"
  set -e
}
run shipped rules
run a "$out/rules/a.yaml"
run b "$out/rules/b.yaml"
run c "$out/rules/c"
run d "$out/rules/d"
run real "$out/rules/real.yaml"
run patcher examples/patcher/rules.yaml
run trl examples/trl/rules.yaml
rm -rf "$out/rules"
for f in "$out"/*.diff "$out"/*.json; do printf '%s %s\n' "$(wc -c < "$f")" "$f"; done
