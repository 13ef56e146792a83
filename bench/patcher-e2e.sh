#!/usr/bin/env bash
# The patcher port (examples/patcher) at import time on real torch + transformers (not in CI:
# it installs torch, several GB): the rules take, and one training step of a tiny Llama
# matches the unpatched model's. The venv lives in $REGRAFT_E2E (default target/e2e).
#
#   bench/patcher-e2e.sh            # TRANSFORMERS=4.57.6 by default
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
exec "$venv/bin/python" examples/patcher/driver.py --train
