"""Fail when exported definitions are not tested right below them, or a public name is tested nowhere.

A notebook reads like fastcore's `01_basics`: an exported cell defines one thing and the cell after it shows that it
works. Here an exported cell that defines public names (functions, classes, constants, and `@patch` methods, named
by the method) is *tested below* when the code cells after it, up to the next exported cell, use every one of those
names (show_doc lines do not count). The check fails when

- fewer than `MIN_ADJACENT` of those exported cells are tested below (the report lists the others), or
- a public name is used by no test at all: no notebook's non-exported code cell and no file in tests/ names it,
  except the names in `ALLOWED`, each with its reason.

    python tools/check_tests_adjacent.py            # every notebook; prints the share and what is missing
    python tools/check_tests_adjacent.py --list     # also every exported cell not tested below
"""
import ast, re, sys
from pathlib import Path

from execnb.nbio import read_nb
from nbdev.process import extract_directives

MIN_ADJACENT = 0.65
EXPORTS = {'export', 'exports', 'exporti'}
ALLOWED: dict[str, str] = {  # public names no test uses, and why that is right
}
WORD = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')


def _code(cell) -> str:
    "The cell's code without nbdev directives, IPython magics, shell lines or show_doc calls."
    keep = [l for l in cell.source.splitlines() if not l.lstrip().startswith(('#|', '%', '!', 'show_doc('))]
    return '\n'.join(keep)


def defined(source: str) -> list[str]:
    "The public names an exported cell defines: top-level functions, classes and assignments, and `@patch` methods."
    try: tree = ast.parse(source)
    except SyntaxError: return []
    out = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)): names = [node.name]
        elif isinstance(node, ast.Assign): names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name): names = [node.target.id]
        else: names = []
        out += [n for n in names if not n.startswith('_')]
    return out


def used(source: str) -> set[str]:
    "Every identifier a cell's code names (a name, an attribute, a keyword argument: what running it exercises)."
    return set(WORD.findall(source))


def cells(path: Path) -> list[tuple[bool, str, str]]:
    "(exported, code, id) for every code cell of a notebook."
    out = []
    for c in read_nb(path).cells:
        if c.cell_type != 'code': continue
        out.append((bool(EXPORTS & extract_directives(c, remove=False).keys()), _code(c), c.get('id', '?')))
    return out


def adjacency(path: Path) -> tuple[list, list]:
    "(tested below, not tested below): per exported cell defining public names, (notebook, cell id, names, untested names)."
    cs, good, bad = cells(path), [], []
    for i, (exported, code, cid) in enumerate(cs):
        names = defined(code) if exported else []
        if not names: continue
        below = set()
        for e, c, _ in cs[i + 1:]:
            if e: break
            below |= used(c)
        missing = [n for n in names if n not in below]
        (bad if missing else good).append((path.name, cid, names, missing))
    return good, bad


def untested(paths: list, tests: list) -> dict[str, str]:
    "Public names defined by exported cells that no test names: name -> the notebook defining it."
    names, uses = {}, set()
    for p in paths:
        for exported, code, _ in cells(p):
            if exported: names.update((n, p.name) for n in defined(code))
            else: uses |= used(code)
    for t in tests: uses |= used(t.read_text())
    return {n: nb for n, nb in names.items() if n not in uses and n not in ALLOWED}


def main(argv: list) -> int:
    listing = '--list' in argv
    paths = [Path(a) for a in argv if not a.startswith('--')] or sorted(Path('nbs').glob('*.ipynb'))
    good, bad = [], []
    for p in paths:
        g, b = adjacency(p)
        good += g; bad += b
    share = len(good) / (len(good) + len(bad)) if good or bad else 1.0  # a notebook that exports nothing has nothing to test
    missing = untested(paths, sorted(Path('tests').glob('*.py')))
    if listing:
        for nb, cid, names, miss in bad: print(f'{nb} cell {cid}: not tested below: {", ".join(miss)}')
    for n, nb in sorted(missing.items(), key=lambda x: (x[1], x[0])): print(f'{nb}: {n} is used by no test')
    print(f'{len(good)} of {len(good) + len(bad)} exported cells ({share:.0%}) are tested below them (at least {MIN_ADJACENT:.0%})')
    fail = []
    if share < MIN_ADJACENT: fail.append(f'only {share:.0%} of exported cells are tested below them: move each test up under '
                                         'the definition it checks (--list names the others)')
    if missing: fail.append(f'{len(missing)} public name(s) are used by no test: test them, or add them to ALLOWED with the reason')
    if fail: print('\n'.join(fail), file=sys.stderr)
    return 1 if fail else 0


if __name__ == '__main__': sys.exit(main(sys.argv[1:]))
