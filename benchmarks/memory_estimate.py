"""Memory estimate vs measured peak: `comlrl.presets.estimate_memory` against `peak_memory` of real training runs.

Each job (SmolLM2-135M-Instruct, two agents, MAGRPO on TL;DR with the `cpu` preset's settings, 2 steps so that the
optimizer state exists) runs in a fresh process, once with full fine-tuning and once with LoRA agents, and the script
prints measured and estimated peak memory and their ratio. The 08_presets notebook runs a smaller job as a test (the
ratio must lie in [0.75, 1.25]); this script runs the `cpu` preset's own batch.

    OMP_NUM_THREADS=1 python benchmarks/memory_estimate.py [--batch-size 2] [--completion-length 64]
"""
import argparse, json, os, subprocess, sys


def measure(use_lora: bool, **config) -> dict:
    code = ("import json; from comlrl.presets import measure_training_memory as m; from comlrl.trainers.magrpo import MAGRPOTrainer; "
            f"print(json.dumps(m(MAGRPOTrainer, {use_lora!r}, **{config!r})))")
    p = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, env={**os.environ, 'OMP_NUM_THREADS': '1'})
    if p.returncode: raise SystemExit(f"the {'LoRA' if use_lora else 'full'} job failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--batch-size', type=int, default=2, help='prompts per step (per_device_train_batch_size)')
    ap.add_argument('--completion-length', type=int, default=64, help='max_completion_length')
    ap.add_argument('--num-generations', type=int, default=4)
    a = ap.parse_args()
    from comlrl.presets import PRESETS
    job = PRESETS['cpu'].config_kwargs(max_steps=2, per_device_train_batch_size=a.batch_size, num_generations=a.num_generations,
                                       max_completion_length=a.completion_length)
    job.pop('report_to')
    print(f"MAGRPO on TL;DR, SmolLM2-135M-Instruct × 2 agents, {a.batch_size} prompts × {a.num_generations} samples, "
          f"{a.completion_length} new tokens, 2 steps, fp32 on the CPU")
    print(f"{'team':5s} {'measured GiB':>12s} {'estimated GiB':>13s} {'ratio':>6s}  estimate's parts (GiB)")
    for lora in (False, True):
        r = measure(lora, env_kwargs=PRESETS['cpu'].env_kwargs('tldr'), **job)
        e = r['estimate']
        parts = ', '.join(f"{k} {v / 2**30:.2f}" for k, v in e.items() if k != 'total' and v)
        print(f"{'LoRA' if lora else 'full':5s} {r['measured'] / 2**30:12.2f} {e['total'] / 2**30:13.2f} "
              f"{e['total'] / r['measured']:6.2f}  {parts}; prompt length {r['prompt_length']}, {r['seconds']:.0f} s")


if __name__ == '__main__':
    main()
