"""What a benchmark keeps of its runs for the pages to show: the small files they read, copied into
benchmarks/results/<name>/ with a MANIFEST listing them (`results_dir` in nbs/09_results.ipynb downloads what it lists
when there is no checkout). The agents' weights are not kept."""
import json, shutil
from pathlib import Path

KEPT = ('metrics.jsonl', 'eval_completions.jsonl', 'run.json')


def keep_run(run_dir: Path, dest: Path, rel: str) -> list[str]:
    "Copy a run's `KEPT` files into dest/rel/, with its machine paths taken out of run.json; the paths copied, relative to dest."
    d = dest / rel
    d.mkdir(parents=True, exist_ok=True)
    for name in KEPT:
        src = Path(run_dir) / name
        if not src.is_file(): raise FileNotFoundError(f"{src} is missing: the run did not finish, or predates save_eval_completions")
        if name == 'run.json':
            info = json.loads(src.read_text())
            info['config']['output_dir'] = rel
            (d / name).write_text(json.dumps(info, indent=1) + '\n')
        else: shutil.copyfile(src, d / name)
    return [f'{rel}/{n}' for n in KEPT]


ROOT = Path(__file__).resolve().parents[1]


def command_line(script: str, argv: list[str]) -> str:
    "How a script was run, with the repository's own paths relative to it (a committed file names no machine's folders)."
    return ' '.join(['python', f'benchmarks/{script}', *argv]).replace(str(ROOT) + '/', '')


def write_manifest(dest: Path, files: list[str], command: str):
    "dest/MANIFEST: the command that wrote the results, then one file per line."
    (dest / 'MANIFEST').write_text('\n'.join([f'# written by {command}', *files]) + '\n')
