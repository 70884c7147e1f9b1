"""Run notebooks top to bottom and save their outputs, skipping the cells nbdev_test skips (tst_flags, `#| eval: false`).

Outputs are what the rendered docs and README show, so keep the ones that teach. Warnings and progress bars written to
stderr are dropped; comlrl's own log lines (`[comlrl] ...`, what the library decided for the user) are kept. Run
`nbdev_clean` afterwards.

    OMP_NUM_THREADS=1 python tools/fill_outputs.py nbs/02_generation.ipynb [more notebooks]
    OMP_NUM_THREADS=1 python tools/fill_outputs.py --slow nbs/15_ippo.ipynb   # also run `#| slow` cells (minutes)
"""
import os, sys
from pathlib import Path

from execnb.nbio import read_nb, write_nb
from execnb.shell import CaptureShell
from nbdev.config import get_config
from nbdev.process import extract_directives

SKIP = set(get_config().tst_flags.split())


def _skip(cell) -> bool:
    if cell.cell_type != 'code': return True
    d = extract_directives(cell, remove=False)
    return bool(SKIP & d.keys()) or d.get('eval:', [''])[0].lower() == 'false' or 'nbdev_export(' in cell.source


def _keep(out):
    "An output without stderr's lines other than comlrl's log lines (None when nothing is left)."
    if not (out.get('output_type') == 'stream' and out.get('name') == 'stderr'): return out
    text = out['text'] if isinstance(out['text'], str) else ''.join(out['text'])
    lines = [l[l.index('[comlrl] '):] for l in text.splitlines(keepends=True) if '[comlrl] ' in l]  # (after a bar's \r)
    return {**out, 'text': ''.join(lines)} if lines else None


def fill(path: Path):
    path = path.resolve()
    os.chdir(path.parent)
    CaptureShell().execute(path, path, exc_stop=True, preproc=_skip)
    nb = read_nb(path)
    for c in nb.cells:
        if c.cell_type == 'code': c.outputs = [o for o in map(_keep, c.get('outputs', [])) if o is not None]
    write_nb(nb, path)


if __name__ == '__main__':
    args = sys.argv[1:]
    if '--slow' in args: args.remove('--slow'); SKIP.discard('slow')
    for f in [Path(a).resolve() for a in args]: fill(f); print('filled', f.name)
