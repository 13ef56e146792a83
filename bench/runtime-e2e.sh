#!/usr/bin/env bash
# The runtime layer on real torch + transformers (not in CI: it installs torch, several GB).
#
# Builds a tiny randomly initialised WhisperForConditionalGeneration on CPU with transformers
# $TRANSFORMERS (default 4.57.6), 2 encoder and 2 decoder layers, a trainable encoder; runs one
# training step with a reentrant gradient checkpoint (which forwards positional arguments only,
# as runtime patchers' checkpoints do): the stock model fails; after
# `regraft.patch(WhisperDecoder, rules)` every parameter's gradient equals the un-checkpointed
# run's. The venv lives in $REGRAFT_E2E (default target/e2e), outside the sources.
#
#   bench/runtime-e2e.sh
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${REGRAFT_E2E:-target/e2e}"
python="${PYTHON:-python3}"
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
# The CPU build of torch where its index is reachable, else PyPI's.
"${pip[@]}" torch --index-url https://download.pytorch.org/whl/cpu 2>/dev/null || "${pip[@]}" torch
"${pip[@]}" "transformers==${TRANSFORMERS:-4.57.6}"
"${pip[@]}" --force-reinstall --no-deps .
exec "$venv/bin/python" bench/runtime_e2e.py
