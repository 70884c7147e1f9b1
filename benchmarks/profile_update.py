"""Where the update's time goes: the `comlrl_job.py` job with its update (`MATrainer.backward`) under `torch.profiler`.

A profile, not a timing (the profiler's hooks slow every op): run it apart from the timed runs. Prints the job's JSON
line, then the update's operators by their own CPU time (the top `--top`), and the shares of the update's own CPU time
spent in matrix products (`aten::mm`, `addmm`, `bmm`, `_scaled_dot_product*`, the attention kernels included), in the
log-softmax / cross-entropy of the vocabulary, and in everything else (copies, elementwise, indexing, autograd's
bookkeeping). Every flag of `comlrl_job.py` passes through (`--team-update on|off`, `--lora`, `--num-agents`, ...).

    export COMLRL_MODEL_DIR=../shared/models COMLRL_DATA_DIR=../shared/data
    OMP_NUM_THREADS=1 python benchmarks/profile_update.py --model-dir $COMLRL_MODEL_DIR/smollm2-135m-instruct-gguf \
        --data $COMLRL_DATA_DIR/tldr/test.json --lora --prompts 2 --batch-size 2 --team-update off --out update_profile.json
"""
import argparse, functools, json, sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

MATMUL = ('aten::mm', 'aten::addmm', 'aten::bmm', 'aten::_scaled_dot_product', 'aten::_flash_attention')
VOCAB = ('aten::_log_softmax', 'aten::log_softmax', 'aten::nll_loss', 'aten::cross_entropy', 'aten::_log_softmax_backward')


def kind(name: str) -> str:
    "Which share an operator's own time goes to."
    return 'matmul' if name.startswith(MATMUL) else 'vocabulary log-softmax' if name.startswith(VOCAB) else 'other'


def main():
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument('--top', type=int, default=15)
    ap.add_argument('--out', default=None, help='also write the profile summary as JSON here')
    own, rest = ap.parse_known_args()
    import comlrl.trainer as T
    events = []
    backward = T.MATrainer.backward

    @functools.wraps(backward)
    def profiled(self, *args, **kwargs):
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            out = backward(self, *args, **kwargs)
        events.extend((e.key, e.self_cpu_time_total, e.count) for e in prof.key_averages())
        return out
    T.MATrainer.backward = profiled
    sys.argv = [sys.argv[0], *rest]
    import comlrl_job
    comlrl_job.main()
    ops = {}
    for key, us, n in events:
        t, c = ops.get(key, (0.0, 0))
        ops[key] = (t + us, c + n)
    total = sum(t for t, _ in ops.values())
    shares = {}
    for key, (t, _) in ops.items(): shares[kind(key)] = shares.get(kind(key), 0.0) + t / total
    top = sorted(ops.items(), key=lambda kv: -kv[1][0])[:own.top]
    print(f"\nthe update's own CPU time: {total / 1e6:.2f} s; shares: " + ', '.join(f'{k} {v:.1%}' for k, v in sorted(shares.items())))
    print(f"{'operator':45s} {'self s':>8s} {'share':>7s} {'calls':>7s}")
    for key, (t, c) in top: print(f"{key[:45]:45s} {t / 1e6:8.2f} {t / total:7.1%} {c:7d}")
    if own.out:
        Path(own.out).write_text(json.dumps({'args': rest, 'self_cpu_seconds': round(total / 1e6, 3), 'shares': {k: round(v, 4) for k, v in shares.items()},
                                             'top': [{'op': k, 'self_seconds': round(t / 1e6, 3), 'share': round(t / total, 4), 'calls': c} for k, (t, c) in top]}, indent=1) + '\n')


if __name__ == '__main__': main()
