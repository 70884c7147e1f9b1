"""comlrl's parts of the GPU check: every preset's path (`preset_part`) and comlrl's runs of the speed job (`speed_part`).

Both build the team from a randomly initialised model of the preset's real architecture (`common.random_model`) and
go through the public API a user calls: `preset_trainer` for the presets, `load_agents` and `MAGRPOTrainer` for the
speed job. Nothing here is GPU-only: the CPU dry run calls the same functions with tiny shapes.
"""
import functools, json, math, tempfile, time, warnings

import torch

from common import (Timer, build_tokenizer, decode_weight_bytes, length_reward, model_config, peak_memory_bytes, random_model,
                    speed_job, speed_record, sync, tldr_prompts, versions)

DTYPES = {'float16': torch.float16, 'bfloat16': torch.bfloat16, 'float32': torch.float32, None: torch.float32}


# ---- every preset's path -----------------------------------------------------------------------------------------

def preset_sizes(config: dict, dry_run: bool, quick: bool) -> dict:
    "The preset's config fields the check changes: two steps, no evaluation or checkpoints; tiny shapes in a dry run."
    o = dict(max_steps=2, logging_steps=1, eval_steps=None, save_steps=None, report_to='none')
    if dry_run: o.update(per_device_train_batch_size=2, num_generations=2, max_completion_length=8, micro_batch_size=2)
    elif quick: o.update(max_completion_length=min(128, config['max_completion_length']))
    return o


def skipped_steps(scales: list, init_scale: float = 2.0 ** 16) -> list[int]:
    "The steps (1-based) whose update the fp16 loss scaler skipped: those after which the logged scale fell."
    prev, out = init_scale, []
    for step, s in enumerate(scales, 1):
        if s < prev: out.append(step)
        prev = s
    return out


def first_divergence(a: torch.Tensor, b: torch.Tensor, mask_a: torch.Tensor, mask_b: torch.Tensor) -> list:
    "Per row, the first completion position where two decodings differ (tokens past each row's end count as padding), or None."
    pad = -1
    x, y = torch.where(mask_a.bool(), a, pad), torch.where(mask_b.bool(), b, pad)
    n = min(x.shape[1], y.shape[1])
    out = []
    for r in range(x.shape[0]):
        d = (x[r, :n] != y[r, :n]).nonzero()
        out.append(int(d[0]) if len(d) else (None if x.shape[1] == y.shape[1] else n))
    return out


def greedy_margins(model, gen, positions: list, autocast) -> list:
    """For each row that diverged at completion position t, the eager logits' gap between the two most likely tokens at
    t (a gap within rounding means the two decodings met a tie, not a bug)."""
    out = []
    for r, t in enumerate(positions):
        if t is None: out.append(None); continue
        ids = torch.cat([gen.prompt_ids[r], gen.completion_ids[r, :t]])[None].to(model.device)
        mask = torch.cat([gen.prompt_mask[r], torch.ones(t, dtype=gen.prompt_mask.dtype)])[None].to(model.device)
        with torch.no_grad(), autocast(): logits = model(input_ids=ids, attention_mask=mask).logits[0, -1].float()
        top = logits.topk(2).values
        out.append({'gap': float(top[0] - top[1]), 'top': float(top[0])})
    return out


def compare_decodings(trainer, prompts: list, compiled: bool) -> dict:
    """Greedy decoding of agent 0 on `prompts`, compiled (static cache, `torch.compile`) and eager: the rows that agree,
    and at each disagreement the eager logits' top-2 gap. `ok` when compiling worked (comlrl falls back to eager decoding
    with a warning when it fails: that is a failure here) and every row agrees or disagrees only at a tie (a gap of at
    most 8 rounding units of the autocast dtype times the top logit)."""
    from comlrl.generation import generate
    ag = trainer.agents[0]
    kw = trainer.generation_kwargs(greedy=True)
    run = lambda c: generate(ag.policy(), ag.tokenizer, prompts, 1, **{**kw, 'compile_decoding': c})
    with trainer.autocast(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        t = time.perf_counter(); g_c = run(compiled); secs_c = time.perf_counter() - t
        t = time.perf_counter(); g_e = run(False); secs_e = time.perf_counter() - t
    fallback = [str(w.message) for w in caught if 'compiled decoding failed' in str(w.message)]
    div = first_divergence(g_c.completion_ids, g_e.completion_ids, g_c.completion_mask, g_e.completion_mask)
    margins = greedy_margins(ag.policy(), g_e, div, trainer.autocast)
    eps = torch.finfo(trainer.amp_dtype or next(ag.model.parameters()).dtype).eps
    ties = [m is None or m['gap'] <= 8 * eps * max(1.0, abs(m['top'])) for m in margins]
    return {'compiled': compiled, 'compile_failed': fallback, 'rows': len(div), 'identical_rows': sum(d is None for d in div),
            'first_divergence': div, 'margins_at_divergence': margins, 'tokens_per_row': g_e.completion_ids.shape[1],
            'ok': all(ties) and not fallback,
            'seconds_compiled': round(secs_c, 2), 'seconds_eager': round(secs_e, 2)}


def preset_part(preset: str, algorithm: str, device: str, dry_run: bool = False, quick: bool = False) -> dict:
    """Two training steps of `algorithm` ('magrpo' or 'ippo') with preset `preset`'s team and config on TL;DR-shaped
    prompts, then the checks: losses finite, every agent's trainable weights changed, no update skipped by the fp16
    loss scaler beyond the first, compiled and eager greedy decoding agree, and the measured peak memory against
    `estimate_memory` (at the run's longest prompt) and `preset_memory` (at the preset's planned prompt length)."""
    from comlrl.envs.writing import TLDREnv
    from comlrl.presets import PRESETS, estimate_memory, preset_memory, preset_trainer
    from comlrl.trainers.ippo import IPPOTrainer
    from comlrl.trainers.magrpo import MAGRPOTrainer
    p = PRESETS[preset]
    cfg = model_config(p.models['writing'], dry_run)
    tok = build_tokenizer(cfg['vocab_size'])
    t0 = time.perf_counter()
    model = random_model(cfg, DTYPES[p.dtype], device)
    env = TLDREnv(**p.env_kwargs('tldr'))
    env.reward_func = length_reward  # TL;DR's gated reward gives a random model's samples 0 alike: no advantage, no update
    overrides = preset_sizes(p.config_kwargs(env), dry_run, quick)
    args0 = {**p.config_kwargs(env), **overrides}
    B = args0['per_device_train_batch_size']
    planned = p.prompt_length('tldr')
    lengths = [128 + 8 * i for i in range(2 * B)] if dry_run else [planned // 2 + (planned // 3) * i // (2 * B) for i in range(2 * B)]
    items = [{'prompt': t} for t in tldr_prompts(tok, 2 * B, lengths, seed=1)]
    trainer_cls = {'magrpo': MAGRPOTrainer, 'ippo': IPPOTrainer}[algorithm]
    with tempfile.TemporaryDirectory() as d:
        tr = preset_trainer(preset, trainer_cls, env, items, None, model=model, tokenizer=tok, output_dir=d, **overrides)
        load_s = time.perf_counter() - t0
        before = [[q.detach().to('cpu', torch.float32, copy=True) for q in ag.trainable_parameters()] for ag in tr.agents]
        sync(device); t = time.perf_counter()
        tr.train()
        sync(device); train_s = time.perf_counter() - t
        peak = peak_memory_bytes(device)
        recs = [json.loads(l) for l in open(f'{d}/metrics.jsonl')]
    a = tr.args
    changed = [max(float((q.detach().float().cpu() - b).abs().max()) for q, b in zip(ag.trainable_parameters(), bs))
               for ag, bs in zip(tr.agents, before)]
    losses = [r[k] for r in recs for k in r if k.startswith('loss/')]
    grad_norms = [r[k] for r in recs for k in r if k.startswith('grad_norm/')]
    scales = [r['loss_scale'] for r in recs if 'loss_scale' in r]
    skipped = skipped_steps(scales) if a.fp16 else []
    P = max(L.generations[0].prompt_ids.shape[1] for ro in tr.last_rollouts for L in ro.levels)
    est = estimate_memory(model.config, num_agents=len(tr.agents), use_lora=True, lora_r=p.lora_r, dtype=p.dtype,
                          amp_dtype=tr.amp_dtype, batch_size=B, num_generations=a.num_generations, prompt_length=P,
                          max_completion_length=a.max_completion_length, micro_batch_size=a.micro_batch_size,
                          gradient_checkpointing=a.gradient_checkpointing, beta=a.beta, device=device)
    plan = preset_memory(preset, 'tldr', config=model.config, device=device)
    decoding = compare_decodings(tr, [tr.formatters[0](it) for it in items[:B]], compiled=not dry_run)
    checks = {'losses_finite': {'ok': bool(losses) and all(map(math.isfinite, losses)), 'losses': losses},
              'grad_norms_finite': {'ok': bool(grad_norms) and all(map(math.isfinite, grad_norms)), 'grad_norms': grad_norms},
              'adapters_changed': {'ok': all(c > 0 for c in changed), 'max_abs_change': changed},
              'no_skipped_step_after_the_first': {'ok': all(s == 1 for s in skipped), 'skipped_steps': skipped, 'loss_scales': scales},
              'greedy_compiled_equals_eager': decoding}
    return {'preset': preset, 'algorithm': algorithm, 'model': p.models['writing'] if not dry_run else 'tiny Qwen2',
            'dtype': p.dtype, 'amp_dtype': str(tr.amp_dtype), 'fp16': a.fp16, 'bf16': a.bf16,
            'gradient_checkpointing': a.gradient_checkpointing, 'lora_r': p.lora_r, 'batch_size': B,
            'num_generations': a.num_generations, 'max_completion_length': a.max_completion_length,
            'micro_batch_size': a.micro_batch_size, 'prompt_length': P, 'planned_prompt_length': planned,
            'steps': len(recs), 'load_seconds': round(load_s, 2), 'train_seconds': round(train_s, 2),
            'peak_memory_bytes': peak, 'estimate_bytes': est['total'], 'estimate': est, 'planned_bytes': plan['total'],
            'memory_ratio': peak / est['total'], 'checks': checks, 'ok': all(c['ok'] for c in checks.values())}


# ---- the speed job ---------------------------------------------------------------------------------------------------

def speed_part(num_agents: int, lora: bool, compiled, device: str, dry_run: bool = False, quick: bool = False,
               team_batch=None, team_update=None) -> dict:
    """comlrl's run of the speed job: `num_agents` agents (LoRA r=32 on one base, or full copies) on a random
    Qwen2.5-1.5B in bfloat16, MAGRPO, bf16 autocast; `compiled` None is comlrl's default (compiled decoding on CUDA);
    `team_batch` None is the sampler's default (LoRA agents on one base decode in one batch on CUDA, `HFSampler`);
    `team_update` None is the loop's (LoRA agents on one base updated in one pass, `MATrainer.team_backward`).
    Times every step (generation, reward and the rest, the update) and asserts every sample has exactly C tokens."""
    import comlrl.samplers as R  # the default sampler (HFSampler) calls its module's generate, for one agent or the team
    from comlrl.models import default_lora_config, load_agents
    from comlrl.trainers.magrpo import MAGRPOConfig, MAGRPOTrainer
    job = speed_job(device, dry_run, quick)
    s, tok, model, t0 = job.sizes, job.tokenizer, job.model, job.started
    steps = s['warmup'] + s['timed']
    agents = load_agents(model, num_agents=num_agents, tokenizer=tok, use_lora=lora, device=device,
                         lora_config=default_lora_config(r=32, lora_alpha=64))
    items = [{'prompt': q} for q in tldr_prompts(tok, s['B'] * steps, s['P'])]
    timer, per_step, lengths, team_calls = Timer(device), [], [], []
    def reward(*completions):
        with timer('reward'): return length_reward(*completions)
    with tempfile.TemporaryDirectory() as d:
        args = MAGRPOConfig(output_dir=d, num_generations=s['K'], max_completion_length=s['C'], per_device_train_batch_size=s['B'],
                            max_steps=steps, learning_rate=1e-5, bf16=True, micro_batch_size=s['K'], gradient_checkpointing=False,
                            compile_decoding=compiled, use_chat_template=False, temperature=1.0, top_p=1.0, top_k=0,
                            shuffle_dataset=False, logging_steps=1, report_to='none', seed=0, team_update=team_update)
        tr = MAGRPOTrainer(agents=agents, reward_func=reward, train_dataset=items, args=args)
        load_s = time.perf_counter() - t0
        generate = R.generate
        @functools.wraps(generate)
        def timed_generate(*a, **k):
            with timer('generation'): g = generate(*a, **k)
            lengths.extend(g.completion_mask.sum(-1).tolist())
            team_calls.append(k.get('adapter_names') is not None)
            return g
        step = tr.training_step
        def timed_step(*a, **k):
            before = {n: sum(v) for n, v in timer.seconds.items()}
            with timer('step'): out = step(*a, **k)
            per_step.append({n: sum(v) - before.get(n, 0.0) for n, v in timer.seconds.items()})
            return out
        R.generate, tr.training_step = timed_generate, timed_step
        if team_batch is not None: tr.sampler = R.HFSampler(team_batch=team_batch)  # else make_sampler's, the default
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            try: tr.train()
            finally: R.generate = generate
    fallback = [str(w.message) for w in caught if 'compiled decoding failed' in str(w.message)]
    if set(lengths) != {s['C']}:
        raise AssertionError(f"the speed job needs exactly {s['C']} new tokens per sample; got lengths {sorted(set(lengths))}")
    team = any(team_calls)  # one generate call for the team: the base and every adapter read once per decoding step
    if team_batch is not None and team != team_batch: raise AssertionError(f"team_batch={team_batch} but team calls: {team_calls}")
    return speed_record('comlrl', num_agents, lora, s, per_step, peak_memory_bytes(device), load_s, lengths,
                        decode_weight_bytes(agents[0].model, 1 if team or not lora else num_agents),
                        team_batch=team, decode_calls=1 if team else num_agents, one_pass_update=tr._team_pass,
                        compiled=((torch.device(device).type == 'cuda') if compiled is None else compiled) and not fallback,
                        compile_failed=fallback,
                        versions=versions('transformers', 'peft', 'accelerate'))
