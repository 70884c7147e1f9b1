"""Check that the numbers README.md quotes from committed results are the numbers in those results' files.

README.md (made from nbs/index.ipynb) reports real runs: the main job's table of seeds, the comparison of the algorithms
on the TL;DR job, the code job's table, and numbers in its sentences. This check reads each of them from README.md and
recomputes it from the committed files under benchmarks/results/: each run's metrics.jsonl (the held-out reward before
and after training, ROUGE-L, lengths) and the scripts' JSON files (minutes, peak memory, the baselines). It uses none of
comlrl's table code, so a README made from stale outputs, results rewritten without refilling the page, and a number
typed by hand all fail. The quick start and the main job's description are checked against the `cpu` preset that
`comlrl train --env tldr` runs with.

A claim this check cannot find in README.md fails too: change the sentence and CLAIMS below together.

    python tools/check_readme_numbers.py [--readme README.md] [--results benchmarks/results]
"""
import argparse, ast, json, re, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROUGE = {'concise (agent 0)': 'eval/rougeL/agent_1', 'detailed (agent 1)': 'eval/rougeL/agent_2'}  # the writing measures number agents from 1


def _records(run: Path) -> list:
    return [json.loads(l) for l in (run / 'metrics.jsonl').read_text().splitlines() if l.strip()]


def held_out(run: Path, key: str = 'eval/reward') -> tuple:
    "`key` at the run's first evaluation (before training) and at its last (after)."
    e = [r for r in _records(run) if key in r]
    return e[0][key], e[-1][key]


def first_train_reward(run: Path) -> float:
    return next(r['reward'] for r in _records(run) if 'reward' in r)


class Results:
    "The committed results README.md quotes, read from their files."
    def __init__(self, root: Path):
        self.root = root
        self.tldr = {}  # label -> (summary entry, folder of its runs)
        for name in ('tldr_algorithms', 'tldr_macf', 'tldr_preference'):  # the RL trainers, MACF, the preference trainers
            for algo in json.loads((root / name / 'summary.json').read_text())['algorithms'].values():
                self.tldr[algo['label']] = (algo, root / name)

    def runs(self, label: str) -> list:
        algo, folder = self.tldr[label]
        return [folder / s['run'] for s in algo['seeds']]

    def rises(self, label: str) -> list:
        return [a - b for b, a in map(held_out, self.runs(label))]

    def code(self, name: str = 'coophumaneval_main'):
        d = self.root / name
        return json.loads((d / 'seeds.json').read_text()), json.loads((d / 'baselines.json').read_text()), d


def table(md: str, head: str) -> tuple:
    "The header cells and the rows' cells of the Markdown table whose header line starts with `head` (None if absent)."
    lines = md.splitlines()
    i = next((i for i, l in enumerate(lines) if l.startswith(head)), None)
    if i is None: return None, []
    cells = lambda l: [c.strip() for c in l.strip().strip('|').split('|')]
    rows = []
    for l in lines[i + 2:]:
        if not l.startswith('|'): break
        rows.append(cells(l))
    return cells(lines[i]), rows


f3, mean = (lambda x: f'{x:.3f}'), (lambda xs: sum(xs) / len(xs))


def check_seeds_table(md: str, res: Results) -> list:
    head, rows = table(md, '| seed | eval/reward before |')
    if head is None: return ["the main job's table of seeds ('| seed | eval/reward before | ...') is not in README"]
    algo, folder = res.tldr['MAGRPO']
    out = []
    for row in rows:
        i = algo['seed_values'].index(int(row[0]))
        b, a = held_out(folder / algo['seeds'][i]['run'])
        want = [row[0], f3(b), f3(a), f'{a - b:+.3f}', f"{algo['minutes'][i]:.1f}", f"{algo['peak_mib'][i]:.0f}"]
        out += [f"main job table, seed {row[0]}, column {h!r}: README says {g}, {folder.name} gives {w}"
                for h, g, w in zip(head, row, want) if g != w]
    if len(rows) != len(algo['seeds']): out.append(f"main job table: {len(rows)} seeds in README, {len(algo['seeds'])} in {folder.name}")
    rises = res.rises('MAGRPO')
    line = f"Mean rise **{mean(rises):+.3f}**, spread {max(rises) - min(rises):.3f}"
    if line not in md: out.append(f"main job table: README lacks the line {line!r} that {folder.name} gives")
    return out


def check_comparison(md: str, res: Results) -> list:
    head, rows = table(md, '| algorithm | eval/reward before |')
    if head is None: return ["the comparison of the algorithms ('| algorithm | eval/reward before | ...') is not in README"]
    out = [f"comparison table leaves out {label}, which benchmarks/results holds" for label in res.tldr if label not in [r[0] for r in rows]]
    for row in rows:
        if row[0] not in res.tldr: out.append(f"comparison table: no committed results for {row[0]!r}"); continue
        algo, folder = res.tldr[row[0]]
        ba = [held_out(r) for r in res.runs(row[0])]
        before, after, rises = [b for b, _ in ba], [a for _, a in ba], res.rises(row[0])
        want = [row[0], f3(before[0]) if max(before) - min(before) < 1e-3 else f'{f3(mean(before))} (varies)',
                f'{f3(mean(after))} ({f3(min(after))}–{f3(max(after))})', f'{mean(rises):+.3f}', f3(max(rises) - min(rises)),
                f'{sum(r > 0 for r in rises)} of {len(rises)}', f"{mean(algo['minutes']):.1f}", f"{max(algo['peak_mib']) / 1024:.1f}"]
        for h in head[len(want):]:
            key = next((k for role, k in ROUGE.items() if role in h), None)
            if key is None: out.append(f"comparison table: column {h!r} is unknown to this check (add it to ROUGE)"); want.append(None); continue
            ro = [held_out(r, key) for r in res.runs(row[0])]
            want.append(f'{f3(mean([b for b, _ in ro]))} → {f3(mean([a for _, a in ro]))}')
        out += [f"comparison table, {row[0]}, column {h!r}: README says {g}, {folder.name} gives {w}"
                for h, g, w in zip(head, row, want) if w is not None and g != w]
    return out


def check_code_table(md: str, res: Results) -> list:
    head, rows = table(md, '| team | answers | reward (max 4) | pass@1 |')
    if head is None: return ["the code job's table ('| team | answers | reward (max 4) | pass@1 |') is not in README"]
    job, base, d = res.code()
    out = []
    for row in rows:
        if row[0] == 'untrained' or row[0].startswith('trained alone'):
            team, seed = ('untrained', None) if row[0] == 'untrained' else ('trained solo', int(row[0].rsplit(' ', 1)[1]))
            strategy, tokens = row[1].split(', ')
            rec = next((r for r in base if r['team'] == team and r['seed'] == seed and r['strategy'] == strategy
                        and f"{r['max_completion_length']} tokens" == tokens), None)
            if rec is None: out.append(f"code table: no row {row[:2]} in {d.name}/baselines.json"); continue
            want = [f3(rec['reward']), f3(rec['pass@1'])]
        else:
            seed = int(row[0].rsplit(' ', 1)[1])
            run = d / job['seeds'][job['seed_values'].index(seed)]['run']
            want = [f3(held_out(run)[1]), f3(held_out(run, 'eval/pass@1')[1])]
        out += [f"code table, {row[0]} ({row[1]}), column {h!r}: README says {g}, {d.name} gives {w}"
                for h, g, w in zip(head[2:], row[2:], want) if g != w]
    return out


def _preset():
    from comlrl.presets import PRESETS
    return PRESETS['cpu']


def claims(res: Results) -> list:
    """(pattern with one group per number, what the numbers must be, where they come from) for numbers in README's sentences:
    a string must be the text README shows, a float its value."""
    magrpo, words = res.runs('MAGRPO'), lambda k: [held_out(r, k) for r in res.runs('MAGRPO')]
    algo = lambda label: res.tldr[label][0]
    all_rises = [mean(res.rises(l)) for l, (_, d) in res.tldr.items() if d.name != 'tldr_preference']  # the six RL trainers
    pref = [l for l, (_, d) in res.tldr.items() if d.name == 'tldr_preference']  # MADPO, MARLHF, MADPOIter
    job, base, _ = res.code()
    solo = next(r for r in base if r['team'] == 'untrained' and r['strategy'] == 'single' and r['max_completion_length'] == 128)
    lr2 = res.code('coophumaneval_5e-4')
    variants = json.loads((res.root / 'code_variants' / 'variants.json').read_text())
    tried = [r for r in variants if r['variant'] not in ('main', 'skeleton_syntax')]  # the variants of the main job, 3 seeds each
    macf = [r for r in variants if r['variant'] == 'macf']
    probe = {(r['style'], r['answers_from'] == 'greedy'): r for r in json.loads((res.root / 'code_variants' / 'prompt_probe.json').read_text())['rows']}
    count = lambda r, k: f"{round(r[k] * r['answers'])}"
    c = _preset().config_kwargs('tldr')
    rng = lambda xs: f'{round(min(xs))}–{round(max(xs))}'
    return [
        (r'The concise agent learns to write (\d+–\d+) words instead of (\d+) and the detailed one about (\d+)',
         [rng([a for _, a in words('eval/words_1')]), f"{round(words('eval/words_1')[0][0])}",
          f"{round(mean([a for _, a in words('eval/words_2')]))}"], 'tldr_algorithms/magrpo: eval/words_1, eval/words_2'),
        (r'Each run took about (\d+) minutes', [f"{round(mean(algo('MAGRPO')['minutes']))}"], 'tldr_algorithms/summary.json'),
        (r'with a peak of ([\d.]+) GiB', [f"{max(algo('MAGRPO')['peak_mib']) / 1024:.1f}"], 'tldr_algorithms/summary.json'),
        (r'The training curves start near ([\d.]+), above the held-out ([\d.]+)',
         [f'{mean([first_train_reward(r) for r in magrpo]):.1f}', f3(held_out(magrpo[0])[0])], 'tldr_algorithms/magrpo: reward, eval/reward'),
        (r'its CPU\s+minutes were (\d+–\d+) per run', [rng(algo('MACF')['cpu_minutes'])], 'tldr_macf/summary.json'),
        (r'their mean rises \(([+\-][\d.]+) to ([+\-][\d.]+)\)', [f'{min(all_rises):+.2f}', f'{max(all_rises):+.2f}'], 'the runs of tldr_algorithms and tldr_macf'),
        (r'preference trainers[^.]*?mean rises of ([+\-][\d.]+) to ([+\-][\d.]+)',
         [f'{min(mean(res.rises(l)) for l in pref):+.2f}', f'{max(mean(res.rises(l)) for l in pref):+.2f}'], 'the runs of tldr_preference'),
        (r'other jobs \(CPU minutes (\d+–\d+) per run\)', [rng([c for l in pref for c in algo(l)['cpu_minutes']])], 'tldr_preference/summary.json'),
        (r"IPPO's\s+critics half, and ([\d.]+) GiB of memory",
         [f"{(max(algo('IPPO')['peak_mib']) - max(algo('MAGRPO')['peak_mib'])) / 1024:.1f}"], 'tldr_algorithms/summary.json'),
        (r'one untrained agent alone scores ([\d.]+)', [f3(solo['reward'])], 'coophumaneval_main/baselines.json'),
        (r'\((\d+–\d+) CPU minutes per seed\)', [rng(job['cpu_minutes'])], 'coophumaneval_main/seeds.json'),
        (r'In all (\d+) of their seeds the trained main function\s+calls `aux` on (none) of the 16',
         [f'{len(tried)}', 'none' if not any(r['aux_used'] for r in tried) else 'some'], 'code_variants/variants.json'),
        (r'(none) of (\d+)\s+sampled answers under the reference\'s prompts, (\d+) of (\d+) under a prompt that shows a skeleton',
         ['none' if not probe['reference', False]['aux_used'] else 'some', f"{probe['reference', False]['answers']}",
          count(probe['skeleton', False], 'aux_used'), f"{probe['skeleton', False]['answers']}"], 'code_variants/prompt_probe.json'),
        (r'than one agent trained alone,\s+in (\d+) of (\d+) seeds \(a small margin: ([\d.]+)–([\d.]+) against ([\d.]+)–([\d.]+)\)',
         [f"{sum(r['tests'] > r['solo_tests'] for r in macf)}", f'{len(macf)}', f3(min(r['tests'] for r in macf)), f3(max(r['tests'] for r in macf)),
          f3(min(r['solo_tests'] for r in macf)), f3(max(r['solo_tests'] for r in macf))], 'code_variants/variants.json'),
        (r'one seed in three fell below one agent alone \(([\d.]+), ([\d.]+) and ([\d.]+)\)',
         [f3(held_out(lr2[2] / s['run'])[1]) for s in lr2[0]['seeds']], 'coophumaneval_5e-4'),
        (r'(\d+) MAGRPO steps of (\d+) posts × (\d+) samples per agent \((\d+) new tokens, learning rate ([\d.e-]+), temperature ([\d.]+)\)',
         [float(c[k]) for k in ('max_steps', 'per_device_train_batch_size', 'num_generations', 'max_completion_length',
                                'learning_rate', 'temperature')], "the cpu preset's TL;DR settings (comlrl.presets)"),
    ]


def check_claims(md: str, res: Results) -> list:
    text, out = re.sub(r'\s+', ' ', md), []
    for pattern, want, source in claims(res):
        m = re.search(re.sub(r'\\s\+', ' ', pattern), text)
        if m is None: out.append(f"README no longer says /{pattern}/: change the sentence and this check's CLAIMS together"); continue
        out += [f"README says {g!r} in {m[0]!r}, {source} gives {w!r}" for g, w in zip(m.groups(), want)
                if (float(g) != w if isinstance(w, float) else g != w)]
    return out


def check_quick_start(md: str) -> list:
    "The quick start's MAGRPOConfig and TLDREnv arguments are the cpu preset's settings of the main job."
    block = next((b for b in re.findall(r'```python\n(.*?)```', md, re.S) if 'TLDREnv(' in b and 'MAGRPOConfig(' in b), None)
    if block is None: return ["README's quick start (a python block with TLDREnv( and MAGRPOConfig() is not there"]
    calls = {n.func.id: {k.arg: ast.literal_eval(k.value) for k in n.keywords} for n in ast.walk(ast.parse(block))
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ('TLDREnv', 'MAGRPOConfig')}
    p, out = _preset(), []
    want = {k: v for k, v in p.config_kwargs('tldr').items() if k not in ('report_to', 'logging_steps', 'save_steps')}
    out += [f"quick start: MAGRPOConfig({k}={calls['MAGRPOConfig'].get(k, '(missing)')!r}), the main job uses {v!r}"
            for k, v in want.items() if calls['MAGRPOConfig'].get(k) != v]
    out += [f"quick start: TLDREnv({k}={calls['TLDREnv'].get(k, '(missing)')!r}), the main job uses {v!r}"
            for k, v in p.env_kwargs('tldr').items() if calls['TLDREnv'].get(k) != v]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--readme', default=str(ROOT / 'README.md'))
    ap.add_argument('--results', default=str(ROOT / 'benchmarks' / 'results'))
    args = ap.parse_args()
    md, res = Path(args.readme).read_text(encoding='utf-8'), Results(Path(args.results))
    bad = check_seeds_table(md, res) + check_comparison(md, res) + check_code_table(md, res) + check_claims(md, res) + check_quick_start(md)
    for b in bad: print(b)
    if bad: sys.exit(f"{len(bad)} number(s) in README.md differ from the committed results they quote: refill nbs/index.ipynb "
                     "(python tools/fill_outputs.py nbs/index.ipynb), fix its sentences, then python tools/make_readme.py")
    print(f"README.md: every checked number is the committed results' ({len(claims(res))} sentences, 3 tables, the quick start)")


if __name__ == '__main__':
    main()
