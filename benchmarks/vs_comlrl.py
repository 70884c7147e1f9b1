"""Speed and memory of comlrl against the reference library CoMLRL (`comlrl==1.4.3`), on the same job, in one run.

The job: 2 agents on SmolLM2-135M-Instruct (fp32, CPU, one thread), MAGRPO, the first 8 TL;DR posts of the local data,
`num_generations=4`, at most 64 new tokens, one turn. Each configuration runs in its own process (so peak memory is its
own) and prints one JSON line; this script prints them side by side with ratios against the reference run of the same
invocation. Model loading and, for the compiled-decoding run, compilation are timed separately and excluded from
seconds per prompt. Each run also reports the job's FLOPs, counted by `flops.py` from the model's config and the tokens
that run produced, and this script prints MFU = FLOPs / (seconds × the single-thread fp32 matmul peak measured at its
start), and each run's matmul floor (`flops.matmul_floor`): the seconds per prompt its matrix products alone take at
the rates this machine reaches on their shapes, everything else free, and its ratio to the reference's time: the best
ratio that run's products, at their shapes, allow here.

    bash benchmarks/setup_ref_venv.sh                     # once: the reference library in its own venv
    OMP_NUM_THREADS=1 python benchmarks/vs_comlrl.py      # COMLRL_MODEL_DIR / COMLRL_DATA_DIR point at the assets
"""
import argparse, json, os, subprocess, sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from flops import Shapes, matmul_floor, matmul_peak


def _default(env: str, sub: str) -> str:
    root = os.environ.get(env)
    return str(Path(root) / sub) if root else ''


def run(cmd: list, label: str) -> dict:
    "Run one benchmark process and return the JSON of its last output line."
    env = {**os.environ, 'OMP_NUM_THREADS': '1', 'MKL_NUM_THREADS': '1', 'HF_HUB_OFFLINE': '1',
           'WANDB_MODE': 'disabled', 'TOKENIZERS_PARALLELISM': 'false'}
    print(f'-- {label}: {" ".join(cmd)}', file=sys.stderr, flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    lines = [l for l in p.stdout.splitlines() if l.startswith('{')]
    if p.returncode != 0 or not lines:
        sys.stderr.write(p.stdout[-3000:] + p.stderr[-3000:])
        raise SystemExit(f'{label} failed (exit code {p.returncode})')
    return {'label': label, **json.loads(lines[-1])}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--model-dir', default=_default('COMLRL_MODEL_DIR', 'smollm2-135m-instruct-gguf'))
    ap.add_argument('--data', default=_default('COMLRL_DATA_DIR', 'tldr/test.json'))
    ap.add_argument('--ref-python', default=str(HERE / '.venv-ref' / 'bin' / 'python'),
                    help='python of the venv holding comlrl==1.4.3 (see setup_ref_venv.sh)')
    ap.add_argument('--prompts', type=int, default=8)
    ap.add_argument('--num-generations', type=int, default=4)
    ap.add_argument('--max-new-tokens', type=int, default=64)
    ap.add_argument('--peak-seconds', type=float, default=10.0, help='seconds of 2048×2048 matmuls to find the peak over')
    args = ap.parse_args()
    if not args.model_dir or not Path(args.model_dir).is_dir(): raise SystemExit('--model-dir: the SmolLM2-135M-Instruct GGUF folder is needed')
    if not args.data or not Path(args.data).is_file(): raise SystemExit('--data: the TL;DR test.json file is needed')
    if not Path(args.ref_python).exists(): raise SystemExit(f'{args.ref_python} not found: run `bash benchmarks/setup_ref_venv.sh` first')
    peak = matmul_peak(args.peak_seconds)  # FLOP/s, one thread, best of the repetitions
    print(f'single-thread fp32 matmul peak (2048×2048 torch.mm, best of {args.peak_seconds:g} s): {peak / 1e9:.1f} GFLOP/s', flush=True)
    common = ['--model-dir', args.model_dir, '--data', args.data, '--prompts', str(args.prompts),
              '--num-generations', str(args.num_generations), '--max-new-tokens', str(args.max_new_tokens)]
    ours = [sys.executable, str(HERE / 'comlrl_job.py')] + common
    runs = [run([args.ref_python, str(HERE / 'ref_comlrl_job.py')] + common, 'reference comlrl==1.4.3, full fine-tuning'),
            run(ours + ['--batch-size', '1'], 'comlrl, full fine-tuning, 1 prompt per step'),
            run(ours + ['--batch-size', str(args.prompts)], f'comlrl, full fine-tuning, {args.prompts} prompts per step'),
            run(ours + ['--batch-size', str(args.prompts), '--lora'], f'comlrl, LoRA agents, {args.prompts} prompts per step'),
            run(ours + ['--batch-size', str(args.prompts), '--lora', '--compile-decoding'], 'comlrl, LoRA agents, compiled decoding')]
    ref, timings = runs[0], {}
    print('timing the matrix products of each run for its matmul floor...', file=sys.stderr, flush=True)
    for r in runs:
        floor = matmul_floor(Shapes(**r['shapes']), list(zip(r['prompt_tokens'], r['completion_tokens'])), r['lora_rank'],
                             r.get('batch_size', 1) // r.get('world_size', 1), peak, cache=timings)  # the reference: 1 prompt
        r.update(matmul_peak_flops=round(peak), mfu=r['flops'] / r['seconds'] / peak,
                 floor_seconds={k: round(v, 2) for k, v in floor.items()})
    print(f"\n{'run':48s} {'s/prompt':>9s} {'ratio':>6s} {'peak MiB':>9s} {'ratio':>6s} {'tokens':>7s} {'load s':>7s} "
          f"{'TFLOP/prompt':>12s} {'MFU':>6s} {'compile s':>9s} {'floor s/prompt':>14s} {'ratio':>6s}")
    for r in runs:
        print(f"{r['label']:48s} {r['seconds_per_prompt']:9.2f} {r['seconds_per_prompt'] / ref['seconds_per_prompt']:6.2f} "
              f"{r['peak_rss_mib']:9.0f} {r['peak_rss_mib'] / ref['peak_rss_mib']:6.2f} {r.get('tokens_generated', 0):7d} "
              f"{r.get('load_seconds', 0):7.1f} {r['flops'] / r['prompts'] / 1e12:12.3f} {r['mfu']:6.1%} {r.get('compile_seconds', 0):9.1f} "
              f"{r['floor_seconds']['total'] / r['prompts']:14.2f} {r['floor_seconds']['total'] / r['prompts'] / ref['seconds_per_prompt']:6.3f}")
    print(json.dumps(runs))


if __name__ == '__main__': main()
