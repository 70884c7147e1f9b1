"""Fail when exported code imports a module that a later notebook exports. The notebooks read top to bottom in file
order (`nbs/*.ipynb` sorted by name, as nbdev lists them), so no exported cell should use what a later notebook
defines. Every import statement of an exported cell counts: at the top of the cell or inside a function (a lazy import
is a dependency too).

    python tools/check_notebook_order.py [nbs_dir]   # default: nbs
"""
import ast, re, sys
from pathlib import Path

from execnb.nbio import read_nb
from nbdev.process import extract_directives

PACKAGE = 'comlrl'
EXPORTS = {'export', 'exports', 'exporti'}

def _tree(source: str) -> ast.Module:
    "A cell's syntax tree; lines of notebook magics or shell commands (`%pip`, `!ls`) are left out if it has any."
    try: return ast.parse(source)
    except SyntaxError: return ast.parse('\n'.join('' if re.match(r'[%!]', l) else l for l in source.splitlines()))


def notebooks(nbs: Path) -> list:
    "The notebooks in reading order, without the ones nbdev skips (names starting with `_` or `.`)."
    return [p for p in sorted(nbs.glob('*.ipynb')) if not p.name.startswith(('_', '.'))]


def exported_cells(path: Path):
    "(cell index, cell id, module, source) of each exported code cell: `#| export [module]`, else the `default_exp`."
    cells, default = read_nb(path).cells, None
    for c in cells:
        if c.cell_type == 'code' and 'default_exp' in (d := extract_directives(c, remove=False)): default = d['default_exp'][0]
    for i, c in enumerate(cells):
        if c.cell_type != 'code': continue
        d = extract_directives(c, remove=False)
        if k := next(iter(EXPORTS & d.keys()), None):
            yield i, c.get('id', '?'), f"{PACKAGE}.{d[k][0] if d[k] else default}", c.source


def imported(source: str, # an exported cell's code
             module: str, # the module it is exported to (for relative imports)
            ) -> list: # (line, module) of each comlrl module an import statement names, anywhere in the cell
    out = []
    for n in ast.walk(_tree(source)):
        if isinstance(n, ast.Import): names = [a.name for a in n.names]
        elif isinstance(n, ast.ImportFrom):
            base = n.module or ''
            if n.level: base = '.'.join(module.split('.')[:-n.level] + ([base] if base else []))
            names = [base] + [f'{base}.{a.name}' for a in n.names]  # `from comlrl import sandbox`: a module too
        else: continue
        out += [(n.lineno, m) for m in names if m == PACKAGE or m.startswith(PACKAGE + '.')]
    return out


def violations(nbs: Path) -> list:
    "(notebook, cell index, cell id, line, imported module, the later notebook exporting it), in reading order."
    order = notebooks(nbs)
    owner = {}  # module -> index in `order` of the first notebook that exports to it
    for k, p in enumerate(order):
        for *_, mod, _ in exported_cells(p): owner.setdefault(mod, k)
    out = []
    for k, p in enumerate(order):
        for i, cid, mod, src in exported_cells(p):
            out += [(p.stem, i, cid, line, m, order[owner[m]].stem) for line, m in imported(src, mod) if owner.get(m, -1) > k]
    return out


def check(nbs: Path) -> list:
    "The complaints: one for each import of a module that a later notebook exports."
    return [f"{nb} cell {i} ({cid}) line {line}: imports {m}, which the later notebook {later} exports; move the code or "
            f"the import to the notebook that may use it" for nb, i, cid, line, m, later in violations(nbs)]


if __name__ == '__main__':
    bad = check(Path(sys.argv[1] if len(sys.argv) > 1 else 'nbs'))
    for b in bad: print(b)
    if bad: sys.exit(f'{len(bad)} problem(s) with the notebooks\' reading order (see {Path(__file__).name})')
