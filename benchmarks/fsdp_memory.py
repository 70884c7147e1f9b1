"""Sharding the team (FSDP2): per-process peak memory and seconds per step, fully fine-tuning two SmolLM2-135M agents.

Runs the `comlrl_job.py` job (MAGRPO on TL;DR prompts, full fine-tuning, AdamW) three times with the same global batch:
one process; two processes, each holding the whole team (DDP); two processes with the team sharded by FSDP2
(`--fsdp full_shard`, 03b_distributed). On a machine without GPUs these are CPU processes joined by gloo, one thread
each. These are memory runs (`comlrl_job.py --live-memory`): memory is each process's peak resident set while training
(`VmHWM` reset when `train()` starts, with glibc returning freed blocks of 64 KiB and more, as
`comlrl.presets.peak_memory` measures it) and over the whole job (`ru_maxrss`, loading the GGUF weights and building the
unsharded team included). That allocator setting slows a job (1.45x on the 8-prompt LoRA job), so the seconds per step
printed here are those of memory runs, comparable with each other only, not timings; one process
sharded is not run, since with one process nothing is sharded (`sharding_plan` returns None).

    python benchmarks/fsdp_memory.py [--prompts 4] [--batch-size 2] [--max-new-tokens 16]
"""
import argparse, sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


from dp_scaling import _default, run  # the same launcher helpers: a job per process group, one JSON line per process


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--model-dir', default=_default('COMLRL_MODEL_DIR', 'smollm2-135m-instruct-gguf'))
    ap.add_argument('--data', default=_default('COMLRL_DATA_DIR', 'tldr/test.json'))
    ap.add_argument('--prompts', type=int, default=4)
    ap.add_argument('--batch-size', type=int, default=2, help='prompts per step, over all processes')
    ap.add_argument('--num-generations', type=int, default=2)
    ap.add_argument('--max-new-tokens', type=int, default=16)
    args = ap.parse_args()
    job = [str(HERE / 'comlrl_job.py'), '--model-dir', args.model_dir, '--data', args.data, '--prompts', str(args.prompts),
           '--batch-size', str(args.batch_size), '--num-generations', str(args.num_generations), '--max-new-tokens', str(args.max_new_tokens),
           '--live-memory']
    two = [sys.executable, '-m', 'accelerate.commands.launch', '--multi_gpu', '--num_processes', '2', '--num_machines', '1',
           '--mixed_precision', 'no', '--dynamo_backend', 'no']
    print(f"job: MAGRPO, 2 agents of SmolLM2-135M-Instruct fully fine-tuned (AdamW, fp32), {args.prompts} TL;DR prompts, "
          f"{args.batch_size} per step over all processes, {args.num_generations} samples of up to {args.max_new_tokens} tokens, "
          "one thread per process")
    print(f"{'run':30s} {'sharded':>7s} {'s/step':>7s}  per process, MiB: peak while training; peak of the whole job (s/step: of a memory run)")
    for label, cmd in (('1 process', [sys.executable, *job]), ('2 processes, whole team (DDP)', [*two, *job]),
                       ('2 processes, sharded (FSDP2)', [*two, *job, '--fsdp', 'full_shard'])):
        rs = sorted(run(cmd), key=lambda r: r['rank'])
        steps = [max(s) for s in zip(*(r['seconds_per_step'] for r in rs))]  # a step lasts as long as its slowest process
        train, whole = (', '.join(f"{r[k]:.0f}" for r in rs) for k in ('train_peak_mib', 'peak_rss_mib'))
        print(f"{label:30s} {str(rs[0]['sharded']):>7s} {sum(steps) / len(steps):7.2f}  {train}; {whole}", flush=True)


if __name__ == '__main__': main()
