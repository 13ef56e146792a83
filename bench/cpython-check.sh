#!/usr/bin/env bash
# Every file regraft writes must parse with CPython. For each transformers release given
# (default 4.57.6 5.25.0), runs the shipped rules and the bench/compare.sh workloads with
# `apply --write` on a scratch copy of the release's models/ tree, then has python3 parse
# every file that changed (ast.parse). Prints, per release and workload, the exit code, how
# many files changed and how many CPython rejects (which must be 0).
#   bench/cpython-check.sh [VERSION...]
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$#" -gt 0 ] || set -- 4.57.6 5.25.0
bench/fetch-transformers.sh "$@" >&2
cargo build --release --quiet
bin="$PWD/target/release/regraft"
corpus="${REGRAFT_CORPUS:-target/corpus}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
mkdir -p "$work/rules/c"
source bench/rules.sh
rule a "$work/rules" '$OUT = decoder_layer($$$ARGS)'
rule b "$work/rules" '$X = $Y($$$A)'
i=0
for p in '$OUT = decoder_layer($$$ARGS)' '$OUT = encoder_layer($$$ARGS)' '$OUT = self.self_attn($$$ARGS)' \
  '$OUT = self.mlp($$$ARGS)' '$X = self.dropout($$$A)' '$X = torch.matmul($$$A)' '$X = self.q_proj($$$A)' \
  '$X = eager_attention_forward($$$A)' '$X = self.loss_function($$$A)'; do
  i=$((i+1)); rule "c$i" "$work/rules/c" "$p"
done
printf '| release | workload | exit | files written | CPython rejects |\n| --- | --- | --- | --- | --- |\n'
for version in "$@"; do
  tree="$corpus/transformers-$version/transformers/models"
  for workload in shipped a b c; do
    case "$workload" in
      shipped) rules="$PWD/rules" ;;
      a|b) rules="$work/rules/$workload.yaml" ;;
      c) rules="$work/rules/c" ;;
    esac
    rm -rf "$work/tree"; cp -r "$tree" "$work/tree"
    set +e
    "$bin" apply -r "$rules" --with "transformers=$version" --write "$work/tree" > /dev/null 2> "$work/stderr"
    code=$?
    set -e
    python3 - "$tree" "$work/tree" "$version" "$workload" "$code" <<'PY'
import ast, os, sys
original, patched, version, workload, code = sys.argv[1:]
written = rejected = 0
for folder, _, files in os.walk(patched):
    for name in files:
        if not name.endswith(".py"):
            continue
        path = os.path.join(folder, name)
        before = os.path.join(original, os.path.relpath(path, patched))
        with open(path, encoding="utf-8") as f:
            text = f.read()
        with open(before, encoding="utf-8") as f:
            if f.read() == text:
                continue
        written += 1
        try:
            ast.parse(text, filename=path)
        except SyntaxError as e:
            rejected += 1
            print(f"REJECTED {path}: {e}", file=sys.stderr)
print(f"| {version} | {workload} | {code} | {written} | {rejected} |")
PY
  done
done
