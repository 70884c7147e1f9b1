"""Extract the public API of the reference library CoMLRL (`comlrl==1.4.3` on PyPI) from its wheel, as data.

The compatibility layer (`nbs/51_compat.ipynb` and the reference's module paths it serves) is tested against this
file: every module path, every public name, every config field with its default, every trainer's constructor
arguments and public methods. The wheel is read with `ast`, never imported, so none of its dependencies are needed.

    python tools/reference_api.py                  # pip-downloads the wheel, writes tests/data/comlrl-1.4.3-api.json
    python tools/reference_api.py --wheel W.whl    # from a wheel already on disk
    python tools/reference_api.py --check          # exit 1 if the committed file differs from what the wheel gives
"""
import argparse, ast, hashlib, json, subprocess, sys, tempfile, zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSION = '1.4.3'
OUT = ROOT / 'tests' / 'data' / f'comlrl-{VERSION}-api.json'


def download_wheel(dest: Path) -> Path:
    "The reference's wheel, fetched with pip (its dependencies are not)."
    subprocess.run([sys.executable, '-m', 'pip', 'download', f'comlrl=={VERSION}', '--no-deps', '--only-binary=:all:',
                    '-q', '-d', str(dest)], check=True)
    return next(dest.glob(f'comlrl-{VERSION}-*.whl'))


def _value(node: ast.AST, src: str):
    "A default as data: a literal when it is one, else {'expr': its source text}."
    try: return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError): return {'expr': ast.get_source_segment(src, node)}


def _params(fn: ast.FunctionDef, src: str, drop_self: bool = True) -> list:
    "Parameters of a function, in order: name, kind, default (absent when required)."
    a, out = fn.args, []
    pos = a.posonlyargs + a.args
    defaults = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
    for i, (p, d) in enumerate(zip(pos, defaults)):
        kind = 'positional_only' if i < len(a.posonlyargs) else 'positional_or_keyword'
        out.append({'name': p.arg, 'kind': kind, **({} if d is None else {'default': _value(d, src)})})
    if a.vararg: out.append({'name': a.vararg.arg, 'kind': 'var_positional'})
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append({'name': p.arg, 'kind': 'keyword_only', **({} if d is None else {'default': _value(d, src)})})
    if a.kwarg: out.append({'name': a.kwarg.arg, 'kind': 'var_keyword'})
    if drop_self and out and out[0]['name'] in ('self', 'cls'): out = out[1:]
    return out


def _is_dataclass(c: ast.ClassDef) -> bool:
    return any((isinstance(d, ast.Name) and d.id == 'dataclass') or (isinstance(d, ast.Call) and getattr(d.func, 'id', '') == 'dataclass')
               for d in c.decorator_list)


def read_wheel(wheel: Path) -> dict:
    "Modules, public names, dataclasses (fields and defaults, inherited ones resolved), classes and functions of the wheel."
    modules, classes, functions = {}, {}, {}
    with zipfile.ZipFile(wheel) as z:
        files = sorted(n for n in z.namelist() if n.startswith('comlrl/') and n.endswith('.py'))
        for name in files:
            src = z.read(name).decode()
            mod = name[:-3].replace('/', '.').removesuffix('.__init__')
            tree = ast.parse(src)
            defined, exported = [], None
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)): defined.append(node.name)
                elif isinstance(node, ast.Assign):
                    for t in node.targets:
                        if isinstance(t, ast.Name):
                            if t.id == '__all__': exported = list(ast.literal_eval(node.value))
                            else: defined.append(t.id)
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name): defined.append(node.target.id)
                if isinstance(node, ast.ClassDef) and not node.name.startswith('_'):
                    fields, methods, init = {}, {}, None
                    for b in node.body:
                        if isinstance(b, ast.AnnAssign) and isinstance(b.target, ast.Name):
                            fields[b.target.id] = {'annotation': ast.get_source_segment(src, b.annotation),
                                                   **({} if b.value is None else {'default': _value(b.value, src)})}
                        elif isinstance(b, ast.Assign) and len(b.targets) == 1 and isinstance(b.targets[0], ast.Name):
                            if not _is_dataclass(node) and not b.targets[0].id.startswith('_'):
                                fields[b.targets[0].id] = {'default': _value(b.value, src)}  # class attributes
                        elif isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            if b.name == '__init__': init = _params(b, src)
                            elif not b.name.startswith('_'): methods[b.name] = _params(b, src)
                    classes[node.name] = {'module': mod, 'bases': [ast.get_source_segment(src, x) for x in node.bases],
                                          'dataclass': _is_dataclass(node), 'own_fields': fields, 'init': init, 'methods': methods}
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith('_'):
                    functions[f'{mod}.{node.name}'] = _params(node, src, drop_self=False)
            public = sorted({n for n in defined if not n.startswith('_')} | set(exported or []))
            modules[mod] = {'public': public, **({'all': exported} if exported is not None else {})}
    for name, c in classes.items():  # inherited fields, methods and constructors, resolved along the bases in the wheel
        chain, cur = [], name
        while cur in classes:
            chain.append(cur)
            cur = next((b for b in classes[cur]['bases'] if b in classes), None)
        fields, methods, init = {}, {}, None
        for k in reversed(chain):
            fields.update(classes[k]['own_fields']); methods.update(classes[k]['methods'])
            init = classes[k]['init'] if classes[k]['init'] is not None else init
        c['fields'], c['all_methods'], c['all_init'] = fields, methods, init
    configs = {k: {'module': c['module'], 'fields': {f: v.get('default') for f, v in c['fields'].items()}}
               for k, c in classes.items() if c['dataclass'] and k.endswith('Config')}
    trainers = {k: {'module': c['module'], 'init': c['all_init'], 'methods': c['all_methods']}
                for k, c in classes.items() if k.endswith('Trainer') or k == 'ActorCriticTrainerBase'}
    return {'package': 'comlrl', 'version': VERSION, 'wheel': wheel.name, 'sha256': hashlib.sha256(wheel.read_bytes()).hexdigest(),
            'modules': modules, 'configs': configs, 'trainers': trainers, 'functions': functions,
            'classes': {k: {'module': c['module'], 'bases': c['bases'], 'methods': sorted(c['all_methods'])} for k, c in classes.items()}}


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--wheel', type=Path, help='comlrl-1.4.3 wheel on disk (default: pip download it)')
    p.add_argument('--out', type=Path, default=OUT)
    p.add_argument('--check', action='store_true', help='compare with the committed file instead of writing it')
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        data = read_wheel(a.wheel or download_wheel(Path(d)))
    text = json.dumps(data, indent=1, sort_keys=True) + '\n'
    if a.check:
        same = a.out.exists() and a.out.read_text() == text
        print('up to date' if same else f'{a.out} differs from the wheel: rerun python tools/reference_api.py')
        sys.exit(0 if same else 1)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(text)
    n_names = sum(len(m['public']) for m in data['modules'].values())
    print(f"{a.out.relative_to(ROOT)}: {len(data['modules'])} modules, {n_names} public names, {len(data['configs'])} configs, "
          f"{len(data['trainers'])} trainers")


if __name__ == '__main__': main()
