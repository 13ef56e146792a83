#!/usr/bin/env bash
# The drift matrix of the shipped rules over real transformers releases, fetched first:
#   bench/matrix.sh [--format human|markdown|json] VERSION...
set -euo pipefail
cd "$(dirname "$0")/.."
format=human
if [ "${1:-}" = "--format" ]; then format="$2"; shift 2; fi
[ "$#" -gt 0 ] || set -- 4.46.3 4.50.3 4.51.3 4.56.2 4.57.6 5.25.0
bench/fetch-transformers.sh "$@" >&2
corpus="${REGRAFT_CORPUS:-target/corpus}"
targets=()
for v in "$@"; do targets+=(--target "transformers=$v:$corpus/transformers-$v/transformers"); done
cargo build --release --quiet
exec target/release/regraft matrix -r rules --format "$format" "${targets[@]}"
