"""Fail when an exported notebook cell is longer than 60 lines: grow a class cell by cell (fastcore's `@patch`), keep
each exported cell short enough to read next to its tests.

    python tools/check_cell_size.py [notebooks]   # default: nbs/*.ipynb
"""
from pathlib import Path

from execnb.nbio import read_nb
from nbdev.process import extract_directives

from _check import run

MAX_LINES = 60
EXPORTS = {'export', 'exports', 'exporti'}


def offenders(path: Path) -> list:
    out = []
    for i, cell in enumerate(read_nb(path).cells):
        if cell.cell_type != 'code' or not EXPORTS & extract_directives(cell, remove=False).keys(): continue
        n = len(cell.source.splitlines())
        if n > MAX_LINES: out.append(f'{path.name} cell {i} ({cell.get("id", "?")}): {n} lines')
    return out


if __name__ == '__main__':
    run(offenders, 'nbs/*.ipynb', lambda n: f'{n} exported cell(s) over {MAX_LINES} lines: split them (fastcore.basics.patch grows a class cell by cell)')
