"""Write README.md from nbs/index.ipynb: an offline stand-in for `nbdev_readme`, which needs Quarto.

Markdown cells are copied as they are. A code cell is shown with its saved outputs unless its directives hide it
(`#| hide`, `#| export`, `#| exporti`, `#| include: false`); `#| echo: false` shows only the outputs. Text goes in a
code block, Markdown and HTML results as they are (GitHub renders both), and figures are written where Quarto's
`nbdev_readme` puts them, `index_files/figure-commonmark/cell-<i>-output-<j>.png` beside README.md, and linked.

    python tools/make_readme.py           # rewrite README.md
    python tools/make_readme.py --check   # exit 1 if README.md is not what nbs/index.ipynb makes
"""
import argparse, base64, difflib, re, sys
from pathlib import Path

from execnb.nbio import read_nb
from nbdev.config import get_config
from nbdev.process import extract_directives

HIDING = {'hide', 'export', 'exporti', 'exports'}
FIGURES = Path('index_files') / 'figure-commonmark'  # relative to README.md, as nbdev_readme writes them


def _outputs(cell, i: int, figures: dict) -> str:
    """What a reader sees under code cell `i`, in order: streams and plain-text results in a code block; Markdown and HTML
    results (a table, a side-by-side view) as they are, since GitHub renders both in a README; figures as image links
    (their bytes added to `figures`, by path)."""
    blocks, text = [], []
    def flush():
        t = ''.join(p if p.endswith('\n') else p + '\n' for p in text).rstrip('\n')
        if t: blocks.append(f'```\n{t}\n```')
        text.clear()
    for j, o in enumerate(cell.get('outputs', []), 1):
        data = o.get('data', {})
        if o.get('output_type') == 'stream': text.append(''.join(o['text']))
        elif 'image/png' in data:
            path = FIGURES / f'cell-{i}-output-{j}.png'
            figures[path] = base64.b64decode(''.join(data['image/png']))
            flush(); blocks.append(f'![]({path.as_posix()})')
        elif 'text/markdown' in data or 'text/html' in data:
            flush(); blocks.append(''.join(data.get('text/markdown') or data['text/html']).strip())
        elif 'text/plain' in data: text.append(''.join(data['text/plain']))
    flush()
    return '\n\n'.join(blocks)


def _code(cell, i: int, figures: dict) -> str:
    dirs = extract_directives(cell, remove=True)
    if HIDING & dirs.keys() or dirs.get('include:', [''])[0] == 'false': return ''
    src = cell['source'].strip()
    shown = [] if dirs.get('echo:', [''])[0] == 'false' or not src else [f'```python\n{src}\n```']
    return '\n\n'.join(shown + [o for o in [_outputs(cell, i, figures)] if o])


def _relink(md: str, nb_path: Path) -> str:
    "Links and images relative to the notebook (`[x](11_magrpo.ipynb)`, `![](images/x.png)`) made relative to the repository root, where README is."
    folder = nb_path.parent.name
    return re.sub(r'(!?\[[^\]]*\]\()(?![a-z]+://|/|#)([^)]+\))', lambda m: f'{m[1]}{folder}/{m[2]}', md)


def render(nb_path: Path) -> tuple[str, dict]:
    "README text for the notebook at `nb_path`, and its figures ({path relative to README: PNG bytes})."
    nb, figures = read_nb(nb_path), {}
    blocks = [f'<!-- generated from {nb_path.name} by tools/make_readme.py: edit the notebook, not this file -->']
    for i, cell in enumerate(nb.cells):
        text = _relink(cell['source'].strip(), nb_path) if cell['cell_type'] == 'markdown' else _code(cell, i, figures)
        if text: blocks.append(text)
    return '\n\n'.join(blocks) + '\n', figures


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--check', action='store_true', help='fail if README.md differs from what the notebook makes')
    args = ap.parse_args()
    cfg = get_config()
    nb_path, readme = cfg.nbs_path / cfg.readme_nb, cfg.config_path / 'README.md'
    new, figures = render(nb_path)
    root = cfg.config_path
    stale = sorted(p for p in (root / FIGURES).glob('*.png') if p.relative_to(root) not in figures) if (root / FIGURES).is_dir() else []
    if not args.check:
        readme.write_text(new, encoding='utf-8')
        for p in stale: p.unlink()
        for path, data in figures.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(data)
        return
    old = readme.read_text(encoding='utf-8') if readme.exists() else ''
    if old != new:
        sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), 'README.md', 'from ' + nb_path.name))
        sys.exit(f'README.md is out of step with {nb_path}: run `python tools/make_readme.py` and commit')
    wrong = [str(p) for p, data in figures.items() if not (root / p).is_file() or (root / p).read_bytes() != data] + [str(p) for p in stale]
    if wrong: sys.exit(f"README's figures are out of step with {nb_path} ({', '.join(wrong)}): run `python tools/make_readme.py` and commit")


if __name__ == '__main__': main()
