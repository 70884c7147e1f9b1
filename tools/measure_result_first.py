"""How far down its page a notebook shows its real-task result: the seeds figure, the table and the before/after
completions (issue 39: within the first third).

The page is the notebook as nbdev's docs processing makes it (hidden cells dropped, `show_doc` rendered), processed
here into `_proc/` file by file (not with `nbdev_proc_nbs`, which also reinstalls the package). Quarto is not needed:
the page's height is estimated in text lines. A markdown line wraps every 110 characters, a shown code cell counts its
lines, a Markdown or plain output its lines, an HTML table each row as tall as its tallest cell (`check_outputs.height`),
and a figure its height in pixels scaled to an 800-pixel column, at 20 pixels a line. Characters (text only, figures
count none) are given as a second measure.

    python tools/measure_result_first.py                 # the pages of issue 39
    python tools/measure_result_first.py 11_magrpo       # some pages
    python tools/measure_result_first.py --max 0.333     # exit 1 when a page's result ends below that share
"""
import math, re, sys
from pathlib import Path

from execnb.nbio import read_nb
from nbdev.config import get_config

sys.path.insert(0, str(Path(__file__).parent))
from check_outputs import height

PAGES = ['10_mareinforce', '11_magrpo', '12_marloo', '13_maremax', '14_critics', '15_ippo', '16_counterfactual',
         '20_writing', '22_codegen']
WRAP, COLUMN_PX, LINE_PX = 110, 800, 20
MARKERS = {'figure': lambda c: any('image/png' in (o.get('data') or {}) for o in c.get('outputs', [])),  # the first figure
           'table': lambda c: re.search(r'\bseeds_table\(|seeds\.json', _text(c.source)),
           'completions': lambda c: re.search(r'\bbefore_after(_html)?\(|\bshow_pair\(', _text(c.source))}


def _text(x) -> str: return x if isinstance(x, str) else ''.join(x)


def _lines(text: str) -> int: return sum(max(1, math.ceil(len(l) / WRAP)) for l in text.splitlines())


def _png_lines(out) -> int:
    size = (out.get('metadata') or {}).get('image/png') or {}
    w, h = size.get('width', COLUMN_PX), size.get('height', 400)
    return math.ceil(h * min(1, COLUMN_PX / w) / LINE_PX)


def cell_size(cell) -> tuple:
    "(lines, characters) the processed `cell` takes on its page."
    src = _text(cell.source)
    if cell.cell_type == 'markdown': return _lines(src) + 1, len(src)
    if cell.cell_type == 'raw': return 3, 0  # the title block
    shown = [l for l in src.splitlines() if not l.startswith('#|')]
    echo = not re.search(r'^#\|\s*(echo:\s*false|output:\s*asis)', src, re.M)
    lines, chars = (len(shown) + 1, sum(map(len, shown))) if echo and shown else (0, 0)
    for o in cell.get('outputs', []):
        data = o.get('data') or {}
        if 'image/png' in data: lines += _png_lines(o)
        elif 'text/html' in data:
            t = _text(data['text/html']); lines += height(t, html=True); chars += len(re.sub(r'<[^>]+>', '', t))
        elif 'text/markdown' in data: t = _text(data['text/markdown']); lines += _lines(t); chars += len(t)
        elif 'text/plain' in data: t = _text(data['text/plain']); lines += _lines(t); chars += len(t)
        elif o.get('output_type') == 'stream': t = _text(o.get('text', '')); lines += _lines(t); chars += len(t)
    return lines, chars


def process(stem: str) -> Path:
    "The page as nbdev's docs processing makes it, in `_proc/`."
    import nbdev.serve, nbdev.serve_drv
    cfg = get_config()
    src, cache = cfg.nbs_path / f'{stem}.ipynb', cfg.config_path / '_proc'
    job = nbdev.serve._proc_file(src, cache, cfg.nbs_path)
    if job: nbdev.serve_drv.main(job)
    return cache / f'{stem}.ipynb'


def measure(path: Path) -> dict:
    "Share of the page's lines and characters above the end of each result marker's first cell (None: the page has none)."
    cells = read_nb(path).cells
    sizes = [cell_size(c) for c in cells]
    total_l, total_c = sum(s[0] for s in sizes), sum(s[1] for s in sizes)
    res = {'lines': total_l}
    for name, found in MARKERS.items():
        i = next((i for i, c in enumerate(cells) if c.cell_type == 'code' and c.get('outputs') and found(c)), None)
        res[name] = None if i is None else (sum(s[0] for s in sizes[:i + 1]) / total_l,
                                            sum(s[1] for s in sizes[:i + 1]) / total_c)
    return res


if __name__ == '__main__':
    args = sys.argv[1:]
    limit = float(args[args.index('--max') + 1]) if '--max' in args else None
    if '--max' in args: del args[args.index('--max'):args.index('--max') + 2]
    bad = []
    print(f"{'page':20} {'lines':>6}  end of figure / table / completions, share of lines (of characters)")
    for stem in args or PAGES:
        m = measure(process(stem))
        cols = ['   none    ' if m[k] is None else f'{m[k][0]:5.1%} ({m[k][1]:4.0%})' for k in MARKERS]
        ends = [m[k][0] if m[k] else 1.0 for k in MARKERS]
        print(f'{stem:20} {m["lines"]:6}  ' + ' / '.join(cols))
        if limit is not None and max(ends) > limit: bad.append(stem)
    if bad: sys.exit(f'result below {limit:.0%} of the page: {", ".join(bad)}')
