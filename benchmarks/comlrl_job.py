"""The benchmark job of `vs_comlrl.py`, run with comlrl: two agents on SmolLM2-135M-Instruct, MAGRPO, TL;DR prompts.

Prints one JSON line: training wall time (model loading excluded), seconds per prompt, peak resident memory, and the
job's FLOPs counted by `flops.py` from the tokens the run actually produced (prompt and completion lengths). Under a
launcher (`accelerate launch --multi_gpu --num_processes 2 benchmarks/comlrl_job.py ...`, see `dp_scaling.py`) the
processes share each step's --batch-size prompts and every process prints its own line.

    OMP_NUM_THREADS=1 python benchmarks/comlrl_job.py --model-dir ../shared/models/smollm2-135m-instruct-gguf \
        --data ../shared/data/tldr/test.json [--lora] [--batch-size 8]
"""
import argparse, dataclasses, functools, json, os, resource, tempfile, time

import torch

from flops import Shapes, job_flops


def tldr_prompts(path: str, n: int) -> list[dict]:
    "The first n TL;DR posts as prompts, in the trl-lib/tldr format."
    rows = [json.loads(l) for l in open(path) if l.strip()][:n]
    return [{'prompt': f"SUBREDDIT: r/{r['subreddit']}\n\nTITLE: {r['title']}\n\nPOST: {r['instruction']}\n\nTL;DR:"} for r in rows]


def length_reward(a: list, b: list) -> list:
    "Cheap reward so that the reward is not what is measured: agent 0 about 20 words, agent 1 about 40."
    return [-abs(len(x.split()) - 20) / 20 - abs(len(y.split()) - 40) / 40 for x, y in zip(a, b)]


def record_generations(agents: list, calls: list):
    """Wrap `comlrl.rollout.generate` (what the trainer calls) to append each call's token counts to `calls`:
    {'agent': i, 'prompt': [P_b tokens], 'completion': [[n_bk tokens up to and including the first EOS] * K] per prompt}."""
    import comlrl.rollout as R
    generate = R.generate

    def agent_of(model) -> int:
        return next(i for i, a in enumerate(agents) if a.model is model and (a.adapter is None or model.active_adapter == a.adapter))

    @functools.wraps(generate)
    def wrapper(model, *args, **kwargs):
        g = generate(model, *args, **kwargs)
        K = g.num_generations  # rows are prompt-major: row b*K + k
        calls.append({'agent': agent_of(model), 'prompt': g.prompt_mask.sum(-1)[::K].tolist(),
                      'completion': g.completion_mask.sum(-1).view(-1, K).tolist()})
        return g
    R.generate = wrapper


def lora_rank(agents: list, layers: int) -> int:
    "The agents' LoRA rank, 0 for full fine-tuning; checks that every linear map of every layer is adapted, as flops.py assumes."
    a = agents[0]
    if a.adapter is None: return 0
    adapted = sum(a.adapter in getattr(m, 'lora_A', {}) for m in a.model.modules())
    if adapted != 7 * layers: raise SystemExit(f"flops.py assumes LoRA on the 7 linear maps of each of {layers} layers; found {adapted}")
    return a.model.peft_config[a.adapter].r


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--model-dir', required=True)
    ap.add_argument('--data', required=True)
    ap.add_argument('--prompts', type=int, default=8)
    ap.add_argument('--num-generations', type=int, default=4)
    ap.add_argument('--max-new-tokens', type=int, default=64)
    ap.add_argument('--batch-size', type=int, default=8, help='prompts per rollout (the reference always uses 1)')
    ap.add_argument('--lora', action='store_true', help='LoRA agents on one shared base (default: full fine-tuning)')
    ap.add_argument('--compile-decoding', action='store_true',
                    help='decode under torch.compile (static cache); compile time is reported apart and left out of seconds per prompt')
    args = ap.parse_args()
    torch.set_num_threads(1)
    from comlrl.models import load_agents
    from comlrl.trainers.magrpo import MAGRPOConfig, MAGRPOTrainer

    t0 = time.perf_counter()
    world = int(os.environ.get('WORLD_SIZE', '1'))
    if args.batch_size % world: raise SystemExit(f"--batch-size {args.batch_size} does not split over {world} processes")
    agents = load_agents(args.model_dir, num_agents=2, use_lora=args.lora, dtype='float32', device='cpu')
    load_s = time.perf_counter() - t0
    items = tldr_prompts(args.data, args.prompts)
    with tempfile.TemporaryDirectory() as out:
        cfg = MAGRPOConfig(output_dir=out, num_generations=args.num_generations, max_completion_length=args.max_new_tokens,
                           per_device_train_batch_size=args.batch_size // world, num_train_epochs=1, learning_rate=1e-5,
                           scale_rewards='none', loss_type='seq_sum', max_grad_norm=None, lr_scheduler_type='constant', weight_decay=0.01,
                           use_chat_template=False, seed=0, compile_decoding=True if args.compile_decoding else None,
                           micro_batch_size=args.num_generations)  # one prompt's K samples per forward/backward: bounded memory
        trainer = MAGRPOTrainer(agents=agents, reward_func=length_reward, train_dataset=items, args=cfg)
        calls = []
        record_generations(agents, calls)  # only the training run is recorded
        t0 = time.perf_counter()
        hist = trainer.train()
        secs = time.perf_counter() - t0
    from torch._dynamo.utils import compilation_time_metrics
    compile_s = sum(compilation_time_metrics.get('_compile.compile_inner', []))  # dynamo + inductor, every (re)compilation
    tokens = sum(h['tokens_per_second'] * h['seconds_per_step'] for h in hist)
    shapes = Shapes.from_config(agents[0].model.config)
    per_agent = [([p for c in calls if c['agent'] == i for p in c['prompt']], [n for c in calls if c['agent'] == i for n in c['completion']])
                 for i in range(len(agents))]
    rank = lora_rank(agents, shapes.layers)
    flops = job_flops(shapes, per_agent, rank)
    print(json.dumps({'library': 'comlrl (this repo)', 'world_size': world, 'rank': int(os.environ.get('RANK', '0')), 'agents': 'LoRA, shared base' if args.lora else 'full fine-tuning',
                      'prompts': len(items), 'batch_size': args.batch_size, 'steps': len(hist), 'seconds': round(secs - compile_s, 2),
                      'seconds_per_prompt': round((secs - compile_s) / len(items), 3), 'compile_seconds': round(compile_s, 2), 'load_seconds': round(load_s, 2),
                      'tokens_generated': int(round(tokens)),
                      'flops': flops['total'], 'flops_generation': flops['generation'], 'flops_update': flops['update'], 'shapes': dataclasses.asdict(shapes), 'lora_rank': rank,
                      'prompt_tokens': [p for p, _ in per_agent], 'completion_tokens': [n for _, n in per_agent],
                      'peak_rss_mib': round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))


if __name__ == '__main__': main()
