"""Without internet and without the offline copy, every environment's loader fails with one error that names the data
set, the split and both ways out (go online, or COMLRL_DATA_DIR with the copy's place and format), and `comlrl train`
says the same in one line. Run for real: fresh processes with the hub offline, an empty hub cache, COMLRL_DATA_DIR unset."""
import json, os, re, subprocess, sys, tempfile
from pathlib import Path

import pytest

from comlrl.core import make_env

ROOT = Path(__file__).resolve().parents[1]
HUB = {'tldr': 'trl-lib/tldr', 'arxiv': 'OpenMLRL/arXiv_abstract', 'humaneval': 'openai/openai_humaneval',
       'coophumaneval': 'OpenMLRL/CoopHumanEval', 'mbpp': 'google-research-datasets/mbpp', 'classeval': 'FudanSELab/ClassEval'}


def _offline(args, data_dir=None) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as hf_home:
        env = {k: v for k, v in os.environ.items() if k != 'COMLRL_DATA_DIR'}
        env.update(HF_HUB_OFFLINE='1', HF_DATASETS_OFFLINE='1', HF_HOME=hf_home, **({'COMLRL_DATA_DIR': data_dir} if data_dir else {}))
        return subprocess.run(args, env=env, capture_output=True, text=True, timeout=600, cwd=hf_home)


LOAD_ALL = """
import json
from comlrl.core import ENVIRONMENTS, DataUnavailableError, make_env
for name in sorted(ENVIRONMENTS):
    env = make_env(name)
    split = getattr(env, 'train_split', None) or env.default_split
    try: env.load_dataset(split); print(json.dumps({'env': name, 'error': None}))
    except DataUnavailableError as e: print(json.dumps({'env': name, 'split': split, 'error': str(e)}))
"""


@pytest.fixture(scope='module')
def errors() -> dict:
    r = _offline([sys.executable, '-c', LOAD_ALL])
    assert r.returncode == 0, r.stderr
    return {d['env']: d for d in map(json.loads, r.stdout.splitlines())}


def test_every_environment_is_covered(errors):
    "The built-in environments, listed in a fresh process (a notebook run in this one may have registered its own)."
    assert set(HUB) == set(errors), 'a new environment: add its hub name to HUB'


@pytest.mark.parametrize('name', sorted(HUB))
def test_loader_without_hub_or_copy_names_the_data_the_split_and_both_ways_out(errors, name):
    e = errors[name]
    msg = e['error']
    assert msg is not None, f'{name} loaded without hub and without COMLRL_DATA_DIR'
    assert msg.startswith(f"cannot load split {e['split']!r} of the dataset {HUB[name]!r}: the Hugging Face hub cannot be reached"), msg
    assert 'COMLRL_DATA_DIR is not set' in msg and 'Either go online (unset HF_HUB_OFFLINE and HF_DATASETS_OFFLINE)' in msg, msg
    m = re.search(r'set COMLRL_DATA_DIR to a folder holding its offline copy: (\S+) \(.+\)$', msg)
    assert m, msg
    if os.environ.get('COMLRL_DATA_DIR'):  # the layout named is the one the loader reads: the offline copy is there
        root = Path(os.environ['COMLRL_DATA_DIR'])
        rel = m.group(1)
        files = [rel.replace('{train,dev,test}', s) for s in ('train', 'dev', 'test')] if '{' in rel else [rel]
        for f in files: assert (root / f).is_file(), f'{name}: the error names {f}, which COMLRL_DATA_DIR does not hold'
        make_env(name).load_dataset(e['split'])  # and loads with it


def test_loader_error_names_a_data_dir_without_the_copy(tmp_path):
    r = _offline([sys.executable, '-c', "from comlrl.envs.writing import TLDREnv; TLDREnv().load_dataset('train')"], str(tmp_path))
    last = r.stderr.strip().splitlines()[-1]
    assert r.returncode == 1 and last.startswith('comlrl.core.DataUnavailableError: '), r.stderr
    assert f'COMLRL_DATA_DIR ({tmp_path}) holds no tldr/test.json' in last, last
    assert 'direct cause' not in r.stderr and 'During handling' not in r.stderr, r.stderr  # one error


def test_cli_says_the_same_in_one_line():
    r = _offline([sys.executable, '-m', 'comlrl.cli', 'train', '--env', 'tldr', '--max_steps', '1'])
    assert r.returncode == 2, r.stdout + r.stderr
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert lines == [lines[-1]] and lines[0].startswith("comlrl train: error: cannot load split 'train' of the dataset 'trl-lib/tldr'"), r.stderr
    assert 'set COMLRL_DATA_DIR to a folder holding its offline copy: tldr/test.json' in lines[0]
