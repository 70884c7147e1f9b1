"""The sandbox's verdicts on hostile programs, its throughput, and every test's outcome, before and after a change, in one run.

Each side is a checkout of comlrl's sandbox (`--before`: a git revision, extracted into a temporary folder; `--after`:
this working tree), run in a process of its own that imports only that side's `comlrl.sandbox` and runs the same jobs
through `Sandbox(max_workers=2).map`:

* HumanEval's 164 canonical solutions, each `prompt + canonical_solution` with `check(entry_point)` as its one test and
  the item's `test` field as setup;
* ClassEval's 100 reference classes (`solution_code`) against their unittest source (`test`), all 100 (the environment
  leaves out 5 that fail here for reasons of this machine; they are kept here, so that both sides run the same work).

First the hostile programs that go for the verdict (`verdict_attacks`, read from nbs/21a_sandbox.ipynb's hostile
suite): each side runs each of them with the audit hook on and off, and the table gives the tests each scored (every
test of these programs fails when the program is honest about what its functions return).

The sides alternate (before, after, before, after, ...) so that both see the same machine, and each side's figures are
the median over its repeats: wall seconds per program, and CPU milliseconds per program (the children's user + system
time: the interpreters, launchers and namespaces, the number that does not depend on what else runs). Every test's
outcome of both sides is compared: the script lists each test that passes before and fails after (none may), and the
other way round.

    OMP_NUM_THREADS=1 COMLRL_DATA_DIR=../shared/data python benchmarks/sandbox_verdict.py --before 94c7870 \
        --out benchmarks/results/sandbox_verdict

writes `results.json` (the attacks' scores; per side and repeat: seconds, CPU, each program's per-test outcomes) and
`results.md`.
"""
import argparse, io, json, os, platform, statistics, subprocess, sys, tarfile, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# What one side runs, in its own process: `python -c CHILD <checkout> <jobs.json> <out.json>`.
CHILD = r'''
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
import comlrl.sandbox as sb
assert sb.__file__.startswith(sys.argv[1]), sb.__file__
jobs = json.load(open(sys.argv[2]))
cpu = lambda: sum(getattr(resource.getrusage(resource.RUSAGE_CHILDREN), f) for f in ('ru_utime', 'ru_stime'))
out = {}
with sb.Sandbox(max_workers=2) as box:
    box.run('x = 1', ['assert x == 1'])  # the mode is detected (and probed) before the clock starts
    for name, js in jobs.items():
        t0, c0 = time.perf_counter(), cpu()
        rs = box.map(js)
        out[name] = dict(seconds=time.perf_counter() - t0, cpu=cpu() - c0, isolation=box.isolation,
                         results=[dict(status=r.status, passed=r.passed, total=r.total,
                                       tests=[[t.name, t.passed] for t in r.tests]) for r in rs])
json.dump(out, open(sys.argv[3], 'w'))
'''


ATTACKS_CHILD = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
import comlrl.sandbox as sb
assert sb.__file__.startswith(sys.argv[1]), sb.__file__
out = []
for name, (prog, tests, kw) in json.load(open(sys.argv[2])).items():
    for audit in (True, False):
        kw2 = dict(kw, limits=sb.Limits(audit_hook=audit))
        r = sb.run_tests(prog, tests if isinstance(tests, str) else list(tests), **kw2)
        out.append(dict(attack=name, audit=audit, passed=r.passed, total=r.total, status=r.status,
                        error=(r.error or (r.tests[0].error if r.tests else '') or '')[:160]))
json.dump(out, open(sys.argv[3], 'w'))
'''


def verdict_attacks() -> dict:
    "The hostile programs that go for the verdict, as the notebook defines them: {name: (program, tests, run_tests keywords)}."
    cell = next(''.join(c['source']) for c in json.loads((ROOT / 'nbs/21a_sandbox.ipynb').read_text())['cells']
                if 'verdict_attacks = {' in ''.join(c['source']))
    code = cell[cell.index('# Routes to the verdict itself'):cell.index('attacks.update(verdict_attacks)')]
    ns = {}
    exec(code, ns)
    return ns['verdict_attacks']


def jobs() -> dict:
    "The jobs of both sides: {'humaneval': [...164], 'classeval': [...100]}, as `Sandbox.map` takes them."
    sys.path.insert(0, str(ROOT))
    from comlrl.envs.codegen import HumanEvalEnv
    from comlrl.envs.classeval import ClassEvalEnv
    he = HumanEvalEnv().load_dataset('test')
    ce = ClassEvalEnv().load_dataset('test', include_excluded=True)
    return {'humaneval': [dict(program=h['prompt'] + h['canonical_solution'], tests=[f"check({h['entry_point']})"],
                               setup=h['test']) for h in he],
            'classeval': [dict(program=c['solution_code'], tests=c['test'], kind='unittest') for c in ce]}, \
           {'humaneval': list(he['task_id']), 'classeval': list(ce['task_id'])}


def extract(rev: str, into: Path) -> Path:
    "The `comlrl` package of git revision `rev`, extracted into `into`; returns the folder to put on sys.path."
    data = subprocess.run(['git', '-C', str(ROOT), 'archive', rev, 'comlrl'], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as t: t.extractall(into)
    return into


def run_side(checkout: Path, jobs_file: Path, work: Path) -> dict:
    out = work / f'out-{time.monotonic_ns()}.json'
    p = subprocess.run([sys.executable, '-c', CHILD, str(checkout), str(jobs_file), str(out)], capture_output=True,
                       text=True)
    if p.returncode != 0: raise SystemExit(f'the side at {checkout} failed:\n{p.stderr[-3000:]}')
    return json.loads(out.read_text())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--before', required=True, help='git revision of the sandbox before the change')
    ap.add_argument('--after', type=Path, default=ROOT, help='folder holding the comlrl package after the change (default: this tree)')
    ap.add_argument('--repeats', type=int, default=2, help='runs of each side (alternating)')
    ap.add_argument('--out', type=Path, default=None, help='folder for results.json and results.md')
    a = ap.parse_args()
    all_jobs, ids = jobs()
    with tempfile.TemporaryDirectory(prefix='sandbox-bench-') as tmp:
        tmp = Path(tmp)
        os.chmod(tmp, 0o755)  # the sandbox's fresh uid reads the extracted package in 'none' mode
        sides = {'before': extract(a.before, tmp / 'before'), 'after': a.after.resolve()}
        jobs_file = tmp / 'jobs.json'
        jobs_file.write_text(json.dumps(all_jobs))
        attacks_file = tmp / 'attacks.json'
        attacks_file.write_text(json.dumps(verdict_attacks()))
        scores = {}
        for s, checkout in sides.items():
            out = tmp / f'attacks-{s}.json'
            p = subprocess.run([sys.executable, '-c', ATTACKS_CHILD, str(checkout), str(attacks_file), str(out)],
                               capture_output=True, text=True)
            if p.returncode != 0: raise SystemExit(f'the attacks on {s} failed:\n{p.stderr[-3000:]}')
            scores[s] = json.loads(out.read_text())
            print(f'attacks {s}: ' + ', '.join(f"{r['attack']} ({'hook' if r['audit'] else 'no hook'}) {r['passed']}/{r['total']}"
                                             for r in scores[s]), flush=True)
        runs = {s: [] for s in sides}
        for i in range(a.repeats):
            for s, checkout in sides.items():
                runs[s].append(run_side(checkout, jobs_file, tmp))
                r = runs[s][-1]
                print(f'repeat {i} {s:6} ' + '  '.join(f"{n}: {v['seconds']:.1f} s, {1000 * v['cpu'] / len(v['results']):.0f} ms "
                                                      f"CPU/program" for n, v in r.items()), flush=True)
    rows, diffs = [], {}
    for name in all_jobs:
        n = len(all_jobs[name])
        med = {s: (statistics.median(r[name]['seconds'] for r in runs[s]) / n,
                   statistics.median(r[name]['cpu'] for r in runs[s]) / n) for s in sides}
        seen = {s: [{(ids[name][j], t[0]): t[1] for j, res in enumerate(r[name]['results']) for t in res['tests']}
                    for r in runs[s]] for s in sides}  # per side and repeat: (task, test) -> passed
        flaky = {s: sorted(k for k in seen[s][0] if len({o.get(k) for o in seen[s]}) > 1) for s in sides}
        steady = lambda k: k not in flaky['before'] and k not in flaky['after']
        outcome = {s: seen[s][0] for s in sides}
        lost = sorted(k for k, ok in outcome['before'].items() if ok and not outcome['after'].get(k, False) and steady(k))
        gained = sorted(k for k, ok in outcome['after'].items() if ok and not outcome['before'].get(k, False) and steady(k))
        diffs[name] = dict(lost=lost, gained=gained, flaky=flaky)
        passed = {s: sum(outcome[s].values()) for s in sides}
        rows.append(dict(jobs=name, programs=n, tests=len(outcome['before']), passed_before=passed['before'],
                         passed_after=passed['after'], lost=len(lost), gained=len(gained),
                         wall_ms_before=1000 * med['before'][0], wall_ms_after=1000 * med['after'][0],
                         cpu_ms_before=1000 * med['before'][1], cpu_ms_after=1000 * med['after'][1],
                         isolation=runs['after'][0][name]['isolation']))
    for r in rows:
        r['wall_ratio'] = r['wall_ms_after'] / r['wall_ms_before']
        r['cpu_ratio'] = r['cpu_ms_after'] / r['cpu_ms_before']
    head = (f"Sandbox throughput, before ({a.before}) and after ({'this tree' if a.after.resolve() == ROOT else a.after}), in one run on {platform.node() and 'this machine'}: "
            f"{os.cpu_count()} CPUs, Sandbox(max_workers=2), {a.repeats} alternating repeats per side (medians), "
            f"{time.strftime('%Y-%m-%d')}.")
    md = [head, '', '| jobs | programs | tests | passed before | passed after | lost | gained | isolation | wall ms/program '
          'before | after | ratio | CPU ms/program before | after | ratio |', '|' + '---|' * 14]
    for r in rows:
        md.append(f"| {r['jobs']} | {r['programs']} | {r['tests']} | {r['passed_before']} | {r['passed_after']} | {r['lost']} | "
                  f"{r['gained']} | {r['isolation']} | {r['wall_ms_before']:.1f} | {r['wall_ms_after']:.1f} | "
                  f"{r['wall_ratio']:.2f} | {r['cpu_ms_before']:.1f} | {r['cpu_ms_after']:.1f} | {r['cpu_ratio']:.2f} |")
    for name, d in diffs.items():
        if d['lost']: md += ['', f"{name}: tests that pass before and fail after: " + ', '.join(map(str, d['lost']))]
        if d['gained']: md += ['', f"{name}: tests that fail before and pass after: " + ', '.join(map(str, d['gained']))]
        for s, ks in d['flaky'].items():
            if ks: md += ['', f"{name}: tests whose outcome changed between the repeats of '{s}' (not compared): " + ', '.join(map(str, ks))]
    md += ['', f"Hostile programs that go for the verdict (tests passed / tests; none may pass), run once per side:", '',
           '| attack | audit hook | before | after | after: status and first error |', '|---|---|---|---|---|']
    for b, f in zip(scores['before'], scores['after']):
        md.append(f"| {b['attack']} | {'on' if b['audit'] else 'off'} | {b['passed']}/{b['total']} | {f['passed']}/{f['total']} | "
                  f"{f['status']}: {f['error'][:100].replace('|', '/')} |")
    md = '\n'.join(md) + '\n'
    print(md)
    if a.out:
        a.out.mkdir(parents=True, exist_ok=True)
        (a.out / 'results.md').write_text(md)
        (a.out / 'MANIFEST').write_text(f"# written by python benchmarks/sandbox_verdict.py --before {a.before} --repeats {a.repeats} "
                                        f"--out {a.out}\nresults.md\nresults.json\n")
        (a.out / 'results.json').write_text(json.dumps(dict(before=a.before, repeats=a.repeats, rows=rows, diffs=diffs, attacks=scores,
                                                            runs=runs, ids=ids), separators=(',', ':'), default=list))


if __name__ == '__main__': main()
