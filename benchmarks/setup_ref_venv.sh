#!/usr/bin/env bash
# The reference library CoMLRL (comlrl==1.4.3) in its own venv, for benchmarks/vs_comlrl.py only: it is never a
# dependency of this package. One pip command, so its unpinned torch resolves to the same torch==2.13.0 as ours.
set -euo pipefail
cd "$(dirname "$0")"
python3 -m venv .venv-ref
.venv-ref/bin/pip install -q "torch==2.13.0" "comlrl==1.4.3" gguf accelerate
.venv-ref/bin/python -c "import comlrl, importlib.metadata as m; print('reference comlrl', m.version('comlrl'))"
