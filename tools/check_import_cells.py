"""Fail when a `#| slow` / `#| gpu` / `#| notest` cell imports something and also runs other code.

nbdev's docs processing (`nbdev.serve.proc_nbs`, run by `nbdev_docs` and in CI) executes every cell that imports
something, whatever its directives: a slow or GPU cell with an import in it would run in full while the docs are built
(on CI's CPU). Keep imports in their own cells (the `#| hide` cell at the top of each notebook).

    python tools/check_import_cells.py [notebooks]   # default: nbs/*.ipynb
"""
import ast, sys
from pathlib import Path

from execnb.nbio import read_nb
from nbdev.processors import _ast_contains
from nbdev.config import get_config
from nbdev.process import extract_directives

SHOW = {'export', 'exports', 'exporti', 'exec_doc'}
FLAGS = set(get_config().tst_flags.split())


def offenders(path: Path) -> list:
    out = []
    for i, cell in enumerate(read_nb(path).cells):
        if cell.cell_type != 'code' or not cell.source.strip() or 'nbdev_export(' in cell.source: continue
        dirs = extract_directives(cell, remove=False).keys()
        if SHOW & dirs or not FLAGS & dirs: continue
        src = '\n'.join(l for l in cell.source.splitlines() if not l.lstrip().startswith(('%', '!')))
        try: trees = [ast.parse(src)]
        except SyntaxError: continue
        if _ast_contains(trees, (ast.Import, ast.ImportFrom)) and _ast_contains(trees, (ast.Expr, ast.Assign)):
            out.append((i, cell.source.strip().splitlines()[0]))
    return out


if __name__ == '__main__':
    paths = [Path(p) for p in sys.argv[1:]] or sorted(Path('nbs').glob('*.ipynb'))
    bad = [(p, i, first) for p in paths for i, first in offenders(p)]
    for p, i, first in bad:
        print(f'{p}: cell {i} ({first}) imports and runs other code, so docs processing would run it: '
              'move its imports to the import cell')
    sys.exit(1 if bad else 0)
