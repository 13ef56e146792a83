#!/usr/bin/env bash
# Downloads releases of a package (PACKAGE, default transformers) from PyPI and unpacks their
# Python sources into a cache outside the repository:
# $REGRAFT_CORPUS (default target/corpus)/PACKAGE-VER/PACKAGE/. Releases already unpacked are
# skipped. Nothing from upstream is committed.
#
#   bench/fetch-transformers.sh 4.51.3 4.57.6 5.25.0
#   PACKAGE=trl bench/fetch-transformers.sh 0.19.1 0.23.1 0.25.1 1.16.0
set -euo pipefail
cd "$(dirname "$0")/.."
corpus="${REGRAFT_CORPUS:-target/corpus}"
mkdir -p "$corpus"
[ "$#" -gt 0 ] || { echo "usage: $0 VERSION..." >&2; exit 2; }
for version in "$@"; do
  package="${PACKAGE:-transformers}"
  dest="$corpus/$package-$version"
  if [ -f "$dest/.complete" ]; then
    echo "$package $version: already in $dest"
    continue
  fi
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp" "$package==$version"
  wheel="$(ls "$tmp"/*.whl)"
  rm -rf "$dest"
  mkdir -p "$dest"
  python3 - "$wheel" "$dest" "$package" <<'PY'
import sys, zipfile
wheel, dest, package = sys.argv[1], sys.argv[2], sys.argv[3]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith(package + "/") and n.endswith(".py")]
    for n in names:
        z.extract(n, dest)
print(f"{package}: {len(names)} Python files unpacked into {dest}")
PY
  touch "$dest/.complete"
  rm -rf "$tmp"
  trap - EXIT
done
