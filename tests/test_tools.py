"""The repository's checks in tools/ must fail on the violations they exist to catch (planted in copies of notebooks)."""
import json, shutil, subprocess, sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NB = ROOT / 'nbs' / '20_writing.ipynb'


def _check(tool: str, *paths) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, f'tools/{tool}', *map(str, paths)], cwd=ROOT, capture_output=True, text=True)


def _plant(tmp_path: Path, code: str, at: int = 5) -> Path:
    "A copy of a clean notebook (in nbs/, so the badge URL is the same) with one extra code cell."
    nb = json.loads(NB.read_text())
    nb['cells'].insert(at, {'cell_type': 'code', 'id': 'planted0', 'metadata': {}, 'execution_count': None, 'outputs': [],
                            'source': code.splitlines(keepends=True)})
    p = ROOT / 'nbs' / f'_planted_{tmp_path.name}.ipynb'  # `_`: nbdev and the test suite skip it
    nb['cells'][1]['source'] = [''.join(nb['cells'][1]['source']).replace(NB.name, p.name)]  # its own badge
    p.write_text(json.dumps(nb, indent=1))
    return p


def test_colab_check_passes_on_the_notebooks():
    r = _check('check_colab.py')
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize('code,why', [
    ("data = Path(os.environ['COMLRL_DATA_DIR']) / 'mbpp'", 'reads COMLRL_DATA_DIR'),
    ("d = os.environ.get('COMLRL_MODEL_DIR', '/tmp')", 'reads COMLRL_DATA_DIR/COMLRL_MODEL_DIR'),
    ("DATA = Path('../../shared/data')", 'offline copy in shared/'),
    ("test_eq(len(train), 400)", 'compares a length with 400'),
    ("assert len(env.load_dataset('train')) == 500", 'compares a length with 500'),
])
def test_colab_check_fails_on_a_planted_violation(tmp_path, code, why):
    p = _plant(tmp_path, code)
    try:
        r = _check('check_colab.py', p)
        assert r.returncode == 1 and why in r.stdout, r.stdout + r.stderr
    finally: p.unlink()


def test_colab_check_allows_library_code_and_hub_sizes(tmp_path):
    p = _plant(tmp_path, "test_eq(len(he), 164)\nwith _with_env(COMLRL_MODEL_DIR=d): pass\nprint(text[:400])")
    try:
        r = _check('check_colab.py', p)
        assert r.returncode == 0, r.stdout + r.stderr
    finally: p.unlink()


def test_colab_check_fails_without_badge_or_install_cell_and_fix_restores_them(tmp_path):
    nb = json.loads(NB.read_text())
    del nb['cells'][1:3]  # the badge and the install cell
    p = ROOT / 'nbs' / f'_planted_{tmp_path.name}.ipynb'
    p.write_text(json.dumps(nb, indent=1))
    try:
        r = _check('check_colab.py', p)
        assert r.returncode == 1 and 'Colab badge' in r.stdout and 'install cell' in r.stdout, r.stdout
        r = _check('check_colab.py', '--fix', p)
        assert r.returncode == 0, r.stdout + r.stderr
        fixed = json.loads(p.read_text())['cells']
        assert f'blob/main/nbs/{p.name}' in ''.join(fixed[1]['source'])
        assert "if 'google.colab' in str(get_ipython()):" in ''.join(fixed[2]['source'])
    finally: p.unlink()


def test_device_check_fails_on_a_hard_coded_device(tmp_path):
    assert _check('check_devices.py').returncode == 0
    for line in ("x = torch.zeros(3, device='cuda')", "y = x.cuda()", "z = x.to('cpu')", "d = torch.device('cuda:0')"):
        f = tmp_path / 'mod.py'
        f.write_text(f"import torch\n{line}\n")
        r = _check('check_devices.py', f)
        assert r.returncode == 1 and 'hard-coded device' in r.stdout, (line, r.stdout)


def _with_output(tmp_path: Path, *outputs) -> Path:
    "A copy of a clean notebook with one extra code cell holding `outputs` (nbformat output dicts)."
    nb = json.loads(NB.read_text())
    nb['cells'].insert(5, {'cell_type': 'code', 'id': 'planted1', 'metadata': {}, 'execution_count': None,
                           'outputs': list(outputs), 'source': ['print(x)']})
    p = tmp_path / NB.name
    p.write_text(json.dumps(nb, indent=1))
    return p


def _stream(text, name='stdout'): return {'output_type': 'stream', 'name': name, 'text': text}


def test_output_check_passes_on_the_notebooks():
    r = _check('check_outputs.py')
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize('output,why', [
    (_stream(''.join(f'step {i}\n' for i in range(41))), '41 lines of output'),
    ({'output_type': 'execute_result', 'execution_count': 1, 'metadata': {},
      'data': {'text/plain': ''.join(f"{{'step': {i}}},\n" for i in range(45))}}, '45 lines of output'),
    ({'output_type': 'error', 'ename': 'ValueError', 'evalue': 'bad', 'traceback': ['ValueError: bad']}, 'an error output'),
    (_stream('Traceback (most recent call last):\n  File "x.py", line 1\nKeyError: 1\n', 'stderr'), 'a traceback'),
    (_stream('MAGRPO:  42%|████▏     | 10/24 [00:27<00:38,  2.71s/it]\n', 'stderr'), 'a progress bar'),
    (_stream('Loading weights: 100%|##########| 272/272 [00:00<00:00, 38088.03it/s]\n', 'stderr'), 'a progress bar'),
    (_stream('x.py:3: FutureWarning: `past_key_values` is deprecated\n', 'stderr'), 'a warning'),
    (_stream('saved to /home/alice/comlrl/outputs/run\n'), 'a machine path'),
    (_stream("PermissionError: '/work/main/nbs/.sandbox-canary-1856'\n"), 'a machine path'),
    (_stream('-> /tmp/tmp31i4uxfv/run\n'), 'a machine path'),
    (_stream('/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/peft/peft_model.py\n'), 'a machine path'),
])
def test_output_check_fails_on_a_planted_output(tmp_path, output, why):
    r = _check('check_outputs.py', _with_output(tmp_path, output))
    assert r.returncode == 1 and why in r.stdout, r.stdout + r.stderr


def test_output_check_allows_compact_outputs(tmp_path):
    ok = [_stream(''.join(f'row {i}\n' for i in range(38))),  # 38 + the two lines below: 40, the limit
          _stream("ValueError: checkpoint <work>/wrong_batch/checkpoint-2 was trained with 4 items\n"),  # an error message, shown
          _stream('mount -a -i -T /tmp/.sbx-fstab\n'),  # a path the library itself chose, not the machine's
          {'output_type': 'display_data', 'metadata': {}, 'data': {'image/png': 'iVBORw0KGgo=', 'text/plain': '<Figure>'}}]
    r = _check('check_outputs.py', _with_output(tmp_path, *ok))
    assert r.returncode == 0, r.stdout + r.stderr


def test_output_check_counts_an_html_table_by_its_rows(tmp_path):
    "Cells side by side take the height of the tallest: two 30-line cells in one row are 30 lines, one above the other 60."
    code = '\n'.join(f'x = {i}' for i in range(30))
    row = lambda *cells: '<tr>' + ''.join(f'<td><pre>{c}</pre></td>' for c in cells) + '</tr>'
    html = lambda rows: {'output_type': 'display_data', 'metadata': {}, 'data': {'text/html': '<table>\n' + '\n'.join(rows) + '\n</table>', 'text/plain': '<HTML>'}}
    assert _check('check_outputs.py', _with_output(tmp_path, html([row(code, code)]))).returncode == 0
    r = _check('check_outputs.py', _with_output(tmp_path, html([row(code), row(code)])))
    assert r.returncode == 1 and '60 lines of output' in r.stdout, r.stdout


def test_control_char_check_passes_on_the_notebooks():
    r = _check('check_control_chars.py')
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize('kind,text,why', [
    ('markdown', '$$V\big(x\big)$$', 'a backspace'),  # '\big' written in a non-raw string
    ('markdown', '$a \approx b$', 'a bell'),
    ('markdown', '$\text{return}$', 'a tab'),
    ('code', 'x = 1\x1b[0m', 'an escape'),
])
def test_control_char_check_fails_on_a_planted_character(tmp_path, kind, text, why):
    nb = json.loads(NB.read_text())
    cell = {'cell_type': kind, 'id': 'planted2', 'metadata': {}, 'source': ['Some text\n', text]}
    if kind == 'code': cell.update(execution_count=None, outputs=[])
    nb['cells'].insert(5, cell)
    p = tmp_path / NB.name
    p.write_text(json.dumps(nb, indent=1))
    r = _check('check_control_chars.py', p)
    assert r.returncode == 1 and f'cell 5 ({kind}) line 2: control character, {why}' in r.stdout, r.stdout + r.stderr


def _export_code() -> str:
    sys.path.insert(0, str(ROOT / 'tools'))
    try: from check_colab import EXPORT_SOURCE
    finally: sys.path.pop(0)
    return EXPORT_SOURCE.removeprefix('#| hide\n')


def test_export_cell_does_nothing_outside_the_repository(tmp_path):
    "Colab's 'Run all' runs the hidden export cell in /content, where there is no settings.ini: it must raise nothing."
    code = _export_code() + "\nprint('in repository:', nbdev.config.is_nbdev())"
    r = subprocess.run([sys.executable, '-c', code], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0 and 'in repository: False' in r.stdout, r.stdout + r.stderr
    assert list(tmp_path.iterdir()) == []  # and writes nothing
    r = subprocess.run([sys.executable, '-c', 'import nbdev; print(nbdev.config.is_nbdev())'], cwd=ROOT / 'nbs', capture_output=True, text=True)
    assert r.stdout.strip() == 'True', r.stdout + r.stderr  # in the repository it exports


def test_colab_check_fails_on_the_old_export_cell_and_fix_replaces_it(tmp_path):
    nb = json.loads(NB.read_text())
    nb['cells'][-1]['source'] = ['#| hide\n', 'import nbdev; nbdev.nbdev_export()']
    p = ROOT / 'nbs' / f'_planted_{tmp_path.name}.ipynb'
    nb['cells'][1]['source'] = [''.join(nb['cells'][1]['source']).replace(NB.name, p.name)]
    p.write_text(json.dumps(nb, indent=1))
    try:
        r = _check('check_colab.py', p)
        assert r.returncode == 1 and 'the last cell must be the export cell' in r.stdout, r.stdout + r.stderr
        assert _check('check_colab.py', '--fix', p).returncode == 0
        assert ''.join(json.loads(p.read_text())['cells'][-1]['source']).endswith(_export_code())
    finally: p.unlink()


def test_import_cell_check_passes_on_the_notebooks():
    r = _check('check_import_cells.py')
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize('code,line', [
    ("from comlrl.envs.writing import TLDREnv\ntrainer.train()", 'trainer.train()'),  # a quick start with its imports
    ("#| hide\nimport os\n_tmp = tempfile.TemporaryDirectory()", '_tmp = tempfile.TemporaryDirectory()'),
    ("#| gpu\nimport torch\nassert torch.cuda.is_available()", 'assert torch.cuda.is_available()'),
    ("#| slow\nfrom comlrl.cli import main\nmain(['train'])", "main(['train'])"),
    ("#| hide\nimport torch\n\ndef _helper(x):\n    'A docstring.'\n    return x", 'def _helper(x):'),  # nbdev warns on it
    ("show_doc(TLDREnv)\nds = TLDREnv().load_dataset('train')", "ds = TLDREnv().load_dataset('train')"),
])
def test_import_cell_check_fails_on_a_cell_docs_processing_would_run(tmp_path, code, line):
    nb = json.loads(NB.read_text())
    nb['cells'].insert(5, {'cell_type': 'code', 'id': 'planted3', 'metadata': {}, 'execution_count': None, 'outputs': [],
                           'source': code.splitlines(keepends=True)})
    p = tmp_path / NB.name
    p.write_text(json.dumps(nb, indent=1))
    r = _check('check_import_cells.py', p)
    assert r.returncode == 1 and f'cell 5 imports something (or calls show_doc), so docs processing runs all of it, including `{line}`' in r.stdout, r.stdout + r.stderr


def test_import_cell_check_allows_import_cells_show_doc_cells_and_cells_without_imports(tmp_path):
    nb = json.loads(NB.read_text())
    for code in ["#| hide\nimport os\nfrom pathlib import Path", "show_doc(TLDREnv)\nshow_doc(TLDREnv.load_dataset)",
                 "trainer.train()\nprint(trainer.state)", "#| export\nimport os\nX = os.sep", "#| eval: false\nimport os\nos.getcwd()"]:
        nb['cells'].insert(5, {'cell_type': 'code', 'id': 'planted4', 'metadata': {}, 'execution_count': None, 'outputs': [],
                               'source': code.splitlines(keepends=True)})
    p = tmp_path / NB.name
    p.write_text(json.dumps(nb, indent=1))
    r = _check('check_import_cells.py', p)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize('code,ok', [
    ("#| gpu\npreset = 'colab-t4'  # on an A100: 'a100'\nrequire_gpu(preset)\ntrainer.train()", True),
    ("#| gpu\nrequire_gpu('a100')\ntrainer.train()", True),
    ("#| gpu\npreset = 'colab-t4'\ngpu_env = TLDREnv()\nrequire_gpu(preset)", False),  # too late: work before the check
    ("#| gpu\npreset = 'colab-t4'\ntrainer = preset_trainer(preset, MAGRPOTrainer, env)\ntrainer.train()", False),
])
def test_colab_check_wants_a_device_check_first_in_gpu_cells(tmp_path, code, ok):
    p = _plant(tmp_path, code)
    try:
        r = _check('check_colab.py', p)
        assert (r.returncode == 0) == ok and (ok or 'must start with require_gpu(preset)' in r.stdout), r.stdout + r.stderr
    finally: p.unlink()


def test_output_check_of_the_pages_allows_a_long_api_reference_only(tmp_path):
    "--docs: the show_doc outputs of docs processing (a config's table of fields) may be long; other outputs may not."
    table = {'output_type': 'display_data', 'metadata': {}, 'data': {'text/markdown': '| field |\n|---|\n' + ''.join(f'| `f{i}` |\n' for i in range(50)),
                                                                     'text/plain': '<Renderer>'}}
    nb = json.loads(NB.read_text())
    nb['cells'].insert(5, {'cell_type': 'code', 'id': 'planted5', 'metadata': {}, 'execution_count': None, 'outputs': [table],
                           'source': ['#| echo: false\n', '#| output: asis\n', 'show_doc(MAGRPOConfig)']})
    p = tmp_path / NB.name
    p.write_text(json.dumps(nb, indent=1))
    assert _check('check_outputs.py', '--docs', p).returncode == 0
    r = _check('check_outputs.py', p)
    assert r.returncode == 1 and '52 lines of output' in r.stdout, r.stdout
    nb['cells'][5]['outputs'].append(_stream('MAGRPO:  42%|████▏     | 10/24 [00:27<00:38,  2.71s/it]\n', 'stderr'))
    p.write_text(json.dumps(nb, indent=1))
    r = _check('check_outputs.py', '--docs', p)
    assert r.returncode == 1 and 'a progress bar' in r.stdout, r.stdout
    nb['cells'][5]['source'] = ['print(x)']; nb['cells'][5]['outputs'] = [table]  # a cell of the page's own, not the reference
    p.write_text(json.dumps(nb, indent=1))
    assert _check('check_outputs.py', '--docs', p).returncode == 1


def _nbs_with(tmp_path: Path, name: str, code: str = None, replace: tuple = None) -> Path:
    "A copy of the notebooks in `tmp_path/nbs`, notebook `name` with one more code cell `code` or a text replaced."
    d = tmp_path / 'nbs'
    d.mkdir()
    for p in (ROOT / 'nbs').glob('*.ipynb'): shutil.copy(p, d)
    nb = json.loads((d / name).read_text())
    if code is not None:
        nb['cells'].insert(5, {'cell_type': 'code', 'id': 'planted0', 'metadata': {}, 'execution_count': None, 'outputs': [],
                               'source': code.splitlines(keepends=True)})
    if replace is not None:
        old, new = replace
        cells = [c for c in nb['cells'] if old in ''.join(c['source'])]
        assert len(cells) == 1, (name, old)
        cells[0]['source'] = ''.join(cells[0]['source']).replace(old, new).splitlines(keepends=True)
    (d / name).write_text(json.dumps(nb, indent=1))
    return d


def test_notebook_order_check_passes_on_the_notebooks():
    r = _check('check_notebook_order.py')
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize('name,code,why', [
    ('01_models.ipynb', '#| export\nfrom comlrl.trainer import MATrainer',
     '01_models cell 5 (planted0) line 2: imports comlrl.trainer, which the later notebook 04_trainer exports'),
    ('05_toy_team.ipynb', '#| export\ndef curves(run):\n    "A lazy import is a dependency too."\n    import comlrl.viz\n'
     '    return comlrl.viz.plot_training_curves(run)', '05_toy_team cell 5 (planted0) line 4: imports comlrl.viz'),
    ('03_rollout.ipynb', '#| export\nfrom . import sandbox', '03_rollout cell 5 (planted0) line 2: imports comlrl.sandbox'),
    ('21a_sandbox.ipynb', '#| export\nfrom comlrl.envs import codegen', 'imports comlrl.envs.codegen, which the later notebook 22_codegen'),
])
def test_notebook_order_check_fails_on_a_planted_import_of_a_later_notebook(tmp_path, name, code, why):
    r = _check('check_notebook_order.py', _nbs_with(tmp_path, name, code))
    assert r.returncode == 1 and why in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize('name,code', [
    ('05_toy_team.ipynb', '#| export\nfrom comlrl.trainer import MATrainer'),  # an earlier notebook's module
    ('01_models.ipynb', 'from comlrl.trainer import MATrainer'),  # a test cell, not exported
])
def test_notebook_order_check_allows_imports_of_earlier_notebooks_and_in_test_cells(tmp_path, name, code):
    r = _check('check_notebook_order.py', _nbs_with(tmp_path, name, code))
    assert r.returncode == 0, r.stdout + r.stderr


def test_cell_size_check_passes_on_the_notebooks():
    r = _check('check_cell_size.py')
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize('lines,fails', [(60, False), (61, True)])
def test_cell_size_check_fails_on_an_exported_cell_over_60_lines(tmp_path, lines, fails):
    body = '\n'.join(f'X{i} = {i}' for i in range(lines - 1))
    p = _plant(tmp_path, f'#| export\n{body}')
    try:
        r = _check('check_cell_size.py', p)
        assert r.returncode == int(fails), r.stdout + r.stderr
        if fails: assert f'cell 5 (planted0): {lines} lines' in r.stdout and 'over 60 lines' in r.stderr, r.stdout + r.stderr
    finally: p.unlink()


def _notebook(tmp_path: Path, *cells: str) -> Path:
    "A notebook of code cells (a cell starting with '#| export' is exported), written to tmp_path."
    nb = {'nbformat': 4, 'nbformat_minor': 5, 'metadata': {},
          'cells': [{'cell_type': 'code', 'id': f'c{i}', 'metadata': {}, 'execution_count': None, 'outputs': [],
                     'source': c.splitlines(keepends=True)} for i, c in enumerate(cells)]}
    p = tmp_path / 'planted.ipynb'
    p.write_text(json.dumps(nb))
    return p


@pytest.mark.parametrize('cells,rc,said', [
    (('#| export\ndef foo(): return 1', 'test_eq(foo(), 1)'), 0, '1 of 1 exported cells (100%)'),
    (('#| export\n@patch\ndef meth(self: X): return 1', 'test_eq(X().meth(), 1)'), 0, '1 of 1 exported cells (100%)'),
    (('#| export\ndef foo(): return 1', '#| export\ndef bar(): return 2', 'test_eq(foo() + bar(), 3)'), 1,
     '1 of 2 exported cells (50%)'),
    (('#| export\ndef {name}(): return 1', 'show_doc({name})'), 1, '{name} is used by no test'),  # show_doc is no test
    (('#| export\nLIMIT = 3\ndef _private(): pass', 'test_eq(LIMIT, 3)'), 0, '1 of 1 exported cells'),
])
def test_tests_adjacent_check(tmp_path, cells, rc, said):
    name = 'planted' + 'untested'  # a name no file in tests/ spells out (the check reads them all)
    cells, said = [c.replace('{name}', name) for c in cells], said.replace('{name}', name)
    r = _check('check_tests_adjacent.py', _notebook(tmp_path, *cells))
    assert r.returncode == rc and said in r.stdout, r.stdout + r.stderr


def test_readme_numbers_check_passes_on_the_readme():
    r = _check('check_readme_numbers.py')
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize('old,new,said', [
    ('Mean rise **+1.156**', 'Mean rise **+1.157**', "README lacks the line 'Mean rise **+1.156**"),  # the main job's table
    ('| 1 | 0.654 | 2.198 |', '| 1 | 0.654 | 2.189 |', "main job table, seed 1, column 'after': README says 2.189"),
    ('| MAREMAX | 0.654 | 2.204', '| MAREMAX | 0.654 | 2.240', "comparison table, MAREMAX, column 'after: mean"),
    ('| MACF |', '| MACFX |', 'comparison table leaves out MACF'),
    ('| trained pair, seed 1 | concat | 1.450 |', '| trained pair, seed 1 | concat | 1.405 |', 'code table, trained pair, seed 1'),
    ('one untrained agent alone scores 1.206', 'one untrained agent alone scores 1.260', "README says '1.260'"),
    ('max_steps=24, per_device_train_batch_size=2', 'max_steps=12, per_device_train_batch_size=2', 'quick start: MAGRPOConfig(max_steps=12)'),
])
def test_readme_numbers_check_fails_on_a_planted_mismatch(tmp_path, old, new, said):
    text = (ROOT / 'README.md').read_text(encoding='utf-8')
    assert old in text, f'the test plants a change in {old!r}, which README.md no longer holds'
    planted = tmp_path / 'README.md'
    planted.write_text(text.replace(old, new, 1), encoding='utf-8')
    r = _check('check_readme_numbers.py', '--readme', planted)
    assert r.returncode == 1 and said in r.stdout, r.stdout + r.stderr


def test_result_first_measure_finds_the_result_and_its_share(tmp_path):
    "measure_result_first: the share of the page's lines above the end of the figure, the table and the completions."
    sys.path.insert(0, str(ROOT / 'tools'))
    from measure_result_first import measure
    md = lambda n: {'cell_type': 'markdown', 'id': f'm{n}', 'metadata': {}, 'source': 'x\n' * 9}  # 10 lines with its gap
    code = lambda src, outs: {'cell_type': 'code', 'id': src[:6], 'metadata': {}, 'execution_count': None,
                              'outputs': outs, 'source': src}
    png = {'output_type': 'display_data', 'metadata': {'image/png': {'width': 800, 'height': 180}},
           'data': {'image/png': 'AAAA', 'text/plain': '<Figure>'}}  # 9 lines
    html = {'output_type': 'execute_result', 'metadata': {}, 'data': {'text/html': '<p>x</p>'}}
    nb = {'cells': [md(0), code('#| echo: false\nseeds_table(job); plot_seeds(runs)', [png]), md(1),
                    code('#| echo: false\nbefore_after_html(pairs)', [html]), md(2), md(3), md(4), md(5)],
          'metadata': {}, 'nbformat': 4, 'nbformat_minor': 5}
    p = tmp_path / 'page.ipynb'
    p.write_text(json.dumps(nb))
    m = measure(p)
    assert m['lines'] == 10 * 6 + 9 + 1
    assert m['figure'][0] == m['table'][0] == 19 / 70 and m['completions'][0] == 30 / 70
    nb['cells'] = nb['cells'][:1] + nb['cells'][2:]  # no figure, no table
    p.write_text(json.dumps(nb))
    assert measure(p)['figure'] is None and measure(p)['table'] is None
