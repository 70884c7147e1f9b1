"""ARCHITECTURE.md's rooms are the package's: every module sits in one room, every `comlrl` import in the source points to
its own room or an earlier one, and importing the rooms in order, in a fresh process, never loads a module of a later
room (but the one exception the page names)."""
import ast, json, re, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / 'ARCHITECTURE.md').read_text()


def _table(heading: str) -> list[list[str]]:
    "The rows of the markdown table under `heading`, as lists of cells (header and rule dropped)."
    part = PAGE.split(heading, 1)[1].split('\n## ', 1)[0]
    rows = [[c.strip() for c in l.strip().strip('|').split('|')] for l in part.splitlines() if l.startswith('|')]
    return rows[2:]


def _modules(cell: str) -> list[str]: return re.findall(r'`([\w.*]+)`', cell)


ROOMS = [(room, _modules(mods)) for room, mods in _table('## The rooms')]
RANK = {m: i for i, (_, mods) in enumerate(ROOMS) for m in mods}
EXCEPTION = {'comlrl.trainers', 'comlrl.reference', 'comlrl.reference.trainers'}  # what the algorithms' package loads


def _package_modules() -> list[str]:
    out = []
    for p in sorted((ROOT / 'comlrl').rglob('*.py')):
        parts = p.relative_to(ROOT).with_suffix('').parts
        out.append('.'.join(parts[:-1] if parts[-1] == '__init__' else parts))
    return out


def _imports(module: str) -> set[str]:
    "The comlrl modules a module's source imports (absolute or relative, at any depth of the file)."
    path = ROOT / Path(*module.split('.'))
    path = path / '__init__.py' if path.is_dir() else path.with_suffix('.py')
    package = module if path.name == '__init__.py' else module.rsplit('.', 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level: base = '.'.join(package.split('.')[:len(package.split('.')) - node.level + 1] + ([node.module] if node.module else []))
            else: base = node.module or ''
            names = [f'{base}.{a.name}' for a in node.names]
            out |= {n for n in names if n in RANK} or ({base} if base.startswith('comlrl') else set())
        elif isinstance(node, ast.Import): out |= {a.name for a in node.names if a.name.startswith('comlrl')}
    return out


def test_the_exception_is_the_one_on_the_page():
    row, = _table('## The one exception')
    assert set(_modules(row[1])) == EXCEPTION - {'comlrl.reference'}


def test_every_module_is_in_one_room():
    listed = [m for _, mods in ROOMS for m in mods]
    assert len(listed) == len(set(listed)), 'a module is in two rooms'
    assert set(listed) == set(_package_modules()), (sorted(set(_package_modules()) - set(listed)), sorted(set(listed) - set(_package_modules())))


def test_every_import_points_up_the_table():
    for m in _package_modules():
        for dep in _imports(m):
            dep = dep if dep in RANK else dep.rsplit('.', 1)[0]  # `from comlrl.x import name`
            assert RANK[dep] <= RANK[m], f"{m} ({ROOMS[RANK[m]][0]}) imports {dep} ({ROOMS[RANK[dep]][0]}), a later room"


def test_importing_the_rooms_in_order_loads_no_later_room():
    script = """
import importlib, json, sys
rooms = json.loads(sys.argv[1]); rank = {m: i for i, ms in enumerate(rooms) for m in ms}
for i, ms in enumerate(rooms):
    for m in ms:
        before = set(sys.modules)
        importlib.import_module(m)  # what this import loaded, of a room after the module's own:
        later = sorted(k for k in set(sys.modules) - before if k.startswith('comlrl') and rank.get(k, -1) > i)
        if later: print(json.dumps([m, later]))
"""
    r = subprocess.run([sys.executable, '-c', script, json.dumps([mods for _, mods in ROOMS])], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    for line in r.stdout.splitlines():
        m, later = json.loads(line)
        assert m.startswith('comlrl.trainers.') and set(later) <= EXCEPTION, f"importing {m} loads {later}, from a later room"
