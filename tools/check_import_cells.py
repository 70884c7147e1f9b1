"""Fail when a cell that nbdev's docs processing executes does more than import and define.

nbdev's docs processing (`nbdev.serve.proc_nbs`, run by `nbdev_docs` and in CI) executes, whatever their directives
(`#| slow` and `#| gpu` too), the exported cells and every cell that imports something or calls `show_doc` at its top
level (`nbdev.processors._do_eval`). Everything else keeps its saved output. So a cell that imports and then trains,
loads a model or reads data would run while the docs are built: the page would show its fresh output (progress bars,
warnings, the build machine's paths) and the build would fail without the offline data. Keep imports in their own
cells (the `#| hide` cell at the top of each notebook, or one at the start of a section), and the code that runs in
cells without imports.

A cell that imports passes when it holds imports only (nbdev warns "Found cells containing imports and other code"
otherwise, even for a function definition); a cell that calls `show_doc` when it holds nothing but `show_doc(...)` calls
and definitions.

    python tools/check_import_cells.py [notebooks]   # default: nbs/*.ipynb
"""
import ast, sys
from pathlib import Path

from execnb.nbio import read_nb
from nbdev.processors import _ast_contains, _show_docs
from nbdev.process import extract_directives

SHOW = {'export', 'exports', 'exporti', 'exec_doc'}
IMPORT = (ast.Import, ast.ImportFrom)
DEFINE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _skips_showdoc(nb) -> bool:
    "The notebook's front matter says `skip_showdoc: true`: docs processing executes none of its cells."
    first = nb.cells[0] if nb.cells else None
    return first is not None and first.cell_type == 'raw' and 'skip_showdoc: true' in first.source


def offenders(path: Path) -> list:
    nb = read_nb(path)
    if _skips_showdoc(nb): return []
    out = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != 'code' or not cell.source.strip() or 'nbdev_export(' in cell.source: continue
        dirs = extract_directives(cell, remove=False)
        if SHOW & dirs.keys() or dirs.get('eval:', [''])[0].lower() == 'false': continue
        src = '\n'.join(l for l in cell.source.splitlines() if not l.lstrip().startswith(('%', '!')))
        try: tree = ast.parse(src)
        except SyntaxError: continue
        if _ast_contains([tree], IMPORT): runs = [n for n in tree.body if not isinstance(n, IMPORT)]
        elif _show_docs(tree.body): runs = [n for n in tree.body if not isinstance(n, DEFINE) and not _show_docs([n])]
        else: continue
        if runs: out.append((i, src.splitlines()[runs[0].lineno - 1].strip()))
    return out


if __name__ == '__main__':
    paths = [Path(p) for p in sys.argv[1:]] or sorted(Path('nbs').glob('*.ipynb'))
    bad = [(p, i, line) for p in paths for i, line in offenders(p)]
    for p, i, line in bad:
        print(f'{p}: cell {i} imports something (or calls show_doc), so docs processing runs all of it, including '
              f'`{line}`: move its imports to an import cell of their own (and show_doc calls to their own cell)')
    sys.exit(1 if bad else 0)
