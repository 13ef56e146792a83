#!/usr/bin/env bash
# Downloads transformers releases from PyPI and unpacks their Python sources into a cache
# outside the repository: $REGRAFT_CORPUS (default target/corpus)/transformers-VER/transformers/.
# Releases already unpacked are skipped. Nothing from upstream is committed.
#
#   bench/fetch-transformers.sh 4.51.3 4.57.6 5.25.0
set -euo pipefail
cd "$(dirname "$0")/.."
corpus="${REGRAFT_CORPUS:-target/corpus}"
mkdir -p "$corpus"
[ "$#" -gt 0 ] || { echo "usage: $0 VERSION..." >&2; exit 2; }
for version in "$@"; do
  dest="$corpus/transformers-$version"
  if [ -f "$dest/.complete" ]; then
    echo "transformers $version: already in $dest"
    continue
  fi
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp" "transformers==$version"
  wheel="$(ls "$tmp"/transformers-*.whl)"
  rm -rf "$dest"
  mkdir -p "$dest"
  python3 - "$wheel" "$dest" <<'PY'
import sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith("transformers/") and n.endswith(".py")]
    for n in names:
        z.extract(n, dest)
print(f"transformers: {len(names)} Python files unpacked into {dest}")
PY
  touch "$dest/.complete"
  rm -rf "$tmp"
  trap - EXIT
done
