#!/usr/bin/env bash
# The GPU check on a lent machine, from the repository's root, with .whl/ carried (made by fetch_wheels.sh here):
#   bash benchmarks/gpu/run.sh "$OUT" [check.py flags, e.g. --quick]
# Installs the wheels without touching the machine's own packages (into /tmp/site, and CoMLRL 1.4.3 apart into
# /tmp/ref-site), then runs check.py, whose results.json, results.md and check.log land in the folder given.
set -euo pipefail
out=${1:?usage: bash benchmarks/gpu/run.sh OUT_DIR [check.py flags]}; shift
install() { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$@"; }
install /tmp/site .whl/site/*.whl
install /tmp/ref-site .whl/ref/*.whl
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} COMLRL_REF_SITE=/tmp/ref-site
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
python3 benchmarks/gpu/check.py --out "$out" "$@"
