"""Plain tests of the package as a whole: it imports, its version is settings.ini's, the built-in environments and
algorithms register themselves, and README.md is what nbs/index.ipynb makes (README.md is generated; see
tools/make_readme.py)."""
import importlib, json, subprocess, sys
from configparser import ConfigParser
from pathlib import Path

import pytest

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


FRESH = """
import importlib, json, pkgutil, sys
import comlrl
from comlrl.core import ALGORITHMS, ENVIRONMENTS
out = {'env': {n: [c.__module__, c.name] for n, c in ENVIRONMENTS.items()},
       'algo': {n: [c.__module__, hasattr(c, 'config_class')] for n, c in ALGORITHMS.items()},
       'reference': sorted(m for m in sys.modules if m.startswith(REFERENCE))}
for m in pkgutil.walk_packages(comlrl.__path__, 'comlrl.'):  # every module: a registration outside comlrl.envs / comlrl.trainers would show
    if not m.name.startswith('comlrl.trainers.preference'): importlib.import_module(m.name)  # preference: refused by design
out['everything'] = {'env': list(ENVIRONMENTS), 'algo': list(ALGORITHMS)}
print(json.dumps(out))
"""
# the compatibility layer (`comlrl.trainers` loads only its table of the reference's exports, comlrl.reference.trainers)
REFERENCE = ('comlrl.reference.compat', 'comlrl.trainers.reinforce', 'comlrl.trainers.actor_critic', 'comlrl.trainers.preference')


@pytest.fixture(scope='module')
def fresh() -> dict:
    "The registries as a fresh process lists them (a notebook run in this process may have registered its own)."
    r = subprocess.run([sys.executable, '-c', f'REFERENCE = {REFERENCE!r}' + FRESH], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])


def test_builtins_register_themselves(fresh):
    "Listing a registry in a fresh process finds every built-in where it registers itself, without the compatibility layer."
    assert fresh['env'] and fresh['algo']
    for name, (module, declared) in fresh['env'].items():
        assert module.startswith('comlrl.envs.') and module.count('.') == 2 and declared == name, (name, module, declared)
    for name, (module, has_config) in fresh['algo'].items():
        assert module.startswith('comlrl.trainers.') and module.count('.') == 2 and has_config, (name, module)
    assert fresh['reference'] == [], 'listing the algorithms imported the compatibility layer'
    assert fresh['everything'] == {'env': sorted(fresh['env']), 'algo': sorted(fresh['algo'])}


def test_console_script(fresh):
    "The `comlrl` command is installed; bad input is one line on stderr and exit status 2, naming the registered algorithms."
    ok = subprocess.run(['comlrl', '--help'], capture_output=True, text=True)
    assert ok.returncode == 0 and 'comlrl {train,eval}' in ok.stdout
    bad = subprocess.run(['comlrl', 'train', '--algo', 'nope'], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        f"comlrl train: error: unknown algorithm 'nope': choose one of {', '.join(sorted(fresh['algo']))}, "
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
