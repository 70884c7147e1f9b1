"""The benchmark job of `vs_comlrl.py`, run with comlrl: two agents on SmolLM2-135M-Instruct, MAGRPO, TL;DR prompts.

Prints one JSON line: training wall time (model loading excluded), seconds per prompt, peak resident memory, the
seconds spent generating (`comlrl.samplers.generate`) and in the update (`MATrainer.backward` and `optimizer_step`), and
the job's FLOPs counted by `flops.py` from the tokens the run actually produced (prompt and completion lengths, also
per generate call). `--num-agents` and `--num-turns` grow the job for `scaling.py`: agent i's reward asks for about
20·(i + 1) words (the two-agent job's 20 and 40), and a second turn shows each agent its post, its own first answer
and the team's reward and its word count as feedback (`feedback_transition`). Under a
launcher (`accelerate launch --multi_gpu --num_processes 2 benchmarks/comlrl_job.py ...`, see `dp_scaling.py`) the
processes share each step's --batch-size prompts and every process prints its own line. `--team-batch on|off` decodes
LoRA agents on one base in one batch for the whole team, or one call per agent (`HFSampler(team_batch=...)`,
`02b_samplers`; default: the sampler's own choice); a team call is recorded as one call, its prompts with their agents.
`--team-update on|off` updates such a team in one pass (every agent's micro-batch in one forward and backward,
`MATrainer.team_backward`, 04_trainer) or agent by agent (default: the loop's choice, one pass where it applies).

Time and memory are measured in separate runs. A timed run (the default) leaves the allocator alone and reports the peak
resident set as glibc keeps it (freed blocks it holds on to included, as `ref_comlrl_job.py` reports the reference's);
`--live-memory` is a memory run whose training peak follows live tensors (see the flag), and whose times are not timings.

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


def length_reward(*completions: list) -> list:
    "Cheap reward so that the reward is not what is measured: agent i about 20·(i + 1) words (0: 20, 1: 40, ...)."
    return [sum(-abs(len(c.split()) - 20 * (i + 1)) / (20 * (i + 1)) for i, c in enumerate(joint)) for joint in zip(*completions)]


def feedback_transition(item: dict, history: list) -> list:
    "The second turn's prompts: the post, the agent's own answer, then the team's reward and the answer's length as feedback."
    last = history[-1]
    return [f"{item['prompt']} {c.strip()}\n\nFEEDBACK: the team's reward was {last.reward:.2f}; this summary has "
            f"{len(c.split())} words, aim for about {20 * (i + 1)}.\n\nREVISED TL;DR:" for i, c in enumerate(last.completions)]


def record_generations(agents: list, calls: list):
    """Wrap `comlrl.samplers.generate` (what the trainer's default sampler calls, one agent or the whole team at a time) to
    append each call's token counts and seconds to `calls`: {'agent': i (one agent's call) or [agent of each prompt] (a team
    call), 'prompt': [P_b tokens], 'completion': [[n_bk tokens up to and including the first EOS] * K] per prompt,
    'seconds': wall time of the call, 'cpu_seconds': this process's CPU time in it}."""
    import comlrl.samplers as R  # the default sampler (HFSampler) calls its module's generate, team_generate too
    generate = R.generate

    def agent_of(model) -> int:
        return next(i for i, a in enumerate(agents) if a.model is model and (a.adapter is None or model.active_adapter == a.adapter))

    @functools.wraps(generate)
    def wrapper(model, *args, **kwargs):
        t, c = time.perf_counter(), time.process_time()
        g = generate(model, *args, **kwargs)
        secs, cpu = time.perf_counter() - t, time.process_time() - c
        K = g.num_generations  # rows are prompt-major: row b*K + k
        names = kwargs.get('adapter_names')
        who = agent_of(model) if names is None else [next(i for i, a in enumerate(agents) if a.adapter == n) for n in names]
        calls.append({'agent': who, 'prompt': g.prompt_mask.sum(-1)[::K].tolist(),
                      'completion': g.completion_mask.sum(-1).view(-1, K).tolist(), 'seconds': secs, 'cpu_seconds': cpu})
        return g
    R.generate = wrapper


def agent_share(call: dict, i: int) -> tuple[list, list]:
    "Agent i's prompt and completion lengths in one recorded call (all of them for its own call, its prompts' in a team call)."
    who = call['agent'] if isinstance(call['agent'], list) else [call['agent']] * len(call['prompt'])
    return [p for p, a in zip(call['prompt'], who) if a == i], [n for n, a in zip(call['completion'], who) if a == i]


def use_team_batch(trainer, team_batch: str):
    "Give `trainer` the sampler `HFSampler(team_batch=...)`: 'on', 'off', or 'auto' (keep `make_sampler`'s, the sampler's own default)."
    if team_batch == 'auto': return
    from comlrl.samplers import HFSampler
    trainer.sampler = HFSampler(team_batch=team_batch == 'on')  # what training_step's rollout decodes with


def time_update(seconds: dict):
    "Add the wall time of `MATrainer.backward` and `MATrainer.optimizer_step` (outermost calls only) to seconds['update'], the CPU time to seconds['update_cpu']."
    import comlrl.trainer as T
    depth = [0]
    for name in ('backward', 'optimizer_step'):
        f = getattr(T.MATrainer, name)
        def wrapper(self, *args, _f=f, **kwargs):
            depth[0] += 1
            t, c = time.perf_counter(), time.process_time()
            try: return _f(self, *args, **kwargs)
            finally:
                depth[0] -= 1
                if not depth[0]:
                    seconds['update'] = seconds.get('update', 0.0) + time.perf_counter() - t
                    seconds['update_cpu'] = seconds.get('update_cpu', 0.0) + time.process_time() - c
        setattr(T.MATrainer, name, functools.wraps(f)(wrapper))


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
    ap.add_argument('--num-agents', type=int, default=2, help='team size n')
    ap.add_argument('--num-turns', type=int, default=1, help='turns per episode (2: the second with feedback, see feedback_transition)')
    ap.add_argument('--team-batch', choices=('auto', 'on', 'off'), default='auto',
                    help='LoRA agents on one base: one decoding batch for the team (on), one call per agent (off), or the sampler default')
    ap.add_argument('--team-update', choices=('auto', 'on', 'off'), default='auto',
                    help="LoRA agents on one base: the update in one pass for the team (on), agent by agent (off), or the loop's choice (MAConfig.team_update)")
    ap.add_argument('--fsdp', default='', help="'full_shard': shard the team with FSDP2 over the processes (fsdp_memory.py)")
    ap.add_argument('--max-steps', type=int, default=-1, help='stop after this many steps (default: one epoch)')
    ap.add_argument('--live-memory', action='store_true',
                    help="a memory run: glibc returns freed blocks of 64 KiB and more, so train_peak_mib follows live tensors; "
                         "it slows the job, so its times are not timings ('timed': false)")
    ap.add_argument('--compile-decoding', action='store_true',
                    help='decode under torch.compile (static cache); compile time is reported apart and left out of seconds per prompt')
    args = ap.parse_args()
    torch.set_num_threads(1)
    from comlrl.presets import _glibc_return_large_frees, _proc_status
    # Time and memory are measured apart: the timed run leaves the allocator as it is (glibc's defaults, as for the
    # reference's job); --live-memory is a memory run, in which blocks of 64 KiB and more are mmap'd and returned when
    # freed, so that the training peak follows live tensors. That setting makes every large allocation an mmap and slowed
    # this job 1.45x (2026-12-07): a memory run's times are not timings, and its line says so ('timed': false).
    if args.live_memory: _glibc_return_large_frees()
    from comlrl.models import load_agents
    from comlrl.trainers.magrpo import MAGRPOConfig, MAGRPOTrainer

    t0 = time.perf_counter()
    world = int(os.environ.get('WORLD_SIZE', '1'))
    if args.batch_size % world: raise SystemExit(f"--batch-size {args.batch_size} does not split over {world} processes")
    agents = load_agents(args.model_dir, num_agents=args.num_agents, use_lora=args.lora, dtype='float32', device='cpu')
    load_s = time.perf_counter() - t0
    items = tldr_prompts(args.data, args.prompts)
    with tempfile.TemporaryDirectory() as out:
        cfg = MAGRPOConfig(output_dir=out, num_generations=args.num_generations, max_completion_length=args.max_new_tokens,
                           per_device_train_batch_size=args.batch_size // world, num_train_epochs=1, learning_rate=1e-5,
                           scale_rewards='none', loss_type='seq_sum', max_grad_norm=None, lr_scheduler_type='constant', weight_decay=0.01,
                           use_chat_template=False, seed=0, compile_decoding=True if args.compile_decoding else None, num_turns=args.num_turns,
                           micro_batch_size=args.num_generations, fsdp=args.fsdp, max_steps=args.max_steps,
                           team_update={'auto': None, 'on': True, 'off': False}[args.team_update])  # one prompt's K samples per forward/backward: bounded memory
        trainer = MAGRPOTrainer(agents=agents, reward_func=length_reward, train_dataset=items, args=cfg,
                                transition=feedback_transition if args.num_turns > 1 else None)
        calls, phases = [], {}
        record_generations(agents, calls)  # only the training run is recorded
        use_team_batch(trainer, args.team_batch)
        time_update(phases)
        t0, c0 = time.perf_counter(), time.process_time()
        with open('/proc/self/clear_refs', 'w') as f: f.write('5')  # the peak from here: the team as the trainer holds it (sharded or not)
        hist = trainer.train()
        train_peak = _proc_status('VmHWM:')
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    from torch._dynamo.utils import compilation_time_metrics
    compile_s = sum(compilation_time_metrics.get('_compile.compile_inner', []))  # dynamo + inductor, every (re)compilation
    tokens = sum(h['tokens_per_second'] * h['seconds_per_step'] for h in hist)
    shapes = Shapes.from_config(agents[0].model.config)
    shares = [[agent_share(c, i) for c in calls] for i in range(len(agents))]
    per_agent = [([p for ps, _ in sh for p in ps], [n for _, ns in sh for n in ns]) for sh in shares]
    rank = lora_rank(agents, shapes.layers)
    flops = job_flops(shapes, per_agent, rank)
    print(json.dumps({'library': 'comlrl (this repo)', 'timed': not args.live_memory, 'world_size': world, 'rank': int(os.environ.get('RANK', '0')), 'agents': 'LoRA, shared base' if args.lora else 'full fine-tuning',
                      'prompts': len(items), 'batch_size': args.batch_size, 'steps': len(hist), 'seconds': round(secs - compile_s, 2),
                      'seconds_per_prompt': round((secs - compile_s) / len(items), 3),
                      'seconds_per_step': [round(h['seconds_per_step'], 2) for h in hist], 'sharded': trainer.sharding is not None, 'compile_seconds': round(compile_s, 2), 'load_seconds': round(load_s, 2),
                      'tokens_generated': int(round(tokens)),
                      'flops': flops['total'], 'flops_generation': flops['generation'], 'flops_update': flops['update'], 'shapes': dataclasses.asdict(shapes), 'lora_rank': rank,
                      'prompt_tokens': [p for p, _ in per_agent], 'completion_tokens': [n for _, n in per_agent],
                      'team_batch': args.team_batch, 'team_update': args.team_update, 'one_pass_update': trainer._team_pass, 'team_calls': sum(isinstance(c['agent'], list) for c in calls),
                      'num_agents': len(agents), 'num_generations': args.num_generations, 'max_new_tokens': args.max_new_tokens, 'num_turns': args.num_turns,
                      'calls': [{k: c[k] for k in ('agent', 'prompt', 'completion')} for c in calls],
                      'phase_seconds': {'generation': round(sum(c['seconds'] for c in calls), 2), 'update': round(phases.get('update', 0.0), 2)},
                      # CPU time of this process (on a shared machine, less disturbed by the other processes than wall time)
                      'phase_cpu_seconds': {'generation': round(sum(c['cpu_seconds'] for c in calls), 2),
                                            'update': round(phases.get('update_cpu', 0.0), 2), 'total': round(cpu - compile_s, 2)},
                      'train_peak_mib': round(train_peak / 2**20, 1),
                      'peak_rss_mib': round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))


if __name__ == '__main__': main()
