"""Data-parallel throughput: the `vs_comlrl.py` job (comlrl side) in 1 process × 1 thread and in 2 processes × 1 thread.

Runs `comlrl_job.py` once alone and once under `accelerate launch --multi_gpu --num_processes 2` (on a machine without
GPUs these are CPU processes joined by gloo), with the same global batch, and prints the throughput ratio (prompts per
second, 2 processes / 1) and each process's peak memory. Both runs happen in this one invocation, so the ratio compares
like with like.

    python benchmarks/dp_scaling.py [--lora] [--prompts 8] [--batch-size 8]
"""
import argparse, json, os, subprocess, sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _default(env: str, sub: str) -> str:
    root = os.environ.get(env) or str(HERE.parent.parent / 'shared' / ('models' if 'MODEL' in env else 'data'))
    return str(Path(root) / sub)


def run(cmd: list) -> list[dict]:
    "Run one job; return the JSON line of each process."
    env = {**os.environ, 'OMP_NUM_THREADS': '1', 'CUDA_VISIBLE_DEVICES': ''}
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0: raise SystemExit(f"{' '.join(cmd)} failed:\n{p.stderr[-3000:]}")
    return [json.loads(l) for l in p.stdout.splitlines() if l.startswith('{')]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--model-dir', default=_default('COMLRL_MODEL_DIR', 'smollm2-135m-instruct-gguf'))
    ap.add_argument('--data', default=_default('COMLRL_DATA_DIR', 'tldr/test.json'))
    ap.add_argument('--prompts', type=int, default=8)
    ap.add_argument('--batch-size', type=int, default=8, help='prompts per step, over all processes')
    ap.add_argument('--lora', action='store_true', help='LoRA agents (default: full fine-tuning)')
    args = ap.parse_args()
    job = [str(HERE / 'comlrl_job.py'), '--model-dir', args.model_dir, '--data', args.data, '--prompts', str(args.prompts),
           '--batch-size', str(args.batch_size)] + (['--lora'] if args.lora else [])
    one = run([sys.executable, *job])
    two = run([sys.executable, '-m', 'accelerate.commands.launch', '--multi_gpu', '--num_processes', '2', '--num_machines', '1',
               '--mixed_precision', 'no', '--dynamo_backend', 'no', *job])
    secs1, secs2 = one[0]['seconds'], max(r['seconds'] for r in two)
    print(f"job: {args.prompts} TL;DR prompts, {args.batch_size} per step, 2 agents ({one[0]['agents']}), SmolLM2-135M, one thread per process")
    print(f"1 process : {secs1:7.1f} s  ({args.prompts / secs1:.3f} prompts/s), peak memory {one[0]['peak_rss_mib']:.0f} MiB")
    mem = ', '.join(f"process {r['rank']} {r['peak_rss_mib']:.0f} MiB" for r in sorted(two, key=lambda r: r['rank']))
    print(f"2 processes: {secs2:7.1f} s  ({args.prompts / secs2:.3f} prompts/s), peak memory {mem}")
    print(f"throughput ratio, 2 processes / 1: {secs1 / secs2:.2f}x")


if __name__ == '__main__': main()
