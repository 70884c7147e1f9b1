"""Write README.md from nbs/index.ipynb: an offline stand-in for `nbdev_readme`, which needs Quarto.

Markdown cells are copied as they are. A code cell is shown with its saved text outputs unless its directives hide it
(`#| hide`, `#| export`, `#| exporti`, `#| include: false`); `#| echo: false` shows only the outputs.

    python tools/make_readme.py           # rewrite README.md
    python tools/make_readme.py --check   # exit 1 if README.md is not what nbs/index.ipynb makes
"""
import argparse, difflib, re, sys
from pathlib import Path

from execnb.nbio import read_nb
from nbdev.config import get_config
from nbdev.process import extract_directives

HIDING = {'hide', 'export', 'exporti', 'exports'}


def _outputs(cell) -> str:
    "The text a reader sees under a code cell: streams and text/plain results, in order."
    parts = []
    for o in cell.get('outputs', []):
        if o.get('output_type') == 'stream': parts.append(''.join(o['text']))
        elif 'text/plain' in o.get('data', {}): parts.append(''.join(o['data']['text/plain']))
    text = ''.join(p if p.endswith('\n') else p + '\n' for p in parts).rstrip('\n')
    return f'```\n{text}\n```' if text else ''


def _code(cell) -> str:
    dirs = extract_directives(cell, remove=True)
    if HIDING & dirs.keys() or dirs.get('include:', [''])[0] == 'false': return ''
    src = cell['source'].strip()
    shown = [] if dirs.get('echo:', [''])[0] == 'false' or not src else [f'```python\n{src}\n```']
    return '\n\n'.join(shown + [o for o in [_outputs(cell)] if o])


def _relink(md: str, nb_path: Path) -> str:
    "Links and images relative to the notebook (`[x](11_magrpo.ipynb)`, `![](images/x.png)`) made relative to the repository root, where README is."
    folder = nb_path.parent.name
    return re.sub(r'(!?\[[^\]]*\]\()(?![a-z]+://|/|#)([^)]+\))', lambda m: f'{m[1]}{folder}/{m[2]}', md)


def render(nb_path: Path) -> str:
    "README text for the notebook at `nb_path`."
    nb = read_nb(nb_path)
    blocks = [f'<!-- generated from {nb_path.name} by tools/make_readme.py: edit the notebook, not this file -->']
    for cell in nb.cells:
        text = _relink(cell['source'].strip(), nb_path) if cell['cell_type'] == 'markdown' else _code(cell)
        if text: blocks.append(text)
    return '\n\n'.join(blocks) + '\n'


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--check', action='store_true', help='fail if README.md differs from what the notebook makes')
    args = ap.parse_args()
    cfg = get_config()
    nb_path, readme = cfg.nbs_path / cfg.readme_nb, cfg.config_path / 'README.md'
    new = render(nb_path)
    if not args.check:
        readme.write_text(new, encoding='utf-8')
        return
    old = readme.read_text(encoding='utf-8') if readme.exists() else ''
    if old != new:
        sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), 'README.md', 'from ' + nb_path.name))
        sys.exit(f'README.md is out of step with {nb_path}: run `python tools/make_readme.py` and commit')


if __name__ == '__main__': main()
