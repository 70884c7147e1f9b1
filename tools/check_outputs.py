"""Fail when a saved notebook output would read badly on the rendered page: longer than 40 lines, or holding a
traceback, a progress bar, a warning, or a path of the machine that ran it.

The docs show the outputs saved in the notebooks (nbdev does not re-run them), so what a cell printed while it was
filled is what every reader sees. Keep outputs compact (a small table or a figure, not a per-step dump), and write
them without machine paths: show a path relative to the repository, or not at all.

    python tools/check_outputs.py [notebooks]   # default: nbs/*.ipynb
    python tools/check_outputs.py --docs _proc/*.ipynb   # the pages as docs processing made them (see below)

With `--docs`, the notebooks are the output of nbdev's docs processing (`_proc/`), whose `show_doc` cells hold the API
reference it just rendered: those may be longer than 40 lines (a config's table of fields), and are checked for the rest.
"""
import re, sys
from pathlib import Path

from execnb.nbio import read_nb

from _check import run

MAX_LINES = 40
CHECKS = [  # (what is wrong, pattern over an output's text)
    ('a traceback', re.compile(r'Traceback \(most recent call last\)')),
    ('a progress bar', re.compile(r'\d+%\|[^|\n]*\||\d+(\.\d+)?(it|s)/(s|it)\]|[█▏▎▍▌▋▊▉]{2}')),
    ('a warning', re.compile(r'Warning\b')),
    ('a machine path', re.compile(r'(?<![\w.~-])(/home/|/root/|/work/|/Users/|/var/folders/)|[A-Za-z]:\\Users\\|'
                                  r'site-packages|/tmp/tmp\w{6,}')),  # home and work folders, installs, tempfile's folders
]
RICH = ('text/markdown', 'text/html', 'text/plain')  # what a page shows of a result, richest first


def _text(x) -> str: return x if isinstance(x, str) else ''.join(x)


def height(text: str, html: bool = False) -> int:
    "Lines the page shows: for an HTML table, each row as tall as its tallest cell (cells stand side by side)."
    rows = re.findall(r'<tr\b.*?</tr>', text, re.S) if html else []
    if not rows: return len(text.splitlines())
    outside = re.sub(r'<table\b.*?</table>', '', text, flags=re.S)
    return sum(max([c.count('\n') + 1 for c in re.findall(r'<t[dh]\b.*?</t[dh]>', r, re.S)] or [1]) for r in rows) + len(outside.split())


def shown(out) -> str:
    "The text of an output that the page shows: a stream, an error, or a result's richest text form ('' for an image)."
    kind = out.get('output_type')
    if kind == 'stream': return _text(out.get('text', ''))
    if kind == 'error': return 'Traceback (most recent call last)\n' + '\n'.join(out.get('traceback', []))
    data = out.get('data', {})
    if any(k.startswith('image/') for k in data): return ''
    return next((_text(data[k]) for k in RICH if k in data), '')


def offenders(path: Path, docs: bool = False) -> list:
    bad = []
    for i, cell in enumerate(read_nb(path).cells):
        if cell.cell_type != 'code': continue
        outs = cell.get('outputs', [])
        texts = [shown(o) for o in outs]
        where = f'{path.name} cell {i} ({cell.get("id", "?")})'
        if any(o.get('output_type') == 'error' for o in outs): bad.append(f'{where}: an error output')
        is_html = lambda o: 'text/html' in o.get('data', {}) and 'text/markdown' not in o.get('data', {})
        n = sum(height(t, is_html(o)) for o, t in zip(outs, texts))
        reference = docs and 'show_doc(' in cell.source
        if n > MAX_LINES and not reference: bad.append(f'{where}: {n} lines of output (at most {MAX_LINES}: show a table or a figure)')
        text = '\n'.join(texts)
        for why, pat in CHECKS:
            if m := pat.search(text): bad.append(f'{where}: {why}: {text[max(0, m.start() - 30):m.end() + 30]!r}')
    return bad


if __name__ == '__main__':
    args = sys.argv[1:]
    docs = '--docs' in args
    run(lambda p: offenders(p, docs), 'nbs/*.ipynb', lambda n: f'{n} saved output(s) the docs would show badly: re-run the '
        'cell so it prints less (tools/fill_outputs.py), or clear its output', args=[a for a in args if a != '--docs'])
