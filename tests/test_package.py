"""Plain tests of the package as a whole: it imports, its version is settings.ini's, and README.md is what
nbs/index.ipynb makes (README.md is generated; see tools/make_readme.py)."""
import importlib, subprocess, sys
from configparser import ConfigParser
from pathlib import Path

import comlrl

ROOT = Path(__file__).resolve().parents[1]


def test_version_matches_settings():
    cfg = ConfigParser(delimiters=['=']); cfg.read(ROOT / 'settings.ini')
    assert comlrl.__version__ == cfg['DEFAULT']['version']


def test_every_module_imports():
    mods = sorted(p.stem for p in (ROOT / 'comlrl').glob('*.py') if not p.stem.startswith('_'))
    assert {'core', 'models', 'generation'} <= set(mods)
    for m in mods: importlib.import_module(f'comlrl.{m}')


def test_readme_in_step_with_index_notebook():
    r = subprocess.run([sys.executable, 'tools/make_readme.py', '--check'], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr

