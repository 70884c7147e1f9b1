"""Fail when an exported notebook cell is longer than 120 lines: grow a class cell by cell (fastcore's `@patch`), keep
each exported cell short enough to read next to its tests.

    python tools/check_cell_size.py [notebooks]   # default: nbs/*.ipynb
"""
import sys
from pathlib import Path

from execnb.nbio import read_nb
from nbdev.process import extract_directives

MAX_LINES = 120
EXPORTS = {'export', 'exports', 'exporti'}


def offenders(path: Path) -> list:
    out = []
    for i, cell in enumerate(read_nb(path).cells):
        if cell.cell_type != 'code' or not EXPORTS & extract_directives(cell, remove=False).keys(): continue
        n = len(cell.source.splitlines())
        if n > MAX_LINES: out.append(f'{path.name} cell {i} ({cell.get("id", "?")}): {n} lines')
    return out


if __name__ == '__main__':
    paths = [Path(p) for p in sys.argv[1:]] or sorted(Path('nbs').glob('*.ipynb'))
    bad = [o for p in paths for o in offenders(p)]
    for o in bad: print(o)
    if bad: sys.exit(f'{len(bad)} exported cell(s) over {MAX_LINES} lines: split them (fastcore.basics.patch grows a class cell by cell)')
