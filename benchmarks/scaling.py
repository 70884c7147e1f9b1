"""How comlrl's time and memory grow with the job: agents, samples, answer length and turns, against the matmul floor.

The job is `vs_comlrl.py`'s 8-prompt job (SmolLM2-135M-Instruct in fp32, MAGRPO, the first 8 TL;DR posts in one step of
8 prompts, one CPU thread), grown along one axis at a time from its base point (2 agents, K = 4 samples, at most 64 new
tokens, one turn):

- agents 1, 2, 3, 4 with LoRA agents on one base, and 1, 2 fully fine-tuned;
- K = 4, 8, 16 and at most 64, 128, 256 new tokens (LoRA);
- 1 and 2 turns (LoRA; the second turn shows each agent its own answer and the team's reward, `comlrl_job.feedback_transition`:
  each of the K joint actions of a prompt branches into its own node, so turn 2 has K times the nodes of turn 1);
- the reference CoMLRL 1.4.3 (full fine-tuning, one prompt per step, its only mode) at 1 and 2 agents and at 64 and
  128 tokens, on its first `--ref-prompts` posts.

A LoRA point may end in `-team` or `-peragent`: the same point with the team's decoding in one batch (`--team-batch on`,
`HFSampler(team_batch=True)`) or one call per agent (`--team-batch off`); without it, the sampler's default.
`--team-decoding` runs the agents axis (LoRA, 1 to 4 agents) both ways, side by side, point after point.
The committed comparison is a smaller run (2 posts, agents 1, 2, 4): its command is in results/team_decoding/README.md.
A LoRA point may then end in `-onepass` or `-byagent`: the update in one pass for the team (`--team-update on`,
`MATrainer.team_backward`) or agent by agent (`--team-update off`); `--team-update` runs 2 and 4 agents both ways,
and one agent once (there is no team to pass at once; `--team-update on` refuses it). The floor is the same for both (the update one prompt's K
samples of one agent at a time, as the job's `micro_batch_size` asks), so one pass, whose products are n times taller,
may beat it.

Each point runs `comlrl_job.py` (or `ref_comlrl_job.py` in the reference's venv) in its own process, and its JSON line
is kept in `--work` as `<point>.json` with the command, the run's wall time and the 1-minute load average before and
after it (the one after includes the point's own process, about 1). Before each point the script waits until the load
is below `--max-load` (the machine is shared; timings on a busy machine are not measurements). `--reuse` keeps the points
the work folder already holds, so parts run separately are gathered. Then every point's matmul floor (`flops.matmul_floor`:
its own matrix products at their shapes, each generate call's prompts decoded together, the update one prompt's K samples
at a time, attention at the peak rate, everything else free) is timed in this process, and the results are written:
`scaling.json` (every point with its floor), `scaling.md` (the table) and `scaling.png` (time and memory against each axis).

    export COMLRL_MODEL_DIR=../shared/models COMLRL_DATA_DIR=../shared/data
    OMP_NUM_THREADS=1 python benchmarks/scaling.py --out benchmarks/results/scaling              # the sweep, about 1 h
    OMP_NUM_THREADS=1 python benchmarks/scaling.py --points lora-n4-k4-c64-t1 --work /tmp/scaling --reuse   # one point
    OMP_NUM_THREADS=1 python benchmarks/scaling.py --short          # before a change to the hot path: two points, minutes
    OMP_NUM_THREADS=1 python benchmarks/scaling.py --team-decoding --out /tmp/team_decoding   # 8 points, about 25 min on a quiet machine (the sweep's times)
    OMP_NUM_THREADS=1 python benchmarks/scaling.py --team-update --out benchmarks/results/team_update   # 5 points, about 20 min

`--short` runs two small points (LoRA agents, 2 posts, 32 and 64 new tokens) and prints each one's fraction of the
floor; `--min-floor-fraction F` makes the script exit with status 1 when a point runs below F of its floor's speed. The
committed baseline is results/scaling_short (the timed job without any allocator setting): run
`scaling.py --short --min-floor-fraction 0.44` (0.9 of its lower point) before and after a change to the hot path.
A record of a memory run (`comlrl_job.py --live-memory`) is refused: its times are not timings.
"""
import argparse, json, os, subprocess, sys, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from flops import Shapes, matmul_floor, matmul_peak

BASE = dict(team='lora', agents=2, K=4, tokens=64, turns=1)
AXES = {'agents': 'agents', 'K': 'samples K', 'tokens': 'max new tokens', 'turns': 'turns'}
DECODINGS = {'team': 'on', 'peragent': 'off'}  # a LoRA point's optional suffix -> comlrl_job.py --team-batch
UPDATES = {'onepass': 'on', 'byagent': 'off'}  # a LoRA point's optional last suffix -> comlrl_job.py --team-update


def point_name(team: str, agents: int, K: int, tokens: int, turns: int, decoding: str = None, update: str = None) -> str:
    "A point's name: team ('lora', 'full' or 'ref'), agents n, samples K, max new tokens c, turns t, a LoRA team's decoding and update."
    return f'{team}-n{agents}-k{K}-c{tokens}-t{turns}' + (f'-{decoding}' if decoding else '') + (f'-{update}' if update else '')


def parse_point(name: str) -> dict:
    "The settings a point name stands for. Raises `ValueError` for a name `point_name` does not make."
    try:
        team, n, k, c, t, *rest = name.split('-')
        assert team in ('lora', 'full', 'ref') and n[0] == 'n' and k[0] == 'k' and c[0] == 'c' and t[0] == 't'
        decoding = rest.pop(0) if rest and rest[0] in DECODINGS else None
        update = rest.pop(0) if rest and rest[0] in UPDATES else None
        assert not rest and (team == 'lora' or not (decoding or update))
        return dict(team=team, agents=int(n[1:]), K=int(k[1:]), tokens=int(c[1:]), turns=int(t[1:]), decoding=decoding, update=update)
    except (ValueError, AssertionError):
        raise ValueError(f"point {name!r} is not of the form team-nN-kK-cC-tT, LoRA ones optionally ending in -team or -peragent "
                         f"(decoding), then -onepass or -byagent (update) (e.g. {point_name(**BASE)}, {point_name(**BASE, decoding='team')}, "
                         f"{point_name(**BASE, update='onepass')})") from None


def series(row: dict) -> str:
    "The line a point belongs to: its team, and its decoding and update when it names them."
    return row['team'] + ''.join(f"-{row[k]}" for k in ('decoding', 'update') if row.get(k))


def sweep() -> list[str]:
    "The full sweep's points, one axis at a time from the base point, the base point once."
    pts = []
    add = lambda **kw: pts.append(point_name(**{**BASE, **kw})) if point_name(**{**BASE, **kw}) not in pts else None
    for n in (1, 2, 3, 4): add(agents=n)
    for k in (8, 16): add(K=k)
    for c in (128, 256): add(tokens=c)
    add(turns=2)
    for n in (1, 2): add(team='full', agents=n)
    for n, c in ((1, 64), (2, 64), (2, 128)): add(team='ref', agents=n, tokens=c)
    return pts


def team_decoding_sweep() -> list[str]:
    "The agents axis (LoRA, 1 to 4 agents) with the team's decoding in one batch and agent by agent, alternating."
    return [point_name(**{**BASE, 'agents': n}, decoding=d) for n in (1, 2, 3, 4) for d in DECODINGS]


def team_update_sweep() -> list[str]:
    "The agents axis (LoRA): one agent (no team to pass at once), then 2 and 4 agents updated in one pass and agent by agent, alternating."
    return [point_name(**{**BASE, 'agents': 1})] + [point_name(**{**BASE, 'agents': n}, update=u) for n in (2, 4) for u in UPDATES]


def load1() -> float:
    "The 1-minute load average."
    return float(Path('/proc/loadavg').read_text().split()[0])


def wait_for_quiet(max_load: float, poll: float, limit: float) -> float:
    "Wait until the 1-minute load is below `max_load` (polling every `poll` s, at most `limit` s); return the load then."
    t_end = time.time() + limit
    while (l := load1()) >= max_load:
        if time.time() > t_end:
            raise SystemExit(f'the 1-minute load is still {l:.2f} >= {max_load} after {limit / 60:.0f} minutes: not a time to measure')
        print(f'   load {l:.2f} >= {max_load}: waiting {poll:.0f} s', file=sys.stderr, flush=True)
        time.sleep(poll)
    return l


def command(pt: dict, args) -> list:
    "The process that runs one point."
    common = ['--model-dir', args.model_dir, '--data', args.data, '--num-generations', str(pt['K']),
              '--max-new-tokens', str(pt['tokens'])]
    if pt['team'] == 'ref':
        if pt['turns'] != 1: raise SystemExit("reference points run one turn (its multi-turn job needs its own transition)")
        return [args.ref_python, str(HERE / 'ref_comlrl_job.py'), *common, '--prompts', str(args.ref_prompts),
                '--num-agents', str(pt['agents'])]
    return [sys.executable, str(HERE / 'comlrl_job.py'), *common, '--prompts', str(args.prompts), '--batch-size', str(args.prompts),
            '--num-agents', str(pt['agents']), '--num-turns', str(pt['turns'])] + (['--lora'] if pt['team'] == 'lora' else []) + \
           (['--team-batch', DECODINGS[pt['decoding']]] if pt.get('decoding') else []) + \
           (['--team-update', UPDATES[pt['update']]] if pt.get('update') else [])


def run_point(name: str, args) -> dict:
    "Run one point in its own process (after the machine is quiet) and return its record."
    pt = parse_point(name)
    cmd = command(pt, args)
    before = wait_for_quiet(args.max_load, args.poll, args.wait_minutes * 60)
    env = {**os.environ, 'OMP_NUM_THREADS': '1', 'MKL_NUM_THREADS': '1', 'HF_HUB_OFFLINE': '1', 'HF_DATASETS_OFFLINE': '1',
           'WANDB_MODE': 'disabled', 'TOKENIZERS_PARALLELISM': 'false'}
    print(f'-- {name} (load {before:.2f}): {" ".join(cmd)}', file=sys.stderr, flush=True)
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=HERE)
    lines = [l for l in p.stdout.splitlines() if l.startswith('{')]
    if p.returncode != 0 or not lines:
        sys.stderr.write(p.stdout[-3000:] + p.stderr[-3000:])
        raise SystemExit(f'{name} failed (exit code {p.returncode})')
    rec = {'point': name, **pt, 'command': cmd, 'wall_seconds': round(time.time() - t0, 1), 'load_before': before,
           'load_after': load1(), 'date': time.strftime('%Y-%m-%d %H:%M'), 'result': json.loads(lines[-1])}
    print(f'   {rec["result"]["seconds_per_prompt"]:.2f} s/prompt, {rec["result"]["peak_rss_mib"]:.0f} MiB, '
          f'load after {rec["load_after"]:.2f}', file=sys.stderr, flush=True)
    return rec


def per_call(r: dict) -> list:
    "The floor's work items: one (prompt lengths, completion lengths) pair per generate call (decoded together)."
    if 'calls' in r: return [(c['prompt'], c['completion']) for c in r['calls']]
    # the reference generates one prompt per call, agent by agent
    return [([p], [ns]) for P, N in zip(r['prompt_tokens'], r['completion_tokens']) for p, ns in zip(P, N)]


def summarise(rec: dict, peak: float, timings: dict) -> dict:
    "One point's row: seconds per prompt, FLOPs, its floor and the fraction of the floor's speed, memory, the time split."
    r = rec['result']
    if r.get('timed') is False: raise SystemExit(f"{rec['point']}: a memory run (--live-memory), whose times are not timings")
    floor = matmul_floor(Shapes(**r['shapes']), per_call(r), r['lora_rank'], None, peak, cache=timings)
    secs, prompts, cpu = r['seconds'], r['prompts'], r.get('phase_cpu_seconds')  # CPU time: comlrl_job.py since 2026-11-27
    if 'phase_seconds' in r: gen, upd = r['phase_seconds']['generation'], r['phase_seconds']['update']
    else: gen, upd = r['generate_seconds'], None  # the reference: the update and the rest are not told apart
    return {'point': rec['point'], 'team': rec['team'], 'decoding': rec.get('decoding'), 'team_calls': r.get('team_calls'),
            'update': rec.get('update'), 'one_pass_update': r.get('one_pass_update'),
            'update_seconds_per_prompt': None if upd is None else round(upd / prompts, 3),
            'update_cpu_seconds_per_prompt': cpu and round(cpu['update'] / prompts, 3),
            'floor_update_seconds_per_prompt': round(floor['update'] / prompts, 3) if 'update' in floor else None,
            'generation_seconds_per_prompt': round(gen / prompts, 3), 'agents': rec['agents'], 'K': rec['K'], 'tokens': rec['tokens'],
            'turns': rec['turns'], 'prompts': prompts, 'seconds_per_prompt': round(secs / prompts, 3),
            'tflop_per_prompt': round(r['flops'] / prompts / 1e12, 4), 'mfu': round(r['flops'] / secs / peak, 4),
            'floor_seconds_per_prompt': round(floor['total'] / prompts, 3),
            'floor_split_seconds': {k: round(v, 2) for k, v in floor.items()},
            'floor_fraction': round(floor['total'] / secs, 4), 'peak_rss_mib': r['peak_rss_mib'],
            'cpu_seconds_per_prompt': cpu and round(cpu['total'] / prompts, 3),
            'generation_cpu_seconds_per_prompt': cpu and round(cpu['generation'] / prompts, 3),
            'generation_share': round(gen / secs, 4), 'update_share': None if upd is None else round(upd / secs, 4),
            'other_share': None if upd is None else round(1 - (gen + upd) / secs, 4),
            'tokens_generated': r.get('tokens_generated'), 'load_before': rec['load_before'], 'load_after': rec['load_after'],
            'date': rec['date']}


def axis_of(row: dict) -> list[str]:
    "The axes a row lies on (the base point lies on all four)."
    return [ax for ax in AXES if all(row[k] == BASE[k] for k in AXES if k != ax)]


def flatness(rows: list) -> dict:
    "Per team (and decoding) and axis: the highest over the lowest fraction of the floor along the axis (1.0 = perfectly flat)."
    out = {}
    for ser in sorted({series(r) for r in rows if r['team'] != 'ref'}):
        for ax in AXES:
            fr = [r['floor_fraction'] for r in rows if series(r) == ser and ax in axis_of(r)]
            if len(fr) > 1: out[f'{ser}/{ax}'] = round(max(fr) / min(fr), 3)
    return out


def team_vs_each(rows: list) -> list:
    "Each point run both ways: seconds per prompt and generation seconds per prompt, one batch for the team over agent by agent."
    key = lambda r: (r['team'], r['agents'], r['K'], r['tokens'], r['turns'])
    each = {key(r): r for r in rows if r.get('decoding') == 'peragent'}
    return [{'agents': t['agents'], 'K': t['K'], 'tokens': t['tokens'], 'turns': t['turns'],
             'seconds_per_prompt': (t['seconds_per_prompt'], e['seconds_per_prompt']),
             'generation_seconds_per_prompt': (t['generation_seconds_per_prompt'], e['generation_seconds_per_prompt']),
             'step_ratio': round(t['seconds_per_prompt'] / e['seconds_per_prompt'], 3),
             'generation_ratio': round(t['generation_seconds_per_prompt'] / e['generation_seconds_per_prompt'], 3),
             'cpu_seconds_per_prompt': (t.get('cpu_seconds_per_prompt'), e.get('cpu_seconds_per_prompt')),
             'generation_cpu_seconds_per_prompt': (t.get('generation_cpu_seconds_per_prompt'), e.get('generation_cpu_seconds_per_prompt')),
             'load_before': (t['load_before'], e['load_before'])}
            for t in rows if t.get('decoding') == 'team' and (e := each.get(key(t)))]


def onepass_vs_byagent(rows: list) -> list:
    "Each point run both ways: the update in one pass for the team over agent by agent (seconds, CPU seconds, floor fraction, memory)."
    key = lambda r: (r['team'], r['agents'], r['K'], r['tokens'], r['turns'], r.get('decoding'))
    each = {key(r): r for r in rows if r.get('update') == 'byagent'}
    return [{'agents': t['agents'], 'K': t['K'], 'tokens': t['tokens'], 'turns': t['turns'], 'one_pass_applied': t['one_pass_update'],
             **{k: (t[k], e[k]) for k in ('seconds_per_prompt', 'update_seconds_per_prompt', 'cpu_seconds_per_prompt',
                                          'update_cpu_seconds_per_prompt', 'floor_fraction', 'peak_rss_mib', 'load_before')},
             'step_ratio': round(t['seconds_per_prompt'] / e['seconds_per_prompt'], 3),
             'update_ratio': round(t['update_seconds_per_prompt'] / e['update_seconds_per_prompt'], 3),
             'update_cpu_ratio': round(t['update_cpu_seconds_per_prompt'] / e['update_cpu_seconds_per_prompt'], 3)}
            for t in rows if t.get('update') == 'onepass' and (e := each.get(key(t)))]


def update_table(pairs: list) -> str:
    "The one-pass-against-agent-by-agent comparison as a markdown table."
    head = ('| agents | one pass applied | update s/prompt, one pass / by agent | ratio | update CPU s/prompt | ratio '
            '| step s/prompt | ratio | of floor | peak MiB | load before |\n|' + '---:|' * 11)
    two = lambda p, k, f='.2f': f"{p[k][0]:{f}} / {p[k][1]:{f}}"
    return '\n'.join([head] + [f"| {p['agents']} | {'yes' if p['one_pass_applied'] else 'no'} | {two(p, 'update_seconds_per_prompt')} "
                                f"| {p['update_ratio']:.3f} | {two(p, 'update_cpu_seconds_per_prompt')} | {p['update_cpu_ratio']:.3f} "
                                f"| {two(p, 'seconds_per_prompt')} | {p['step_ratio']:.3f} | {two(p, 'floor_fraction', '.0%')} "
                                f"| {two(p, 'peak_rss_mib', '.0f')} | {two(p, 'load_before')} |" for p in pairs])


def pair_table(pairs: list) -> str:
    "The team-against-each comparison as a markdown table: wall seconds, and this process's CPU seconds where recorded."
    cpu = all(None not in p['cpu_seconds_per_prompt'] for p in pairs)
    head = ('| agents | K | max tokens | generation s/prompt, team / each | ratio | step s/prompt, team / each | ratio |'
            + (' generation CPU s/prompt, team / each | ratio | step CPU s/prompt, team / each | ratio |' if cpu else '')
            + ' load before, team / each |\n|' + '---:|' * (12 if cpu else 8))
    def both(p, k): return f"{p[k][0]:.2f} / {p[k][1]:.2f} | {p[k][0] / p[k][1]:.3f}"
    return '\n'.join([head] + [f"| {p['agents']} | {p['K']} | {p['tokens']} | {both(p, 'generation_seconds_per_prompt')} | "
                                f"{both(p, 'seconds_per_prompt')} | "
                                + (f"{both(p, 'generation_cpu_seconds_per_prompt')} | {both(p, 'cpu_seconds_per_prompt')} | " if cpu else '')
                                + f"{p['load_before'][0]:.2f} / {p['load_before'][1]:.2f} |" for p in pairs])


def table(rows: list) -> str:
    "The results as a markdown table."
    head = ('| point | team | n | K | max tokens | turns | s/prompt | TFLOP/prompt | floor s/prompt | of floor | peak MiB '
            '| generation | update | other | load before / after |\n|' + '---|' * 2 + '---:|' * 13)
    fmt = lambda x: '–' if x is None else f'{x:.0%}'
    lines = [f"| {r['point']} | {r['team']} | {r['agents']} | {r['K']} | {r['tokens']} | {r['turns']} | {r['seconds_per_prompt']:.2f} "
             f"| {r['tflop_per_prompt']:.3f} | {r['floor_seconds_per_prompt']:.2f} | {r['floor_fraction']:.0%} | {r['peak_rss_mib']:.0f} "
             f"| {fmt(r['generation_share'])} | {fmt(r['update_share'])} | {fmt(r['other_share'])} "
             f"| {r['load_before']:.2f} / {r['load_after']:.2f} |" for r in rows]
    return '\n'.join([head] + lines)


def plot(rows: list, path: Path):
    "Seconds per prompt (measured and floor) and peak memory against each axis, LoRA, full fine-tuning and the reference."
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    axes = {ax: label for ax, label in AXES.items() if len({r[ax] for r in rows if ax in axis_of(r)}) > 1}  # axes the points span
    fig, axs = plt.subplots(2, len(axes), figsize=(4 * len(axes) + 1, 6.5), squeeze=False)
    style = {'lora': ('C0', 'comlrl, LoRA agents'), 'full': ('C1', 'comlrl, full fine-tuning'), 'ref': ('C3', 'CoMLRL 1.4.3'),
             'lora-team': ('C2', 'comlrl, LoRA agents, one batch for the team'), 'lora-peragent': ('C4', 'comlrl, LoRA agents, agent by agent'),
             'lora-onepass': ('C5', 'comlrl, LoRA agents, the update in one pass'), 'lora-byagent': ('C6', 'comlrl, LoRA agents, the update agent by agent')}
    for j, (ax, label) in enumerate(axes.items()):
        for team, (color, name) in style.items():
            pts = sorted((r for r in rows if series(r) == team and ax in axis_of(r)), key=lambda r: r[ax])
            if not pts: continue
            x = [r[ax] for r in pts]
            axs[0, j].plot(x, [r['seconds_per_prompt'] for r in pts], 'o-', color=color, label=name)
            axs[0, j].plot(x, [r['floor_seconds_per_prompt'] for r in pts], 'x:', color=color, label=f'{name}: matmul floor')
            axs[1, j].plot(x, [r['peak_rss_mib'] / 1024 for r in pts], 'o-', color=color, label=name)
        axs[0, j].set_title(f'along {label}')
        axs[1, j].set_xlabel(label)
        ticks = sorted({r[ax] for r in rows if ax in axis_of(r)})
        for i in (0, 1):
            axs[i, j].set_xscale('log', base=2)
            axs[i, j].set_xticks(ticks, labels=[str(t) for t in ticks])
            axs[i, j].xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
            axs[i, j].set_ylim(bottom=0)
    axs[0, 0].set_ylabel('seconds per prompt')
    axs[1, 0].set_ylabel('peak resident memory (GiB)')
    handles, labels = axs[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc='lower center', ncol=3, frameon=False)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    env = lambda v, sub: str(Path(os.environ[v]) / sub) if os.environ.get(v) else ''
    ap.add_argument('--model-dir', default=env('COMLRL_MODEL_DIR', 'smollm2-135m-instruct-gguf'))
    ap.add_argument('--data', default=env('COMLRL_DATA_DIR', 'tldr/test.json'))
    ap.add_argument('--ref-python', default=str(HERE / '.venv-ref' / 'bin' / 'python'), help='see setup_ref_venv.sh')
    ap.add_argument('--points', default=None, help='comma-separated point names (default: the whole sweep, see sweep())')
    ap.add_argument('--short', action='store_true', help='two small points (LoRA, 2 posts, 32 and 64 new tokens): a check before a change')
    ap.add_argument('--team-decoding', action='store_true', help='the agents axis (LoRA, 1-4 agents), decoding the team in one batch and agent by agent')
    ap.add_argument('--team-update', action='store_true', help='the agents axis (LoRA, 1, 2, 4 agents), the update in one pass for the team and agent by agent')
    ap.add_argument('--prompts', type=int, default=8, help="comlrl's posts, all in one step")
    ap.add_argument('--ref-prompts', type=int, default=2, help="the reference's posts (one step each)")
    ap.add_argument('--work', default='/tmp/scaling', help="where each point's JSON is kept")
    ap.add_argument('--reuse', action='store_true', help='keep the points the work folder already holds')
    ap.add_argument('--out', default=None, help='write scaling.json, scaling.md and scaling.png here (default: the work folder)')
    ap.add_argument('--max-load', type=float, default=1.2, help='start a point only when the 1-minute load is below this')
    ap.add_argument('--poll', type=float, default=60.0, help='seconds between load checks')
    ap.add_argument('--wait-minutes', type=float, default=120.0, help='give up when the machine stays busy this long')
    ap.add_argument('--peak-seconds', type=float, default=10.0, help='seconds of 2048×2048 matmuls to find the peak over')
    ap.add_argument('--min-floor-fraction', type=float, default=None, help='exit 1 when a point runs below this fraction of its floor')
    ap.add_argument('--no-run', action='store_true', help='only gather the points the work folder holds')
    args = ap.parse_args()
    if not Path(args.model_dir or '-').is_dir(): raise SystemExit('--model-dir: the SmolLM2-135M-Instruct GGUF folder is needed (or COMLRL_MODEL_DIR)')
    if not Path(args.data or '-').is_file(): raise SystemExit('--data: the TL;DR test.json file is needed (or COMLRL_DATA_DIR)')
    if args.short:
        args.prompts, args.work = 2, args.work if args.work != '/tmp/scaling' else '/tmp/scaling-short'
        names = [point_name(**{**BASE, 'tokens': c}) for c in (32, 64)]
    elif args.team_decoding: names = team_decoding_sweep()
    elif args.team_update: names = team_update_sweep()
    else: names = args.points.split(',') if args.points else sweep()
    for nm in names: parse_point(nm)  # every name checked before anything runs
    if any(parse_point(nm)['team'] == 'ref' for nm in names) and not Path(args.ref_python).exists():
        raise SystemExit(f'{args.ref_python} not found: run `bash benchmarks/setup_ref_venv.sh` first')
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    if not args.no_run:
        for nm in names:
            f = work / f'{nm}.json'
            if args.reuse and f.exists(): print(f'-- {nm}: kept from {f}', file=sys.stderr); continue
            f.write_text(json.dumps(run_point(nm, args)) + '\n')
    recs = [json.loads((work / f'{nm}.json').read_text()) for nm in names if (work / f'{nm}.json').exists()]
    if not recs: raise SystemExit(f'no points in {work}')
    load = wait_for_quiet(args.max_load, args.poll, args.wait_minutes * 60)
    peak = matmul_peak(args.peak_seconds)
    print(f'timing the matrix products of each point for its floor (load {load:.2f})...', file=sys.stderr, flush=True)
    timings = {}
    rows = [summarise(rec, peak, timings) for rec in recs]
    out = {'matmul_peak_flops': round(peak), 'floor_load_before': load, 'floor_load_after': load1(), 'date': time.strftime('%Y-%m-%d'),
           'prompts': args.prompts, 'ref_prompts': args.ref_prompts, 'points': rows, 'flatness': flatness(rows),
           'team_vs_each': team_vs_each(rows), 'onepass_vs_byagent': onepass_vs_byagent(rows)}
    md = table(rows) + (f"\n\nOne batch for the team against one call per agent:\n\n{pair_table(out['team_vs_each'])}" if out['team_vs_each'] else '')
    md += (f"\n\nThe update in one pass for the team against agent by agent:\n\n{update_table(out['onepass_vs_byagent'])}" if out['onepass_vs_byagent'] else '')
    print(f'single-thread fp32 matmul peak: {peak / 1e9:.1f} GFLOP/s; floors timed at load {load:.2f} -> {out["floor_load_after"]:.2f}\n')
    print(md)
    if out['flatness']: print('\nhighest / lowest fraction of the floor along each axis: ' + ', '.join(f'{k} {v:.3f}' for k, v in out['flatness'].items()))
    dest = Path(args.out) if args.out else work
    dest.mkdir(parents=True, exist_ok=True)
    (dest / 'scaling.json').write_text(json.dumps(out, indent=1) + '\n')
    (dest / 'scaling.md').write_text(md + '\n')
    if len(rows) > 2: plot(rows, dest / 'scaling.png')
    if args.min_floor_fraction is not None and (low := [r['point'] for r in rows if r['floor_fraction'] < args.min_floor_fraction]):
        print(f'\nbelow {args.min_floor_fraction:.0%} of the floor: {", ".join(low)}')
        sys.exit(1)


if __name__ == '__main__': main()
