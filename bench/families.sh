#!/usr/bin/env bash
# The shipped rules in training steps across model families, and the import hook's start-up
# cost (not in CI: it installs torch, several GB, into $REGRAFT_E2E, default target/e2e).
#
#   bench/families.sh                 # TRANSFORMERS=4.57.6 by default
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${REGRAFT_E2E:-target/e2e}"
python="${PYTHON:-python3}"
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
"$venv/bin/python" -c "import torch" 2>/dev/null \
  || "${pip[@]}" torch --index-url https://download.pytorch.org/whl/cpu 2>/dev/null \
  || "${pip[@]}" torch
"${pip[@]}" "transformers==${TRANSFORMERS:-4.57.6}"
"${pip[@]}" --force-reinstall --no-deps .
"$venv/bin/python" bench/families.py
"$venv/bin/python" bench/startup.py 10
"$venv/bin/python" bench/startup.py 31
