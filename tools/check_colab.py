"""Check that every notebook runs in Colab as published, and (with --fix) add what is missing.

A notebook passes when:
1. its first cell after the title is the "Open in Colab" badge, pointing at the notebook in the repository named in
   settings.ini (`git_url`, `branch`, `nbs_path`);
2. the cell after that is the install cell: hidden in the docs, it installs comlrl from that repository in Colab and
   does nothing elsewhere;
3. if it exports a module (`#| default_exp`), its last cell is the export cell, which exports the notebooks in a clone of the repository and does nothing
   elsewhere (Colab's "Run all" must not end on nbdev's "settings.ini not found");
4. every `#| gpu` cell starts with `require_gpu(...)` (after plain settings such as `preset = 'colab-t4'`), so that
   "Run all" on Colab's default CPU runtime stops there with one line instead of training a large model on the CPU;
5. no cell other than the library's own code (`#| export`) depends on the offline copy of the data and models that
   CI and offline machines use: no cell reads COMLRL_DATA_DIR / COMLRL_MODEL_DIR (os.environ, os.getenv) or a path into
   `shared/`, and no cell compares a length with a size that only the offline copy has (a user online gets the hub's
   splits through the library's loaders, with other sizes).

    python tools/check_colab.py [notebooks]         # check (default: every notebook in nbs/); exit 1 on a violation
    python tools/check_colab.py --fix [notebooks]   # add or update the badge, install and export cells, then check
"""
import json, re, secrets, sys
from pathlib import Path

from nbdev.config import get_config

CFG = get_config()
ROOT = Path(CFG.config_path)
NBS = Path(CFG.nbs_path)
INSTALL_MARK = '# Colab: install comlrl'
EXTRAS = {'21a_sandbox': 'dev,classeval', '23_classeval': 'dev,classeval'}  # notebooks that run ClassEval's reference classes

# Sizes of the offline copy that the hub's splits do not have (see ../shared/data/README.md): the TL;DR copy is 500
# posts of OpenAI's test split, served as 100 `test` + 400 `train`; SciTLDR-A stands in for arXiv_abstract.
# HumanEval (164), MBPP (427) CoopHumanEval (82) and ClassEval (100) are the hub's own sizes and may be asserted.
OFFLINE_ONLY_SIZES = {400: 'the offline TL;DR train split', 500: 'the offline TL;DR posts',
                      1992: 'the offline SciTLDR train split', 619: 'the offline SciTLDR dev split', 618: 'the offline SciTLDR test split'}
ENV_READ = re.compile(r"(os\.environ(\.get)?\s*[\[(]\s*|os\.getenv\s*\(\s*|environ\s*\[\s*)['\"]COMLRL_(DATA|MODEL)_DIR")
SHARED_PATH = re.compile(r"""['"/](\.\./)*shared/(data|models)\b|\.\./shared\b""")
LEN_SIZE = re.compile(r"\blen\(.*?\b(" + '|'.join(map(str, OFFLINE_ONLY_SIZES)) + r")\b(?![\]:.\d])")


def repo_url() -> str:
    return CFG.git_url.rstrip('/').removesuffix('.git')


def badge(nb: Path) -> str:
    "The badge cell's markdown for notebook `nb`."
    rel = nb.resolve().relative_to(ROOT.resolve()).as_posix()
    gh = repo_url().removeprefix('https://github.com/')
    return (f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
            f"(https://colab.research.google.com/github/{gh}/blob/{CFG.branch}/{rel})")


def install_source(nb: Path) -> str:
    "The install cell of `nb`: comlrl from its repository with the extras the notebook imports; only in Colab."
    # no import statement: nbdev's docs processing runs every cell that imports something
    return (f"#| hide\n{INSTALL_MARK} from its repository (elsewhere this cell does nothing)\n"
            "if 'google.colab' in str(get_ipython()):\n"
            f"    %pip install -q \"comlrl[{EXTRAS.get(nb.stem, 'dev')}] @ git+{repo_url()}@{CFG.branch}\"")


# `nbdev_export()` in the source: nbdev's tests and docs processing skip the cell
EXPORT_SOURCE = ("#| hide\nimport nbdev\n"
                 "if nbdev.config.is_nbdev(): nbdev.nbdev_export()  # in a clone of the repository; elsewhere (Colab) nothing to export")


def _src(cell) -> str: return ''.join(cell['source'])


def _exports(cells) -> bool: return any(re.match(r'#\|\s*default_exp\b', _src(c).strip()) for c in cells if c['cell_type'] == 'code')


def _is_export_cell(cell) -> bool: return cell['cell_type'] == 'code' and 'nbdev_export(' in _src(cell)


def _exported(src: str) -> bool:
    return any(re.match(r'#\|\s*(export|exporti|exports)\b', l.strip()) for l in src.splitlines()[:5])


SETTING = re.compile(r"""^\w+\s*=\s*(['"][^'"]*['"]|[\d.]+)\s*(#.*)?$""")  # preset = 'colab-t4'


def _checks_device(src: str) -> bool:
    "The cell's first statement after plain settings (and comments) is require_gpu(...)."
    lines = [l.strip() for l in src.splitlines() if l.strip() and not l.lstrip().startswith('#')]
    first = next((l for l in lines if not SETTING.match(l)), '')
    return first.startswith('require_gpu(')


def problems(nb: Path) -> list[str]:
    "What keeps notebook `nb` from running in Colab as published, one line each (empty: nothing)."
    cells, out = json.loads(nb.read_text())['cells'], []
    if len(cells) < 3 or cells[0]['cell_type'] != 'markdown' or not _src(cells[0]).lstrip().startswith('# '):
        return [f'{nb}: the first cell must be the title (# Title)']
    if cells[1]['cell_type'] != 'markdown' or _src(cells[1]).strip() != badge(nb):
        out.append(f'{nb}: cell 1 must be the Colab badge `{badge(nb)}` (run tools/check_colab.py --fix)')
    if cells[2]['cell_type'] != 'code' or _src(cells[2]).strip() != install_source(nb):
        out.append(f'{nb}: cell 2 must be the install cell (run tools/check_colab.py --fix)')
    if _exports(cells) and _src(cells[-1]).strip() != EXPORT_SOURCE:
        out.append(f'{nb}: the last cell must be the export cell, which does nothing outside the repository '
                   f'(run tools/check_colab.py --fix)')
    for i, c in enumerate(cells):
        if c['cell_type'] == 'code' and re.match(r'#\|\s*gpu\b', _src(c)) and not _checks_device(_src(c)):
            out.append(f'{nb}: cell {i} (#| gpu) must start with require_gpu(preset) (comlrl.presets), before any other work')
    for i, c in enumerate(cells):
        if c['cell_type'] != 'code' or _exported(src := _src(c)): continue
        for j, line in enumerate(src.splitlines(), 1):
            where = f'{nb}: cell {i} line {j}'
            if ENV_READ.search(line):
                out.append(f"{where} reads COMLRL_DATA_DIR/COMLRL_MODEL_DIR itself: load data and models through the "
                           f"library's loaders (they use the hub online and the offline copy when it is set): {line.strip()}")
            if SHARED_PATH.search(line):
                out.append(f"{where} reads the offline copy in shared/ directly: use the library's loaders: {line.strip()}")
            if (m := LEN_SIZE.search(line)):
                out.append(f"{where} compares a length with {m.group(1)}, the size of {OFFLINE_ONLY_SIZES[int(m.group(1))]} "
                           f"(the hub's split has another size): assert on a slice you asked for instead: {line.strip()}")
    return out


def fix(nb: Path) -> bool:
    "Insert or update the badge, install and export cells of `nb`. True if the file changed."
    data = json.loads(nb.read_text())
    cells = data['cells']
    has_badge = len(cells) > 1 and cells[1]['cell_type'] == 'markdown' and 'colab-badge.svg' in _src(cells[1])
    has_install = len(cells) > 2 and cells[2]['cell_type'] == 'code' and INSTALL_MARK in _src(cells[2])
    want_badge, want_install = badge(nb), install_source(nb)
    new = lambda kind, text: {'cell_type': kind, 'id': secrets.token_hex(4), 'metadata': {}, 'source': text.splitlines(keepends=True),
                              **({'execution_count': None, 'outputs': []} if kind == 'code' else {})}
    changed = False
    if not has_badge: cells.insert(1, new('markdown', want_badge)); changed = True
    elif _src(cells[1]).strip() != want_badge: cells[1]['source'] = want_badge.splitlines(keepends=True); changed = True
    if not has_install: cells.insert(2, new('code', want_install)); changed = True
    elif _src(cells[2]).strip() != want_install: cells[2]['source'] = want_install.splitlines(keepends=True); changed = True
    if not _exports(cells): pass
    elif not _is_export_cell(cells[-1]): cells.append(new('code', EXPORT_SOURCE)); changed = True
    elif _src(cells[-1]).strip() != EXPORT_SOURCE: cells[-1]['source'] = EXPORT_SOURCE.splitlines(keepends=True); changed = True
    if changed:
        nb.write_text(json.dumps(data, indent=1, ensure_ascii=False) + '\n')
    return changed


def notebooks(args) -> list[Path]:
    return [Path(a) for a in args] or sorted(p for p in NBS.glob('*.ipynb') if not p.name.startswith(('_', '.')))


if __name__ == '__main__':
    args = sys.argv[1:]
    do_fix = '--fix' in args
    paths = notebooks([a for a in args if a != '--fix'])
    if do_fix:
        for p in paths:
            if fix(p): print(f'{p}: badge, install or export cell added or updated')
    bad = [msg for p in paths for msg in problems(p)]
    for msg in bad: print(msg)
    if bad: sys.exit(1)
    print(f'{len(paths)} notebooks open in Colab and depend on no offline copy')
