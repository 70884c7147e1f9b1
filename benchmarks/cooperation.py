"""The cooperation metrics of `31_cooperation` for finished runs, trained and untrained, on each run's eval split.

For every run folder (a `comlrl train` output_dir): the team as trained and the same team before training (the run's
model, no saved weights), each scored by `comlrl eval`'s evaluation with `CooperationMetrics`: the team's reward, each
agent alone (answers twice as long), each agent's counterfactual drop (its answer emptied), the roles swapped, and the
lazy-agent rates (the untrained team, the same model for every seed of a job, is scored with the first run only); and
for the trained team, each agent's drop when its answer is replaced by its *untrained* self's (`neutral='untrained'`:
what training added to that agent, where emptying an answer fails a gated reward outright).
One JSON file, one record per run; records already in the file are kept (a run is scored only for what it lacks):

    export COMLRL_MODEL_DIR=../shared/models COMLRL_DATA_DIR=../shared/data
    OMP_NUM_THREADS=1 python benchmarks/cooperation.py --runs OUT/seed-0 OUT/seed-1 --out benchmarks/results/NAME/cooperation.json

Each record names its run by its folder's name (e.g. seed-0). When the output's folder has a MANIFEST (a results folder
of `keep_results.py`), the file is added to it.
"""
import argparse, json, sys, time
from pathlib import Path

from comlrl.cli import load_run
from comlrl.cooperation import CooperationMetrics
from keep_results import command_line


def coop(run: Path, untrained: bool, **kw) -> dict:
    "The eval/ and coop/ metrics of one team (trained, or as it was before training); `kw` goes to `CooperationMetrics`."
    trainer = load_run(run, untrained=untrained)
    trainer.callbacks.append(CooperationMetrics(**kw))
    t0 = time.time()
    m = trainer.evaluate()
    return {**{k: v for k, v in m.items() if k.startswith(('coop/', 'eval/reward', 'eval/pass'))}, 'seconds': time.time() - t0}

PARTS = {'trained': lambda r: coop(r, False), 'untrained': lambda r: coop(r, True),
         'trained_vs_untrained': lambda r: coop(r, False, neutral='untrained', solo=False, role_swap=False)}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--runs', nargs='+', required=True, help='run folders (comlrl train output_dir)')
    p.add_argument('--out', required=True, help='the JSON file to write')
    p.add_argument('--parts', default=','.join(PARTS), help=f"which teams to score, comma-separated (default: all of {', '.join(PARTS)})")
    a = p.parse_args()
    parts = a.parts.split(',')
    if bad := [x for x in parts if x not in PARTS]: sys.exit(f"--parts takes {', '.join(PARTS)}; got {', '.join(bad)}")
    out = Path(a.out)
    done = {r['run']: r for r in json.loads(out.read_text())['runs']} if out.is_file() else {}
    records = []
    for r in map(Path, a.runs):
        rec = done.get(r.name, {'run': r.name})
        for part, score in ((x, PARTS[x]) for x in parts):
            if part == 'untrained' and records: continue  # the run's model before training is the same for every seed: scored once
            if part not in rec: rec[part] = score(r)
        print(json.dumps(rec), flush=True)
        records.append(rec)
        out.parent.mkdir(parents=True, exist_ok=True)  # written after every run: an interrupted job keeps what it scored
        out.write_text(json.dumps({'command': command_line('cooperation.py', sys.argv[1:]), 'runs': records}, indent=1) + '\n')
    manifest = out.parent / 'MANIFEST'  # the folder's list of what the pages read (results_dir downloads what it lists)
    if manifest.is_file() and out.name not in manifest.read_text().split():
        manifest.write_text(manifest.read_text() + out.name + '\n')


if __name__ == '__main__':
    sys.exit(main())
