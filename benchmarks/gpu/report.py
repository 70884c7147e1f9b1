"""The GPU check's report: the parts' raw results, the figures derived from them against the anchors measured in the
same run (`derive_speed`), and the markdown tables (`markdown`).

Speed figures, per run, over the timed steps (the warm-up step apart):
- seconds per step and per prompt, split into generation, reward and the update (the rest of the step);
- generated tokens per second, over the whole step and over the generation phase alone;
- the update's MFU: the FLOPs the update needs (`benchmarks/flops.py`, matrix products only) per second of update,
  over the bf16 matrix-product peak the machine part measured;
- decoding's share of the memory bandwidth: the bytes decoding must read (every weight once per decoding step of each
  generate call, plus the KV cache up to that step: a team decoded in one batch reads the base once per step, agent by
  agent once per agent) per second of generation, over the measured copy bandwidth.
"""
import dataclasses, sys
from pathlib import Path
from statistics import mean

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/: flops.py
from flops import Shapes, agent_flops  # noqa: E402

from common import SPEED_MODEL, model_config  # noqa: E402

GiB = 2 ** 30


def shapes(config: dict) -> Shapes:
    "flops.py's shapes of a model's config fields."
    h, heads = config['hidden_size'], config['num_attention_heads']
    return Shapes(layers=config['num_hidden_layers'], hidden=h, heads=heads, kv_heads=config.get('num_key_value_heads', heads),
                  head_dim=config.get('head_dim') or h // heads, intermediate=config['intermediate_size'], vocab=config['vocab_size'])


def decode_bytes(s: Shapes, rows: int, P: int, C: int, weight_bytes: int, dtype_bytes: int = 2) -> int:
    "Bytes one generate call must read: every weight at each of its C decoding steps, and each row's KV cache so far."
    kv_per_token = s.layers * 2 * s.kv_heads * s.head_dim * dtype_bytes
    return C * weight_bytes + rows * kv_per_token * (C * P + C * (C - 1) // 2)


def derive_speed(r: dict, machine: dict, dry_run: bool) -> dict:
    "The figures of one speed run (see the module's docstring); None where the machine part gave no anchor."
    timed = r['steps'][r['warmup_steps']:]
    if not timed: return {}
    s = shapes(model_config(SPEED_MODEL, dry_run))
    n, prompts, K, P, C = r['num_agents'], r['prompts_per_step'], r['K'], r['P'], r['C']
    step, gen, rew, upd = (mean(x[k] for x in timed) for k in ('step', 'generation', 'reward', 'update'))
    fl = agent_flops(s, [P] * prompts, [[C] * K] * prompts, r['lora_r'])
    tokens = n * prompts * K * C
    peak, bw = (machine or {}).get('bf16_tflops'), (machine or {}).get('copy_gbps')
    calls = r.get('decode_calls', n)  # generate calls per level: one per agent, or one for the team (its rows together)
    read = calls * decode_bytes(s, n * prompts * K // calls, P, C, r['decode_weight_bytes'])
    return {'seconds_per_step': step, 'seconds_per_prompt': step / prompts, 'generation_seconds': gen, 'reward_seconds': rew,
            'update_seconds': upd, 'warmup_seconds': r['steps'][0]['step'], 'tokens_per_second': tokens / step,
            'decode_tokens_per_second': tokens / gen if gen else None, 'update_tflop': n * fl['update'] / 1e12,
            'update_mfu': n * fl['update'] / upd / (peak * 1e12) if peak and upd > 0 else None,
            'decode_bandwidth_gbps': read / gen / 1e9 if gen else None,
            'decode_bandwidth_share': read / gen / (bw * 1e9) if bw and gen else None,
            'peak_memory_gib': r['peak_memory_bytes'] / GiB}


def build(meta: dict, parts: list, outcomes: dict) -> dict:
    "results.json: the run's description, each part's outcome and result, and the derived speed figures."
    dry = meta['mode'] == 'dry run'
    machine = getattr(outcomes.get('machine'), 'result', None)
    out = {'meta': meta, 'parts': {}}
    for p in parts:
        o = outcomes.get(p.name)
        d = {'label': p.label or p.name, 'group': p.group,
             **(dataclasses.asdict(o) if o else {'status': 'not run', 'seconds': 0.0, 'result': None, 'why': 'never reached'})}
        if p.group == 'speed' and d['result']: d['derived'] = derive_speed(d['result'], machine, dry)
        out['parts'][p.name] = d
    return out


def _f(x, fmt='{:.2f}'):
    return '–' if x is None else fmt.format(x)


def markdown(results: dict) -> str:
    "The report's tables: the machine, every preset's path with its checks, the speed runs with their ratios."
    m, parts = results['meta'], results['parts']
    lines = [f"# GPU check, {m['mode']}, {m['date']}", '', f"`{m['command']}`: {m['wall_seconds']} s of a {m['budget_seconds']:.0f} s budget.", '']
    mach = parts.get('machine', {}).get('result') or {}
    if mach:
        v = mach.get('versions', {})
        lines += ['## The machine', '', '| | |', '|---|---|',
                  f"| device | {mach.get('gpu') or 'CPU'} ({_f(mach.get('memory_gib'), '{:.1f}')} GiB), driver {mach.get('nvidia_smi', {}).get('driver_version', '–')} |",
                  f"| software | torch {mach.get('torch')} (CUDA {mach.get('cuda')}), transformers {v.get('transformers')}, peft {v.get('peft')}, "
                  f"accelerate {v.get('accelerate')}, trl {v.get('trl')}, Python {v.get('python')} |",
                  f"| bf16 / fp16 matmul ({mach.get('matmul_n')}³) | {_f(mach.get('bf16_tflops'), '{:.1f}')} / {_f(mach.get('fp16_tflops'), '{:.1f}')} TFLOP/s |",
                  f"| copy bandwidth (read + write) | {_f(mach.get('copy_gbps'), '{:.0f}')} GB/s |", '']
    rows = [(n, d) for n, d in parts.items() if d['group'] == 'preset']
    if rows:
        lines += ['## Every preset\'s path (two LoRA agents, two steps, TL;DR-shaped prompts)', '',
                  '| preset | status | dtype / autocast | B×K, tokens | losses finite | adapters changed | skipped steps | greedy: compiled = eager | peak GiB | estimate GiB | ratio | planned GiB | train s |',
                  '|---|---|---|---|---|---|---|---|---:|---:|---:|---:|---:|']
        for n, d in rows:
            r = d.get('result')
            if not r: lines.append(f"| {d['label']} | {d['status']} | | | | | | | | | | | |"); continue
            c = r['checks']; g = c['greedy_compiled_equals_eager']
            greedy = f"{g['identical_rows']}/{g['rows']} rows{'' if g['compiled'] else ' (both eager)'}{'' if g['ok'] else ' ✗'}"
            lines.append(f"| {d['label']} | {d['status']} | {r['dtype']} / {r['amp_dtype'].replace('torch.', '')} | "
                         f"{r['batch_size']}×{r['num_generations']}, {r['prompt_length']}+{r['max_completion_length']} | "
                         f"{'yes' if c['losses_finite']['ok'] else 'NO'} | {'yes' if c['adapters_changed']['ok'] else 'NO'} | "
                         f"{c['no_skipped_step_after_the_first']['skipped_steps'] or 'none'} | {greedy} | {r['peak_memory_bytes'] / GiB:.2f} | "
                         f"{r['estimate_bytes'] / GiB:.2f} | {r['memory_ratio']:.2f} | {r['planned_bytes'] / GiB:.2f} | {r['train_seconds']:.1f} |")
        lines.append('')
        if not m['device'].startswith('cuda'):
            lines += ["On the CPU the peak is the process's resident set (interpreter and libraries included): the ratio "
                      "means something only on a GPU.", '']
    rows = [(n, d) for n, d in parts.items() if d['group'] == 'speed']
    if rows:
        ref = {n: d.get('derived', {}).get('seconds_per_prompt') for n, d in rows}
        anchor = lambda d: ref.get('speed-comlrl143-2full') if (d.get('result') or {}).get('num_agents', 2) == 2 else ref.get('speed-trl-1lora')
        lines += ['## The speed job', '', 'Random Qwen2.5-1.5B, bfloat16, 8 prompts of 128 tokens × 8 samples per agent, exactly 256 new tokens each '
                  '(fewer in quick and dry runs); means over the timed steps. "× anchor": seconds per prompt over CoMLRL 1.4.3\'s '
                  '(two agents) or TRL\'s (one agent) in this run.', '',
                  '| run | status | decoding; update | s/prompt | × anchor | generation / reward / update s per step | warm-up s | tokens/s (step / decoding) | update MFU | decoding bandwidth share | peak GiB |',
                  '|---|---|---|---:|---:|---|---:|---|---:|---:|---:|']
        for n, d in rows:
            x = d.get('derived')
            if not x: lines.append(f"| {d['label']} | {d['status']} | | | | | | | | | |"); continue
            a, r = anchor(d), d['result']
            dec = ('compiled' if r.get('compiled') else 'eager') + (' (compiling failed)' if r.get('compile_failed') else '') + \
                  (', one batch for the team' if r.get('team_batch') else ', agent by agent' if r.get('decode_calls', 1) > 1 else '') + \
                  ('; update in one pass' if r.get('one_pass_update') else '; update agent by agent' if r.get('one_pass_update') is False and r.get('lora') and r.get('num_agents', 1) > 1 else '')
            lines.append(f"| {d['label']} | {d['status']} | {dec} | {x['seconds_per_prompt']:.3f} | {_f(x['seconds_per_prompt'] / a if a else None)} | "
                         f"{x['generation_seconds']:.2f} / {x['reward_seconds']:.3f} / {x['update_seconds']:.2f} | {x['warmup_seconds']:.1f} | "
                         f"{x['tokens_per_second']:.0f} / {_f(x['decode_tokens_per_second'], '{:.0f}')} | {_f(x['update_mfu'], '{:.1%}')} | "
                         f"{_f(x['decode_bandwidth_share'], '{:.1%}')} | {x['peak_memory_gib']:.2f} |")
        lines.append('')
    skipped = [(n, d) for n, d in parts.items() if d['status'] == 'skipped']
    if skipped: lines += ['## Skipped', ''] + [f"- **{n}**: {d.get('why')}" for n, d in skipped] + ['']
    bad = [(n, d) for n, d in parts.items() if d['status'] not in ('ok', 'skipped')]
    if bad:
        lines += ['## Not ok', '']
        for n, d in bad: lines += [f"- **{n}**: {d['status']}", '', '```', (d.get('why') or '').strip()[-2000:], '```', '']
    return '\n'.join(lines)
