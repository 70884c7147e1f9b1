"""The five algorithms on the TL;DR main job, over the same seeds: held-out reward before and after, mean rise, spread,
wall time and peak memory per run.

Each run is `comlrl train --env tldr --algo ALGO --seed S` with the cpu preset's defaults (SmolLM2-135M-Instruct, two
LoRA agents, 24 steps of 2 posts x 4 samples, 48 new tokens, greedy evaluation on 16 held-out posts before and after),
plus the algorithm's settings in `SETTINGS` (each with its reason). Every run is its own process, so its peak resident
memory is its own; `--jobs` of them run at a time, one thread each. What the pages read of each run (metrics.jsonl,
eval_completions.jsonl, run.json) is copied into OUT/<algo>/seed-<s>/, with OUT/summary.json, OUT/summary.md and a
MANIFEST (see `results_dir` in nbs/09_results.ipynb); the agents' weights stay in the work folder.

    export COMLRL_MODEL_DIR=../shared/models COMLRL_DATA_DIR=../shared/data
    python benchmarks/tldr_algorithms.py                                  # 15 runs, 2 at a time (2 cores: about 2 h)
    python benchmarks/tldr_algorithms.py --algos magrpo --seeds 0 --out /tmp/one   # a single run
    python benchmarks/tldr_algorithms.py --algos macf --work /tmp/tldr_macf --out benchmarks/results/tldr_macf   # 16_counterfactual's runs
    python benchmarks/tldr_algorithms.py --algos madpo,marlhf --work /tmp/tldr_pref --out benchmarks/results/tldr_preference   # 17b/17c's runs
    python benchmarks/tldr_algorithms.py --algos madpo,marlhf,madpo_iter --reuse --work /tmp/tldr_pref --out benchmarks/results/tldr_preference   # with 17e's
    python benchmarks/tldr_algorithms.py --seeds 0 --out /tmp/smoke --max_steps 1 --max_eval_samples 2   # other options go to comlrl train

`--reuse` keeps the runs the work folder already holds: parts run as separate invocations (e.g. `--algos ippo,maremax`
beside `--algos mareinforce,magrpo,marloo`, one per core) are gathered by a last `--reuse` invocation over everything.
"""
import argparse, concurrent.futures, datetime, json, os, platform, shutil, subprocess, sys, time
from pathlib import Path

from comlrl.results import seed_summary, seeds_table
from keep_results import command_line, keep_run, write_manifest

ROOT = Path(__file__).resolve().parents[1]
LABELS = {'mareinforce': 'MAREINFORCE', 'magrpo': 'MAGRPO', 'marloo': 'MARLOO', 'maremax': 'MAREMAX', 'ippo': 'IPPO', 'macf': 'MACF',
          'madpo': 'MADPO', 'marlhf': 'MARLHF', 'madpo_iter': 'MADPOIter'}
FIVE = ('mareinforce', 'magrpo', 'marloo', 'maremax', 'ippo')  # the comparison of 30_evaluation; MACF (16_counterfactual) runs apart
SETTINGS = {  # algorithm -> (extra `comlrl train` arguments, why); empty: the cpu preset's defaults as they are
    a: ([], '') for a in LABELS}
_POSTS = ['--train_split', 'train[:48]', '--num_candidates', '4', '--num_pairs', '2']
SETTINGS['madpo'] = (_POSTS, "the pair set on 48 posts (the number the main job's 24 steps of 2 posts draw), 4 candidates and 2 pairs "
                     "per post: the main job's samples, and its sequences per update")
SETTINGS['marlhf'] = (_POSTS + ['--scale_rewards', 'group'], "pairs as MADPO's, a reward model fitted to them, then the main job's MAGRPO "
                      "(its scale_rewards='group') on the frozen reward model")
SETTINGS['madpo_iter'] = (['--train_split', 'train[:24]', '--num_rounds', '2', '--num_candidates', '2', '--num_pairs', '2'],
                          "2 rounds on 24 posts, each post's 2 candidates of the current team against 2 of the team sampled again "
                          "(comparator 'current'), 2 pairs per post: MADPO's 192 sampled joint actions and 96 pairs, half drawn "
                          "by the team after its first 12 steps")
ALSO = ('eval/rougeL/agent_1', 'eval/rougeL/agent_2')  # the reward scores form; ROUGE-L against the post's own TL;DR tracks content


def run_one(algo: str, seed: int, work: Path, threads: int, extra: list, reuse: bool = False) -> dict:
    """Train one (algorithm, seed) in its own process; its wall time and peak resident memory (from the kernel's rusage of
    that child) go to bench.json in the run's folder. With `reuse`, a run whose bench.json exists is not trained again."""
    out, log = work / algo / f'seed-{seed}', work / f'{algo}-seed-{seed}.log'
    cmd = ['comlrl', 'train', '--env', 'tldr', '--algo', algo, '--seed', str(seed), '--output_dir', str(out),
           '--overwrite_output_dir', *SETTINGS[algo][0], *extra]
    if reuse and (out / 'bench.json').is_file():
        done = json.loads((out / 'bench.json').read_text())
        if done['command'] != cmd: raise RuntimeError(f"{out} was trained with {' '.join(done['command'])}, not {' '.join(cmd)}: remove it, or drop --reuse")
        print(f"{algo} seed {seed}: reused ({done['minutes']:.1f} min, peak {done['peak_mib']:.0f} MiB)", flush=True)
        return {**done, 'algo': algo, 'seed': seed, 'dir': out}
    env = {**os.environ, 'OMP_NUM_THREADS': str(threads), 'MKL_NUM_THREADS': str(threads)}
    t0 = time.perf_counter()
    with open(log, 'w') as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    secs = time.perf_counter() - t0
    if p.returncode != 0: raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}); its output is in {log}")
    print(f"{algo} seed {seed}: {secs / 60:.1f} min, peak {usage.ru_maxrss / 1024:.0f} MiB", flush=True)
    done = {'minutes': secs / 60, 'cpu_minutes': (usage.ru_utime + usage.ru_stime) / 60, 'peak_mib': usage.ru_maxrss / 1024,
            'command': cmd, 'threads': threads,
            'finished': datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}
    (out / 'bench.json').write_text(json.dumps(done, indent=1))
    return {**done, 'algo': algo, 'seed': seed, 'dir': out}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--algos', default=','.join(FIVE), help=f"comma-separated algorithms among {', '.join(LABELS)} (default: the five compared)")
    p.add_argument('--seeds', default='0,1,2', help='comma-separated seeds')
    p.add_argument('--jobs', type=int, default=2, help='runs at a time (each one thread)')
    p.add_argument('--threads', type=int, default=1, help='threads per run')
    p.add_argument('--work', default='/tmp/tldr_algorithms', help='where the runs write (weights included)')
    p.add_argument('--out', default=str(ROOT / 'benchmarks' / 'results' / 'tldr_algorithms'), help='what is kept (committed)')
    p.add_argument('--reuse', action='store_true', help="don't train again the runs --work already holds (bench.json): resume a stopped "
                   "benchmark, or run parts of it in separate invocations and gather them in a last one")
    a, extra = p.parse_known_args()  # the rest goes to every `comlrl train` (e.g. --max_steps 1 for a smoke run)
    algos, seeds = a.algos.split(','), [int(s) for s in a.seeds.split(',')]
    unknown = sorted(set(algos) - set(LABELS))
    if unknown: sys.exit(f"unknown algorithm(s) {unknown}: choose from {', '.join(LABELS)}")
    work, dest = Path(a.work), Path(a.out)
    work.mkdir(parents=True, exist_ok=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    jobs = [(algo, s) for s in seeds for algo in algos]  # seed-major: every algorithm has its first seed early
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        runs = list(pool.map(lambda j: run_one(*j, work, a.threads, extra, a.reuse), jobs))

    if dest.exists(): shutil.rmtree(dest)
    files, summary = [], {
        'job': 'comlrl train --env tldr --algo ALGO --seed S (cpu preset: SmolLM2-135M-Instruct, two LoRA agents, 24 steps '
               'of 2 posts x 4 samples, 48 new tokens, greedy evaluation on 16 held-out posts before and after)',
        'command': command_line('tldr_algorithms.py', sys.argv[1:]),
        'date': started.date().isoformat(), 'machine': f'{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}',
        'jobs_at_once': a.jobs, 'threads_per_run': a.threads, 'algorithms': {}}
    for algo in algos:
        mine = sorted((r for r in runs if r['algo'] == algo), key=lambda r: r['seed'])
        for r in mine: files += keep_run(r['dir'], dest, f"{algo}/seed-{r['seed']}")
        sm = seed_summary([dest / algo / f"seed-{r['seed']}" for r in mine])
        for row in sm['seeds']: row['run'] = str(Path(row['run']).relative_to(dest))
        also = {k: seed_summary([dest / row['run'] for row in sm['seeds']], k) for k in ALSO}
        for v in also.values():
            for row in v['seeds']: row['run'] = str(Path(row['run']).relative_to(dest))
        summary['algorithms'][algo] = {'label': LABELS[algo], 'args': SETTINGS[algo][0], 'why': SETTINGS[algo][1], **sm, 'also': also,
                                       'seed_values': [r['seed'] for r in mine], 'minutes': [r['minutes'] for r in mine],
                                       'cpu_minutes': [r.get('cpu_minutes') for r in mine],
                                       'peak_mib': [r['peak_mib'] for r in mine]}
    (dest / 'summary.json').write_text(json.dumps(summary, indent=1) + '\n')
    md = [f"# {summary['job']}", '', f"{summary['date']}, {summary['machine']}; {a.jobs} runs at a time, {a.threads} thread(s) each", '']
    for algo, s in summary['algorithms'].items():
        md += [f"## {s['label']}" + (f" ({' '.join(s['args'])}: {s['why']})" if s['args'] else ''), '', seeds_table(s), '']
    (dest / 'summary.md').write_text('\n'.join(md))
    write_manifest(dest, ['summary.json', 'summary.md', *files], summary['command'])
    print('\n'.join(md))


if __name__ == '__main__':
    main()
