"""The code main job over several seeds, and the test-time baselines of `30_evaluation` on the same held-out problems.

1. `comlrl train --env ENV --num_seeds S` (the cpu preset's defaults): every seed's run, `seeds.json` and `seeds.png`.
2. On the runs' eval split, greedy like the trainer's evaluation: the untrained model under each strategy of
   `30_evaluation` (one agent alone, two independent agents concatenated, a pipeline, one round of discussion), and
   every seed's trained pair answering as it was trained (concatenated).

    export COMLRL_MODEL_DIR=../shared/models COMLRL_DATA_DIR=../shared/data
    OMP_NUM_THREADS=1 python benchmarks/code_main_job.py --env coophumaneval --out /tmp/code_seeds

`--skip_train` scores runs that already exist in --out (made by `--num_seeds`, or by separate
`comlrl train --seed S --output_dir OUT/seed-S` commands). The table goes to stdout and to OUT/baselines_<teams>.json.
With `--keep DIR` (e.g. benchmarks/results/coophumaneval_main) what the pages read is copied there: each seed's
metrics.jsonl, eval_completions.jsonl and run.json, seeds.json, the baselines, and a MANIFEST (nbs/09_results.ipynb).
"""
import argparse, json, shutil, subprocess, sys, time
from pathlib import Path

from comlrl.cli import load_run
from comlrl.evaluation import STRATEGIES, agent_policy, evaluate_baseline
from comlrl.results import plot_seeds, seed_summary
from keep_results import command_line, keep_run, write_manifest


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--env', default='coophumaneval')
    p.add_argument('--num_seeds', type=int, default=3)
    p.add_argument('--out', default='/tmp/code_seeds')
    p.add_argument('--skip_train', action='store_true', help='score the runs already in --out')
    p.add_argument('--teams', default='untrained,trained', help="which rows: 'untrained' (the baselines), 'trained' (each seed's pair)")
    p.add_argument('--keep', default=None, help='copy what the pages read (each seed\'s logs, seeds.json, the baselines) into this folder')
    a, extra = p.parse_known_args()
    out = Path(a.out)
    if not a.skip_train:
        cmd = ['comlrl', 'train', '--env', a.env, '--num_seeds', str(a.num_seeds), '--output_dir', str(out), *extra]
        print('$', ' '.join(cmd), flush=True)
        subprocess.run(cmd, check=True)
    teams = a.teams.split(',')
    dirs = sorted((p for p in out.glob('seed-*') if (p / 'run.json').is_file()), key=lambda p: int(p.name.split('-')[1]))
    if not dirs: raise SystemExit(f'no runs in {out}: expected {out}/seed-<s>/run.json')
    seeds = None
    if 'trained' in teams:
        if (out / 'seeds.json').is_file(): seeds = json.loads((out / 'seeds.json').read_text())
        else:  # seeds run as separate `comlrl train --seed S --output_dir OUT/seed-S` commands
            seeds = {**seed_summary(dirs), 'seed_values': [int(p.name.split('-')[1]) for p in dirs]}
            plot_seeds(dirs, path=out / 'seeds.png', title=f'comlrl train --env {a.env}, seeds ' + ', '.join(str(s) for s in seeds['seed_values']))

    rows = []
    def score(label, trainer, strategy, seed=None):
        pol = [agent_policy(ag, **trainer._generation_kwargs(greedy=True)) for ag in trainer.agents]
        t0 = time.time()
        r = evaluate_baseline(pol, trainer.env, list(trainer.eval_dataset), strategy, num_samples=1)
        row = {'team': label, 'seed': seed, **r.row(), 'seconds': time.time() - t0}
        rows.append(row)
        print(json.dumps(row), flush=True)

    if 'untrained' in teams:
        base = load_run(dirs[0], untrained=True)
        for s in STRATEGIES: score('untrained', base, s)
        del base
    if 'trained' in teams:
        for run, s in zip([Path(x['run']) for x in seeds['seeds']], seeds['seed_values']):
            score('trained', load_run(run), 'concat', seed=s)

    (out / f"baselines_{a.teams.replace(',', '_')}.json").write_text(json.dumps(rows, indent=1))
    if a.keep: keep(out, Path(a.keep), dirs, seeds, f"baselines_{a.teams.replace(',', '_')}.json")
    cols = ['team', 'seed', 'strategy', 'pass@1', 'reward', 'structure', 'syntax', 'tests', 'cooperation']
    fmt = lambda v: f'{v:.3f}' if isinstance(v, float) else '' if v is None else str(v)
    print('\n| ' + ' | '.join(cols) + ' |\n|' + '---|' * len(cols))
    for r in rows: print('| ' + ' | '.join(fmt(r.get(c)) for c in cols) + ' |')
    if seeds is None: return
    print(f"\ntraining: eval/reward rise per seed {[round(x['rise'], 3) for x in seeds['seeds']]}, mean {seeds['mean_rise']:.3f}, "
          f"spread {seeds['spread']:.3f}" + (f"; minutes per run {[round(m, 1) for m in seeds['minutes']]}" if 'minutes' in seeds else ''))


def keep(out: Path, dest: Path, dirs: list, seeds: dict, baselines: str):
    "Copy the seeds' logs, seeds.json (run paths made relative) and the baselines into `dest`, with a MANIFEST."
    if dest.exists(): shutil.rmtree(dest)
    files = [f for d in dirs for f in keep_run(d, dest, d.name)]
    if seeds is not None:
        for row in seeds['seeds']: row['run'] = Path(row['run']).name
        (dest / 'seeds.json').write_text(json.dumps(seeds, indent=1) + '\n'); files.append('seeds.json')
    shutil.copyfile(out / baselines, dest / 'baselines.json'); files.append('baselines.json')
    write_manifest(dest, files, command_line('code_main_job.py', sys.argv[1:]))


if __name__ == '__main__':
    sys.exit(main())
