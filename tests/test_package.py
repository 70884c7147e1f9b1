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
    pkg = ROOT / 'comlrl'
    mods = sorted('.'.join(p.relative_to(pkg).with_suffix('').parts) for p in pkg.rglob('*.py') if not p.stem.startswith('_'))
    assert {'core', 'models', 'generation', 'trainers.magrpo', 'envs.writing', 'cli'} <= set(mods)
    for m in mods: importlib.import_module(f'comlrl.{m}')


def test_console_script():
    "The `comlrl` command is installed; bad input is one line on stderr and exit status 2."
    ok = subprocess.run(['comlrl', '--help'], capture_output=True, text=True)
    assert ok.returncode == 0 and 'comlrl {train,eval}' in ok.stdout
    bad = subprocess.run(['comlrl', 'train', '--algo', 'nope'], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "comlrl train: error: unknown algorithm 'nope': choose one of ippo, macf, magrpo, mareinforce, maremax, marloo, "
            "or give a 'module:Class' path"]


def test_readme_in_step_with_index_notebook():
    r = subprocess.run([sys.executable, 'tools/make_readme.py', '--check'], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_ppo_value_loss_importable_from_ippo():
    "ppo_value_loss is derived in 14_critics (comlrl.critics) and stays importable from comlrl.trainers.ippo, in its __all__."
    from comlrl.critics import ppo_value_loss
    import comlrl.trainers.ippo as ippo
    assert ippo.ppo_value_loss is ppo_value_loss and 'ppo_value_loss' in ippo.__all__


def test_the_trainers_parts_stay_importable_from_comlrl_trainer():
    "The loss, the config and the logs have notebooks of their own (03c..03e); `from comlrl.trainer import ...` still finds them."
    import comlrl.config, comlrl.loggers, comlrl.losses
    import comlrl.trainer as trainer
    moved = {comlrl.losses: ('LOSS_TYPES', 'token_loss', 'loss_denominator', 'aggregate_loss', 'scale_advantages'),
             comlrl.config: ('MAConfig', 'REFERENCE_CONFIG_FIELDS', 'unknown_names_error'),
             comlrl.loggers: ('LogHistory', 'LOG_FILES')}
    for module, names in moved.items():
        for name in names:
            assert getattr(trainer, name) is getattr(module, name) and name in trainer.__all__, name
