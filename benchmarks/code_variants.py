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
  --solo_from names a folder that has one);
- `aux used before`: `aux used` of the same team before training (the run's first evaluation, step 0), which shows
  what a variant's prompts do on their own;
- where DIR/cooperation.json exists (`benchmarks/cooperation.py --parts trained,untrained`), `31_cooperation`'s
  measurements of the trained team: the helper's and the main agent's counterfactual drops (answer emptied), the team
  against its better member alone, and the drop when the roles are swapped.

    export COMLRL_MODEL_DIR=../shared/models COMLRL_DATA_DIR=../shared/data
    for v in gate_syntax owned macf; do for s in 0 1 2; do  # options: cooperation_gate=syntax, prompt_style=owned, --algo macf
        comlrl train --env coophumaneval --seed $s --output_dir OUT/$v/seed-$s <the variant's option>; done; done
    python benchmarks/code_prompt_probe.py --styles reference,owned,skeleton --out benchmarks/results/code_variants/prompt_probe.json
    python benchmarks/code_variants.py main=benchmarks/results/coophumaneval_main gate_syntax=OUT/gate_syntax owned=OUT/owned \\
        macf=OUT/macf --solo_from benchmarks/results/coophumaneval_main --out benchmarks/results/code_variants
"""
import argparse, json, shutil, statistics, sys
from pathlib import Path

from comlrl.core import make_env
from comlrl.envs.code import parse_code
from comlrl.envs.codegen import aux_usage
from keep_results import ROOT, command_line, keep_run


def finished(run: Path) -> bool:
    "A run that finished: its run.json (written at the start) has the run's duration (added at the end)."
    return (run / 'run.json').is_file() and 'seconds' in json.loads((run / 'run.json').read_text())


def seed_dirs(d: Path) -> list:
    "The runs d/seed-<s> that finished, in seed order."
    return sorted((p for p in d.glob('seed-*') if finished(p)), key=lambda p: int(p.name.split('-')[1]))


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


def aux_shares(run: Path, first: bool = False) -> tuple:
    "(called, used): shares of the held-out problems whose main function (agent 2's answer after training, or before with `first`) calls `aux`, and uses its value."
    rows = [json.loads(l) for l in (run / 'eval_completions.jsonl').read_text().splitlines() if l.strip()]
    step = (min if first else max)(r['step'] for r in rows)
    rows = [r for r in rows if r['step'] == step and r.get('turn', 0) == 0]
    items = eval_items(run)
    fns = [parse_code(r['completions'][-1]).function(items[r['item']]['entry_point']) for r in rows]
    usage = [aux_usage(fn) for fn in fns if fn is not None]  # no main function: it calls nothing
    return sum(u.called for u in usage) / len(rows), sum(u.used for u in usage) / len(rows)


def variant_rows(name: str, d: Path, solo_from: Path = None) -> list:
    "One row per seed of the variant in folder d."
    runs = seed_dirs(d)
    if not runs: raise SystemExit(f"{d} holds no finished runs (seed-<s>/run.json with the run's seconds)")
    solo = {p.name: p for p in seed_dirs(d / 'solo') or (seed_dirs(solo_from / 'solo') if solo_from else [])}
    coop = {r['run']: r for r in json.loads((d / 'cooperation.json').read_text())['runs']} if (d / 'cooperation.json').is_file() else {}
    out = []
    for run in runs:
        ev, (called, used) = final_eval(run), aux_shares(run)
        row = {'variant': name, 'seed': int(run.name.split('-')[1]), 'aux_called': called, 'aux_used': used,
               'aux_used_before': aux_shares(run, first=True)[1],
               'tests': ev['eval/reward/pass_rate'], 'pass@1': ev['eval/pass@1'], 'reward': ev['eval/reward'],
               'cooperation': ev['eval/reward/cooperation'], 'minutes': json.loads((run / 'run.json').read_text()).get('seconds', 0) / 60}
        if run.name in solo: row['solo_tests'] = final_eval(solo[run.name])['eval/reward/pass_rate']
        if (c := coop.get(run.name, {}).get('trained')):
            row.update({'drop_helper': c['coop/counterfactual_drop/agent_0'], 'drop_main': c['coop/counterfactual_drop/agent_1'],
                        'team_vs_best_solo': c['coop/team_vs_best_solo'], 'role_swap_drop': c['coop/role_swap_drop']})
        out.append(row)
    return out


def table(rows: list) -> str:
    cols = ['variant', 'seed', 'aux_used_before', 'aux_called', 'aux_used', 'tests', 'solo_tests', 'pass@1', 'reward', 'cooperation',
            'drop_helper', 'drop_main', 'team_vs_best_solo', 'role_swap_drop', 'minutes']
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
    p.add_argument('--out', default=None, help="write variants.json and variants.md here, and keep what the pages read of each "
                   "variant's runs outside the repository's results (logs, answers, cooperation.json) in OUT/<variant>/, with a MANIFEST")
    a = p.parse_args()
    rows, dirs = [], {}
    for v in a.variants:
        name, eq, d = v.partition('=')
        if not eq: sys.exit(f"variants are NAME=DIR, got {v!r}")
        dirs[name] = Path(d)
        rows += variant_rows(name, Path(d), Path(a.solo_from) if a.solo_from else None)
    md = table(rows)
    print(md)
    if a.out:
        out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
        kept = ['variants.json', 'variants.md']
        for name, d in dirs.items():
            if d.resolve().is_relative_to(ROOT / 'benchmarks' / 'results'): continue  # committed already (e.g. the main job)
            for run in seed_dirs(d): kept += keep_run(run, out, f'{name}/{run.name}')
            if (d / 'cooperation.json').is_file():
                shutil.copyfile(d / 'cooperation.json', out / name / 'cooperation.json'); kept.append(f'{name}/cooperation.json')
        kept += [f.name for f in sorted(out.glob('*.json')) if f.name != 'variants.json']  # e.g. code_prompt_probe.py's, kept beside
        (out / 'variants.json').write_text(json.dumps(rows, indent=1) + '\n')
        (out / 'variants.md').write_text(f"# {command_line('code_variants.py', sys.argv[1:])}\n\n{md}\n")
        (out / 'MANIFEST').write_text(f"# written by {command_line('code_variants.py', sys.argv[1:])}\n" + '\n'.join(kept) + '\n')


if __name__ == '__main__':
    main()
