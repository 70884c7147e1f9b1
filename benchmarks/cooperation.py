"""The cooperation metrics of `31_cooperation` for finished runs, trained and untrained, on each run's eval split.

For every run folder (a `comlrl train` output_dir): the team as trained and the same team before training (the run's
model, no saved weights), each scored by `comlrl eval`'s evaluation with `CooperationMetrics`: the team's reward, each
agent alone (answers twice as long), each agent's counterfactual drop (its answer emptied), the roles swapped, and the
lazy-agent rates. One JSON file, one record per run:

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


def coop(run: Path, untrained: bool) -> dict:
    "The eval/ and coop/ metrics of one team (trained, or as it was before training)."
    trainer = load_run(run, untrained=untrained)
    trainer.callbacks.append(CooperationMetrics())
    t0 = time.time()
    m = trainer.evaluate()
    return {**{k: v for k, v in m.items() if k.startswith(('coop/', 'eval/reward', 'eval/pass'))}, 'seconds': time.time() - t0}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--runs', nargs='+', required=True, help='run folders (comlrl train output_dir)')
    p.add_argument('--out', required=True, help='the JSON file to write')
    a = p.parse_args()
    out = Path(a.out)
    records = []
    for r in map(Path, a.runs):
        rec = {'run': r.name, 'trained': coop(r, False), 'untrained': coop(r, True)}
        print(json.dumps(rec), flush=True)
        records.append(rec)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({'command': command_line('cooperation.py', sys.argv[1:]), 'runs': records}, indent=1) + '\n')
    manifest = out.parent / 'MANIFEST'  # the folder's list of what the pages read (results_dir downloads what it lists)
    if manifest.is_file() and out.name not in manifest.read_text().split():
        manifest.write_text(manifest.read_text() + out.name + '\n')


if __name__ == '__main__':
    sys.exit(main())
