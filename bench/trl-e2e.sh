#!/usr/bin/env bash
# The TRL port (examples/trl) at import time on real torch + transformers + TRL (not in CI: it
# installs torch, several GB): the rules take, and one DPO step of a tiny Llama matches stock
# TRL's loss and gradients. The venv lives in $REGRAFT_E2E_TRL (default target/e2e-trl);
# REGRAFT_WHEEL installs a built wheel instead of building this checkout.
#
#   bench/trl-e2e.sh            # TRL=0.23.1 TRANSFORMERS=4.57.6 by default
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${REGRAFT_E2E_TRL:-target/e2e-trl}"
python="${PYTHON:-python3}"
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
"${pip[@]}" torch "transformers==${TRANSFORMERS:-4.57.6}" "trl==${TRL:-0.23.1}" datasets accelerate
"${pip[@]}" --force-reinstall --no-deps "${REGRAFT_WHEEL:-.}"
exec "$venv/bin/python" examples/trl/driver.py
