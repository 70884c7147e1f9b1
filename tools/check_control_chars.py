"""Fail when a notebook cell's source holds a control character (anything below U+0020 but the newline, and DEL).

They get there when LaTeX is written inside a Python string without `r''`: `'\\big'` becomes a backspace and `ig`,
`'\\approx'` a bell and `pprox`, `'\\text'` a tab and `ext`, so the formula renders broken. A tab in a source is
flagged too: notebooks indent with spaces, and a tab in LaTeX is always such an accident.

    python tools/check_control_chars.py [notebooks]   # default: nbs/*.ipynb
"""
import json, re
from pathlib import Path

from _check import run

CONTROL = re.compile(r'[\x00-\x09\x0b-\x1f\x7f]')
NAMES = {'\b': 'a backspace (\\b)', '\a': 'a bell (\\a)', '\t': 'a tab (\\t)', '\f': 'a form feed (\\f)',
         '\v': 'a vertical tab (\\v)', '\r': 'a carriage return (\\r)', '\x1b': 'an escape (\\x1b)'}


def offenders(path: Path) -> list:
    out = []
    for i, cell in enumerate(json.loads(path.read_text())['cells']):
        src = ''.join(cell['source'])
        for m in CONTROL.finditer(src):
            line = src.count('\n', 0, m.start()) + 1
            ch = m.group()
            name = NAMES.get(ch, f'U+{ord(ch):04X}')
            around = src[max(0, m.start() - 15):m.end() + 15]
            out.append(f"{path}: cell {i} ({cell['cell_type']}) line {line}: control character, {name}, "
                       f"in {around!r}: a LaTeX command written without a raw string? Write the backslash itself")
    return out


if __name__ == '__main__':
    run(offenders, 'nbs/*.ipynb', lambda n: f'{n} control character(s) in notebook sources',
        ok=lambda paths: f'{len(paths)} notebooks: no control characters')
