"""The code main job over several seeds, one agent trained alone with the same samples and steps, the test-time baselines
of `30_evaluation`, and the cooperation metrics of `31_cooperation`, all on the same held-out problems.

1. `comlrl train --env ENV --num_seeds S` (the cpu preset's defaults): every seed's pair, `seeds.json` and `seeds.png`.
2. With `--solo`: the same job for one agent alone (`--env_args num_agents=1`: single-agent GRPO, the same prompts,
   samples and steps; its answer may be twice as long, the budget of the pair's two answers), into OUT/solo/seed-<s>.
3. On the runs' eval split, greedy like the trainer's evaluation:
   - the untrained model under each strategy of `30_evaluation` (one agent alone, with the pair's answer length and
     with twice it; two independent agents concatenated; a pipeline; one round of discussion);
   - every seed's trained pair answering as it was trained (concatenated), with its cooperation metrics (`coop/`);
   - every seed's trained solo agent answering alone, scored by the pair's reward (as the untrained `single` row).

    export COMLRL_MODEL_DIR=../shared/models COMLRL_DATA_DIR=../shared/data
    OMP_NUM_THREADS=1 python benchmarks/code_main_job.py --env coophumaneval --solo --out /tmp/code_seeds

`--skip_train` scores runs that already exist in --out (made by `--num_seeds`, or by separate
`comlrl train --seed S --output_dir OUT/seed-S` commands; OUT/solo/seed-S for the solo runs). The table goes to
stdout and to OUT/baselines_<teams>.json. With `--keep DIR` (e.g. benchmarks/results/coophumaneval_main) what the
pages read is copied there: each run's metrics.jsonl, eval_completions.jsonl and run.json, seeds.json (and
solo/seeds.json), the baselines, and a MANIFEST (nbs/09_results.ipynb). Other options go to every `comlrl train`.
"""
import argparse, json, shutil, subprocess, sys, time
from pathlib import Path

from comlrl.cli import load_run
from comlrl.cooperation import CooperationMetrics
from comlrl.evaluation import STRATEGIES, agent_policy, evaluate_baseline
from comlrl.results import plot_seeds, seed_summary
from keep_results import command_line, keep_run, write_manifest


def seed_dirs(out: Path) -> list:
    "The finished runs out/seed-<s>, in seed order."
    return sorted((p for p in out.glob('seed-*') if (p / 'run.json').is_file()), key=lambda p: int(p.name.split('-')[1]))


def train(env: str, num_seeds: int, out: Path, extra: list):
    "`comlrl train --num_seeds` into out/seed-<s> (one seed: straight into its folder, as --num_seeds 1 writes no seed folders)."
    seed = int(extra[extra.index('--seed') + 1]) if '--seed' in extra else 0
    where = ['--num_seeds', str(num_seeds), '--output_dir', str(out)] if num_seeds > 1 else ['--output_dir', str(out / f'seed-{seed}')]
    cmd = ['comlrl', 'train', '--env', env, *where, *extra]
    print('$', ' '.join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def summary(out: Path, title: str):
    "seeds.json of the runs in `out` (written by --num_seeds, else made here)."
    if (out / 'seeds.json').is_file(): return json.loads((out / 'seeds.json').read_text())
    dirs = seed_dirs(out)
    infos = [json.loads((d / 'run.json').read_text()) for d in dirs]
    seeds = {**seed_summary(dirs), 'seed_values': [int(p.name.split('-')[1]) for p in dirs]}
    if all('cpu_seconds' in i for i in infos):  # written by comlrl train when a run ends
        seeds.update(minutes=[i['seconds'] / 60 for i in infos], cpu_minutes=[i['cpu_seconds'] / 60 for i in infos])
    plot_seeds(dirs, path=out / 'seeds.png', title=title)
    return seeds


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--env', default='coophumaneval')
    p.add_argument('--num_seeds', type=int, default=3)
    p.add_argument('--out', default='/tmp/code_seeds')
    p.add_argument('--solo', action='store_true', help='also train one agent alone (single-agent GRPO) over the same seeds')
    p.add_argument('--skip_train', action='store_true', help='score the runs already in --out')
    p.add_argument('--teams', default='untrained,trained', help="which rows: 'untrained' (the baselines), 'trained' (each seed's pair, and solo "
                   "agent), 'solo' (only the solo agents), 'seeds' (no rows: only the seeds' summary, e.g. for a variant of the job)")
    p.add_argument('--combine', action='store_true', help="score nothing: join OUT/baselines_untrained.json, _trained.json and _solo.json "
                   "(--skip_train jobs run side by side, one per --teams) into the table, and --keep them")
    p.add_argument('--keep', default=None, help='copy what the pages read (each run\'s logs, seeds.json, the baselines) into this folder')
    a, extra = p.parse_known_args()
    out, teams = Path(a.out), a.teams.split(',')
    if not a.skip_train:
        train(a.env, a.num_seeds, out, extra)
        if a.solo:
            length = json.loads((seed_dirs(out)[0] / 'run.json').read_text())['config']['max_completion_length']
            train(a.env, a.num_seeds, out / 'solo', [*extra, '--env_args', 'num_agents=1', '--max_completion_length', str(2 * length)])
    dirs = seed_dirs(out)
    if not dirs: raise SystemExit(f'no runs in {out}: expected {out}/seed-<s>/run.json')
    solo_dirs = seed_dirs(out / 'solo')
    seeds = solo = None
    if {'trained', 'solo', 'seeds'} & set(teams):
        seeds = summary(out, f'comlrl train --env {a.env}')
        if solo_dirs: solo = summary(out / 'solo', f'comlrl train --env {a.env} --env_args num_agents=1')

    rows = []
    def score(label, trainer, strategy, seed=None, policies=None, env=None, coop=False, length=None):
        "One row: the team (or one agent) under `strategy`, greedy; with `coop`, the cooperation metrics of its evaluation."
        kw = trainer.generation_kwargs(greedy=True)
        if length is not None: kw['max_completion_length'] = length
        pol = policies or [agent_policy(ag, **kw) for ag in trainer.agents]
        t0 = time.time()
        r = evaluate_baseline(pol, env or trainer.env, list(trainer.eval_dataset), strategy, num_samples=1)
        row = {'team': label, 'seed': seed, 'max_completion_length': kw['max_completion_length'], **r.row(), 'seconds': time.time() - t0}
        if coop:
            trainer.callbacks.append(CooperationMetrics())
            row.update({k: v for k, v in trainer.evaluate().items() if k.startswith('coop/')})
        rows.append(row)
        print(json.dumps(row), flush=True)
        return pol

    if 'untrained' in teams and not a.combine:
        base = load_run(dirs[0], untrained=True)
        length = base.args.max_completion_length
        for s in STRATEGIES: score('untrained', base, s, coop=s == 'concat')
        score('untrained', base, 'single', length=2 * length)  # one agent with the budget of the pair's two answers
        del base
    if {'trained', 'solo'} & set(teams) and not a.combine:
        for run, s in zip([Path(x['run']) for x in seeds['seeds']], seeds['seed_values']):
            if 'trained' in teams: score('trained', load_run(run), 'concat', seed=s, coop=True)
        if solo is not None:
            pair_env = load_run(dirs[0], untrained=True).env  # the solo answer scored by the pair's reward, as the `single` rows
            for run, s in zip([Path(x['run']) for x in solo['seeds']], solo['seed_values']):
                t = load_run(run)
                score('trained solo', t, 'single', seed=s, env=pair_env)

    name = f"baselines_{a.teams.replace(',', '_')}.json"
    if a.combine:
        parts = [out / f'baselines_{t}.json' for t in ('untrained', 'trained', 'solo')]
        rows = [r for f in parts if f.is_file() for r in json.loads(f.read_text())]
    (out / name).write_text(json.dumps(rows, indent=1))
    if a.keep: keep(out, Path(a.keep), dirs, seeds, solo_dirs, solo, name)
    cols = ['team', 'seed', 'strategy', 'max_completion_length', 'pass@1', 'reward', 'structure', 'syntax', 'tests', 'cooperation',
            'coop/team_vs_best_solo']
    fmt = lambda v: f'{v:.3f}' if isinstance(v, float) else '' if v is None else str(v)
    print('\n| ' + ' | '.join(cols) + ' |\n|' + '---|' * len(cols))
    for r in rows: print('| ' + ' | '.join(fmt(r.get(c)) for c in cols) + ' |')
    for what, sm in (('pairs', seeds), ('solo agents', solo)):
        if sm is None: continue
        print(f"\ntraining, {what}: eval/reward rise per seed {[round(x['rise'], 3) for x in sm['seeds']]}, mean {sm['mean_rise']:.3f}, "
              f"spread {sm['spread']:.3f}" + (f"; minutes per run {[round(m, 1) for m in sm['minutes']]}" if 'minutes' in sm else ''))


def keep(out: Path, dest: Path, dirs: list, seeds: dict, solo_dirs: list, solo: dict, baselines: str):
    "Copy the seeds' logs, seeds.json (run paths made relative) and the baselines into `dest`, with a MANIFEST."
    if dest.exists(): shutil.rmtree(dest)
    files = [f for d in dirs for f in keep_run(d, dest, d.name)] + [f for d in solo_dirs for f in keep_run(d, dest, f'solo/{d.name}')]
    for sm, where in ((seeds, ''), (solo, 'solo/')):
        if sm is None: continue
        for row in sm['seeds']: row['run'] = where + Path(row['run']).name
        (dest / where / 'seeds.json').write_text(json.dumps(sm, indent=1) + '\n'); files.append(f'{where}seeds.json')
    shutil.copyfile(out / baselines, dest / 'baselines.json'); files.append('baselines.json')
    write_manifest(dest, files, command_line('code_main_job.py', sys.argv[1:]))


if __name__ == '__main__':
    sys.exit(main())
