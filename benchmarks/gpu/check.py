"""The one-GPU check: every preset's path on CUDA and the speed job beside its anchors, in one unattended command.

    python benchmarks/gpu/check.py --out DIR            # on one GPU, at most about 8 minutes (--budget)
    python benchmarks/gpu/check.py --out DIR --quick    # a smoke run, at most about 3 minutes
    python benchmarks/gpu/check.py --out DIR --dry-run  # the same code on the CPU with tiny shapes (CI, under a minute)

Every part runs in its own process, so a part that fails or runs out of time is reported and the others go on:

- `machine`: the card, its driver and software, and the anchors measured here: the bf16 and fp16 matrix-product
  peak (8192³) and the device-to-device copy bandwidth;
- `preset-*`: each preset (`colab-t4`, `a100`) with MAGRPO and IPPO, two steps on TL;DR-shaped prompts with two LoRA
  agents on a random model of the preset's architecture (`comlrl_parts.preset_part`), run side by side in `--lanes`
  processes (they measure memory, not time);
- `speed-*`: the speed job, one run at a time (`common.speed_sizes`): comlrl (`comlrl_parts.speed_part`), TRL's
  `GRPOTrainer` (`trl_job.py`) and CoMLRL 1.4.3 (`ref_job.py`, installed apart: `--ref-site`).

Writes DIR/results.json (every part's raw result and the derived figures), DIR/results.md (the tables) and
DIR/check.log (each part's command, status and the end of its output). Exits 1 if a part failed or a check did not hold.
`benchmarks/gpu/README.md` says how to carry what the GPU machine lacks and what each figure means.
"""
import argparse, dataclasses, datetime, json, os, signal, subprocess, sys, tempfile, threading, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent  # the repository: comlrl's parts import this checkout's comlrl
sys.path.insert(0, str(HERE))


@dataclasses.dataclass(frozen=True)
class Part:
    "One process of the check: `target` names the function it runs (`run_part`), with `kwargs`."
    name: str
    group: str  # 'machine' (alone, first), 'preset' (side by side), 'speed' (one at a time)
    target: str  # 'machine', 'preset', 'comlrl', 'trl' or 'ref'
    kwargs: dict = dataclasses.field(default_factory=dict)
    modes: tuple = ('full', 'quick')  # the runs it belongs to ('full' also covers the dry run)
    label: str = ''  # how the tables name it


PARTS = [
    Part('machine', 'machine', 'machine'),
    *[Part(f'preset-{p}-{a}', 'preset', 'preset', dict(preset=p, algorithm=a), label=f'{p} {a.upper()}')
      for p in ('colab-t4', 'a100') for a in ('magrpo', 'ippo')],
    Part('speed-comlrl-2lora', 'speed', 'comlrl', dict(num_agents=2, lora=True, compiled=None, team_batch=True), ('full',),
         'comlrl, 2 LoRA agents (defaults on CUDA: compiled decoding, one batch for the team, the update in one pass)'),
    Part('speed-comlrl143-2full', 'speed', 'ref', modes=('full',), label='CoMLRL 1.4.3, 2 fully fine-tuned agents'),
    Part('speed-comlrl-2lora-peragent', 'speed', 'comlrl', dict(num_agents=2, lora=True, compiled=None, team_batch=False), ('full',),
         'comlrl, 2 LoRA agents, compiled, one generate call per agent'),
    Part('speed-comlrl-2lora-byagent', 'speed', 'comlrl', dict(num_agents=2, lora=True, compiled=None, team_update=False), ('full',),
         'comlrl, 2 LoRA agents, the update agent by agent (team_update=False)'),
    Part('speed-trl-1lora', 'speed', 'trl', label='TRL 1.16 GRPOTrainer, 1 LoRA agent'),
    Part('speed-comlrl-1lora', 'speed', 'comlrl', dict(num_agents=1, lora=True, compiled=None), ('full',),
         'comlrl, 1 LoRA agent (default decoding)'),
    Part('speed-comlrl-1lora-eager', 'speed', 'comlrl', dict(num_agents=1, lora=True, compiled=False), ('quick',),
         'comlrl, 1 LoRA agent, eager decoding'),
    Part('speed-comlrl-2full', 'speed', 'comlrl', dict(num_agents=2, lora=False, compiled=None), ('full',),
         'comlrl, 2 fully fine-tuned agents (default decoding)'),
    Part('speed-comlrl-2lora-eager', 'speed', 'comlrl', dict(num_agents=2, lora=True, compiled=False),
         label='comlrl, 2 LoRA agents, eager decoding'),
]
# seconds a part may take, at most (the budget may allow less). Measured on an H200 machine (2026-11-27): four preset parts
# side by side spent 130-175 s on their first step and 46-67 s on the second, mostly compiling, and none had finished at
# 300 s; the speed runs took 60-132 s each.
LIMITS = {'machine': 90, 'preset': 420, 'speed': 200}
MIN_START = 30  # a part starts only with at least this many seconds of the budget left


def parts_for(mode: str, only=None) -> list:
    "The parts of a 'full' (or dry) or 'quick' run, restricted to the names in `only` (a part's or a group's) when given."
    ps = [p for p in PARTS if mode in p.modes]
    if only:
        unknown = set(only) - {p.name for p in PARTS} - {p.group for p in PARTS}
        if unknown: raise SystemExit(f"--only names unknown parts {sorted(unknown)}; the parts are {[p.name for p in PARTS]}, "
                                     f"the groups {sorted({p.group for p in PARTS})}")
        ps = [p for p in ps if p.name in only or p.group in only]
    return ps


def run_part(part: Part, device: str, dry_run: bool, quick: bool) -> dict:
    "Run one part in this process and return its result (the child side of `launch`)."
    if part.target == 'machine':
        import machine
        return machine.run(device, dry_run)
    if part.target == 'preset':
        from comlrl_parts import preset_part
        return preset_part(device=device, dry_run=dry_run, quick=quick, **part.kwargs)
    if part.target == 'comlrl':
        from comlrl_parts import speed_part
        return speed_part(device=device, dry_run=dry_run, quick=quick, **part.kwargs)
    if part.target == 'trl':
        import trl_job
        return trl_job.run(device, dry_run, quick)
    raise ValueError(f"part {part.name} runs {part.target!r}, which has no function here (the reference runs ref_job.py)")


# ---- the orchestrator --------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Outcome:
    "What the orchestrator knows of a part once it ended (or never started)."
    status: str  # 'ok', 'check failed', 'failed', 'timed out', 'skipped', 'not run'
    seconds: float = 0.0
    result: dict = None
    why: str = ''  # the reason, or the end of the part's output
    command: str = ''


def command(part: Part, args, work: Path) -> tuple[list, dict]:
    "The command line and environment of `part`'s process."
    env = dict(os.environ, PYTHONUNBUFFERED='1', TOKENIZERS_PARALLELISM='false', HF_HUB_OFFLINE='1',
               TRANSFORMERS_NO_ADVISORY_WARNINGS='1')
    flags = ['--device', args.device] + (['--dry-run'] if args.dry_run else []) + (['--quick'] if args.quick else [])
    out = str(work / f'{part.name}.json')
    if part.target == 'ref':  # CoMLRL 1.4.3 first on the path, this checkout's comlrl nowhere on it
        path = [args.ref_site, str(HERE / 'stubs')] + [p for p in env.get('PYTHONPATH', '').split(os.pathsep) if p]
        env['PYTHONPATH'] = os.pathsep.join(p for p in path if Path(p).resolve() != ROOT)
        return [sys.executable, str(HERE / 'ref_job.py'), '--out', out] + flags, env
    env['PYTHONPATH'] = os.pathsep.join([str(ROOT)] + [p for p in env.get('PYTHONPATH', '').split(os.pathsep) if p])
    return [sys.executable, str(HERE / 'check.py'), '--part', part.name, '--work', str(work)] + flags, env


def launch(part: Part, args, work: Path, deadline: float, log: list) -> Outcome:
    "Run `part` in its own process (its own process group, killed whole at its time limit) and read its result."
    left = deadline - time.monotonic()
    if part.target == 'ref' and not (args.ref_site and Path(args.ref_site, 'comlrl').is_dir()):
        return Outcome('skipped', why="CoMLRL 1.4.3 is not installed apart: pass --ref-site DIR (or set COMLRL_REF_SITE) "
                                      "after pip install --no-deps --target DIR comlrl==1.4.3 (see benchmarks/gpu/README.md)")
    if left < MIN_START: return Outcome('not run', why=f'the budget had {max(left, 0):.0f} s left (--budget)')
    cmd, env = command(part, args, work)
    timeout = min(LIMITS[part.group], left)
    t = time.monotonic()
    with open(work / f'{part.name}.log', 'w') as f:
        p = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        try: rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL); p.wait(); rc = None
    secs = time.monotonic() - t
    tail = '\n'.join((work / f'{part.name}.log').read_text(errors='replace').splitlines()[-25:])
    log.append(f"== {part.name} ({secs:.0f} s, exit {rc})\n$ {' '.join(cmd)}\n{tail}\n")
    res_file = work / f'{part.name}.json'
    if rc is None: return Outcome('timed out', secs, why=f'killed after {timeout:.0f} s\n{tail}', command=' '.join(cmd))
    if rc != 0 or not res_file.is_file(): return Outcome('failed', secs, why=tail, command=' '.join(cmd))
    result = json.loads(res_file.read_text())
    ok = result.get('ok', True)
    return Outcome('ok' if ok else 'check failed', secs, result, command=' '.join(cmd))


def run_all(args, parts: list, work: Path) -> tuple[dict, list]:
    "Machine first and alone, then the presets side by side in `--lanes` processes, then the speed runs one at a time."
    deadline, outcomes, log = time.monotonic() + args.budget, {}, []
    def lane(queue: list):
        while queue:
            part = queue.pop(0)
            outcomes[part.name] = launch(part, args, work, deadline, log)
    for group, lanes in (('machine', 1), ('preset', args.lanes), ('speed', args.speed_lanes)):
        queue = [p for p in parts if p.group == group]
        threads = [threading.Thread(target=lane, args=(queue,)) for _ in range(max(1, min(lanes, len(queue))))]
        for th in threads: th.start()
        for th in threads: th.join()
    return outcomes, log


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog='\n'.join(__doc__.splitlines()[1:]))
    ap.add_argument('--out', help='folder for results.json, results.md and check.log')
    ap.add_argument('--quick', action='store_true', help='a smoke run: fewer speed runs, shorter samples, one timed step')
    ap.add_argument('--dry-run', action='store_true', help='tiny shapes on the CPU: the code path, not the numbers')
    ap.add_argument('--device', help="default: 'cuda' ('cpu' with --dry-run)")
    ap.add_argument('--budget', type=float, help='seconds for the whole check (default 480, quick 180, dry run 120)')
    ap.add_argument('--lanes', type=int, help='preset parts side by side (default 4: they measure memory, not time; dry run 2)')
    ap.add_argument('--speed-lanes', type=int, help='speed runs side by side (default 1: timings need the card alone; dry run 2)')
    ap.add_argument('--ref-site', default=os.environ.get('COMLRL_REF_SITE'), help='folder holding CoMLRL 1.4.3 (env COMLRL_REF_SITE)')
    ap.add_argument('--only', help='comma-separated part or group (machine, preset, speed) names')
    ap.add_argument('--part', help=argparse.SUPPRESS)  # the child side: run one part
    ap.add_argument('--work', help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.device = args.device or ('cpu' if args.dry_run else 'cuda')
    if args.part:
        from common import write_json
        part = next((p for p in PARTS if p.name == args.part), None)
        if part is None: raise SystemExit(f"unknown part {args.part!r}")
        write_json(Path(args.work) / f'{part.name}.json', run_part(part, args.device, args.dry_run, args.quick))
        return 0
    if not args.out: ap.error('--out is required')
    if args.device.startswith('cuda') and not args.dry_run:
        import torch
        if not torch.cuda.is_available(): raise SystemExit("no CUDA GPU here: run with --dry-run to check the code on the CPU")
    args.budget = args.budget or (120 if args.dry_run else 180 if args.quick else 480)
    args.lanes = args.lanes or (2 if args.dry_run else 4)
    args.speed_lanes = args.speed_lanes or (2 if args.dry_run else 1)
    mode = 'quick' if args.quick else 'full'
    parts = parts_for(mode, args.only.split(',') if args.only else None)
    out = Path(args.out); out.mkdir(parents=True, exist_ok=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as work:
        outcomes, log = run_all(args, parts, Path(work))
    import report
    meta = {'date': started.strftime('%Y-%m-%d %H:%M UTC'), 'mode': 'dry run' if args.dry_run else mode, 'device': args.device,
            'budget_seconds': args.budget, 'wall_seconds': round(time.monotonic() - t0, 1),
            'command': ' '.join(['python', 'benchmarks/gpu/check.py'] + (argv if argv is not None else sys.argv[1:]))}
    results = report.build(meta, parts, outcomes)
    (out / 'results.json').write_text(json.dumps(results, indent=1, default=float))
    (out / 'results.md').write_text(report.markdown(results))
    (out / 'check.log').write_text('\n'.join(log))
    print(report.markdown(results))
    return 0 if all(o.status in ('ok', 'skipped') for o in outcomes.values()) and len(outcomes) == len(parts) else 1


if __name__ == '__main__': sys.exit(main())
