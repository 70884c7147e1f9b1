"""Variants of the code main job side by side (issue 40): does the main agent call its teammate's helper, and does the pair
pass more tests than one agent trained alone?

Each variant is a folder of kept runs (`code_main_job.py --keep DIR`, or a `comlrl train --num_seeds` output folder):
DIR/seed-<s>/{metrics.jsonl, eval_completions.jsonl, run.json}, and optionally DIR/solo/seed-<s>/ (one agent trained
alone with the same samples and steps). For every seed, from the held-out evaluation after training (greedy, the run's
eval split), this prints and writes:

- `aux called`: the share of held-out problems whose main function calls `aux`; `aux used`: calls it and uses its value
  (read from the main function's syntax tree, as the cooperation level does: `comlrl.envs.codegen.aux_usage`);
- `tests`: the share of the held-out tests passed (`eval/reward/pass_rate`), `pass@1`, and the held-out reward
  (under the variant's own reward weights: rewards of variants with other weights are not comparable);
- `solo tests`: the same share for the solo agent of that seed, where the variant has one (else the main job's, when
  --solo_from names a folder that has one).

    export COMLRL_MODEL_DIR=../shared/models COMLRL_DATA_DIR=../shared/data
    python benchmarks/code_variants.py main=benchmarks/results/coophumaneval_main gate_syntax=benchmarks/results/coophumaneval_gate_syntax \\
        --solo_from benchmarks/results/coophumaneval_main --out benchmarks/results/code_variants
"""
import argparse, json, statistics, sys
from pathlib import Path

from comlrl.core import make_env
from comlrl.envs.code import parse_code
from comlrl.envs.codegen import aux_usage


def seed_dirs(d: Path) -> list:
    "The runs d/seed-<s> that finished (they have run.json), in seed order."
    return sorted((p for p in d.glob('seed-*') if (p / 'run.json').is_file()), key=lambda p: int(p.name.split('-')[1]))


def final_eval(run: Path) -> dict:
    "The last held-out evaluation logged by the run."
    rows = [json.loads(l) for l in (run / 'metrics.jsonl').read_text().splitlines() if l.strip()]
    evals = [r for r in rows if 'eval/reward' in r]
    if not evals: raise SystemExit(f"{run}/metrics.jsonl has no held-out evaluation (eval/reward)")
    return evals[-1]


_items = {}
def eval_items(run: Path) -> list:
    "The run's held-out problems (its env and eval split from run.json), loaded once per (env, split)."
    info = json.loads((run / 'run.json').read_text())
    key = (info['env'], info['eval_split'])
    if key not in _items: _items[key] = list(make_env(info['env']).load_dataset(info['eval_split']))
    return _items[key]


def aux_shares(run: Path) -> tuple:
    "(called, used): shares of the held-out problems whose main function (agent 2's answer after training) calls `aux`, and uses its value."
    rows = [json.loads(l) for l in (run / 'eval_completions.jsonl').read_text().splitlines() if l.strip()]
    last = max(r['step'] for r in rows)
    rows = [r for r in rows if r['step'] == last and r.get('turn', 0) == 0]
    items = eval_items(run)
    fns = [parse_code(r['completions'][-1]).function(items[r['item']]['entry_point']) for r in rows]
    usage = [aux_usage(fn) for fn in fns if fn is not None]  # no main function: it calls nothing
    return sum(u.called for u in usage) / len(rows), sum(u.used for u in usage) / len(rows)


def variant_rows(name: str, d: Path, solo_from: Path = None) -> list:
    "One row per seed of the variant in folder d."
    runs = seed_dirs(d)
    if not runs: raise SystemExit(f"{d} holds no finished runs (seed-<s>/run.json)")
    solo = {p.name: p for p in seed_dirs(d / 'solo') or (seed_dirs(solo_from / 'solo') if solo_from else [])}
    out = []
    for run in runs:
        ev, (called, used) = final_eval(run), aux_shares(run)
        row = {'variant': name, 'seed': int(run.name.split('-')[1]), 'aux_called': called, 'aux_used': used,
               'tests': ev['eval/reward/pass_rate'], 'pass@1': ev['eval/pass@1'], 'reward': ev['eval/reward'],
               'cooperation': ev['eval/reward/cooperation'], 'minutes': json.loads((run / 'run.json').read_text()).get('seconds', 0) / 60}
        if run.name in solo: row['solo_tests'] = final_eval(solo[run.name])['eval/reward/pass_rate']
        out.append(row)
    return out


def table(rows: list) -> str:
    cols = ['variant', 'seed', 'aux_called', 'aux_used', 'tests', 'solo_tests', 'pass@1', 'reward', 'cooperation', 'minutes']
    fmt = lambda v: f'{v:.3f}' if isinstance(v, float) else '—' if v is None else str(v)
    lines = ['| ' + ' | '.join(cols) + ' |', '|' + '---|' * len(cols)]
    lines += ['| ' + ' | '.join(fmt(r.get(c)) for c in cols) + ' |' for r in rows]
    by = {}
    for r in rows: by.setdefault(r['variant'], []).append(r)
    lines += ['', '| variant | seeds | aux used (mean, min) | tests (mean) | seeds above solo |', '|---|---:|---:|---:|---:|']
    for v, rs in by.items():
        above = [r['tests'] > r['solo_tests'] for r in rs if 'solo_tests' in r]
        lines.append(f"| {v} | {len(rs)} | {statistics.mean(r['aux_used'] for r in rs):.3f}, {min(r['aux_used'] for r in rs):.3f} | "
                     f"{statistics.mean(r['tests'] for r in rs):.3f} | {sum(above)} of {len(above)} |")
    return '\n'.join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('variants', nargs='+', help='NAME=DIR, one per variant')
    p.add_argument('--solo_from', default=None, help='a folder whose solo/seed-<s> runs stand for variants that have none')
    p.add_argument('--out', default=None, help='write variants.json and variants.md here')
    a = p.parse_args()
    rows = []
    for v in a.variants:
        name, eq, d = v.partition('=')
        if not eq: sys.exit(f"variants are NAME=DIR, got {v!r}")
        rows += variant_rows(name, Path(d), Path(a.solo_from) if a.solo_from else None)
    md = table(rows)
    print(md)
    if a.out:
        out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
        (out / 'variants.json').write_text(json.dumps(rows, indent=1) + '\n')
        (out / 'variants.md').write_text(f"# python benchmarks/code_variants.py {' '.join(sys.argv[1:])}\n\n{md}\n")


if __name__ == '__main__':
    main()
