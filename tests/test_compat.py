"""The compatibility layer against the reference library's own API, as read from its wheel (CoMLRL 1.4.3,
`tests/data/comlrl-1.4.3-api.json`, written by `tools/reference_api.py`):

- every config class of the trainers comlrl provides (the REINFORCE family, the centralised MAGRPO, IAC, MAAC) has the
  reference's fields with the reference's defaults, and builds with every field given at that default;
- every such trainer takes the reference's constructor arguments (same names, same defaults), is built with all of
  them, and has the reference's public methods with the reference's parameters;
- every module path of the reference either imports or, for what comlrl does not provide, raises `NotProvidedError`
  (an `ImportError` that says so), and every public name of an importable module is there or raises it.
"""
import dataclasses, importlib, inspect, json, os, sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
API = json.loads((ROOT / 'tests' / 'data' / 'comlrl-1.4.3-api.json').read_text())
CONFIGS = ['MAGRPOConfig', 'MAREINFORCEConfig', 'MARLOOConfig', 'MAReMaxConfig', 'CentralizedMAGRPOConfig', 'IACConfig', 'MAACConfig', 'MADPOConfig', 'MARLHFConfig',
           'MADPOIterConfig', 'MARLHFIterConfig']
TRAINERS = ['MAGRPOTrainer', 'MAREINFORCETrainer', 'MARLOOTrainer', 'MAReMaxTrainer', 'CentralizedMAGRPOTrainer', 'IACTrainer', 'MAACTrainer', 'MADPOTrainer', 'MARLHFTrainer',
            'MADPOIterTrainer', 'MARLHFIterTrainer']
PREFERENCE = ['JointRewardModel']  # the reference's reward model class (comlrl's is built from a causal LM: 17c_marlhf)
NOT_PROVIDED_MODULES = set()  # every module path of the reference imports (comlrl.models.actor_critic too: 53c_models_actor_critic)


def _get(name: str, module: str):
    return getattr(importlib.import_module(module), name)


def test_the_data_is_the_wheels():
    assert (API['package'], API['version']) == ('comlrl', '1.4.3')
    assert len(API['modules']) == 34 and set(CONFIGS) <= set(API['configs']) and set(TRAINERS) <= set(API['trainers'])
    assert set(API['configs']) | {c for c in API['trainers']} >= set(CONFIGS + TRAINERS) | set(PREFERENCE) - {'JointRewardModel'}


@pytest.mark.parametrize('name', CONFIGS)
def test_config_has_the_reference_fields_and_defaults(name):
    ref = API['configs'][name]
    cls = _get(name, ref['module'])
    ours = {f.name: f for f in dataclasses.fields(cls)}
    assert set(ours) - set(ref['fields']) == {'comlrl'}, f'{name}: fields the reference does not have'
    assert set(ref['fields']) - set(ours) == set(), f'{name}: reference fields missing'
    for f, default in ref['fields'].items():
        assert ours[f].default == default, f'{name}.{f}: default {ours[f].default!r}, the reference has {default!r}'
    assert list(ours)[:len(ref['fields'])] == list(ref['fields']) or set(ours) >= set(ref['fields'])
    cfg = cls(**ref['fields'])  # every field given, at the reference's default
    for f, default in ref['fields'].items():
        if f == 'train_batch_size' and default is None: assert cfg.train_batch_size == cfg.rollout_buffer_size  # the reference's rule
        elif f == 'parallel_training': assert cfg.parallel_training == 'none'
        else: assert getattr(cfg, f) == default, f
    assert cls() == cfg
    cfg.comlrl_config()  # and it translates into comlrl's config


@pytest.mark.parametrize('name', PREFERENCE)
def test_preference_trainers_are_one_clear_error(name):
    from comlrl.reference.compat import NotProvidedError
    module = (API['configs'].get(name) or API['trainers'].get(name) or API['classes'][name])['module']
    for path in (module, 'comlrl.trainers.preference'):
        with pytest.raises(NotProvidedError, match='is not provided by comlrl'):
            exec(f'from {path} import {name}')


@pytest.fixture(scope='module')
def tiny(tmp_path_factory):
    from comlrl.models import tiny_llama
    d = tmp_path_factory.mktemp('tiny') / 'model'
    model, tok = tiny_llama()
    model.save_pretrained(d); tok.save_pretrained(d)
    return str(d), tok


def _reference_arguments(name: str, model: str, tok, out: str) -> dict:
    "Every constructor argument of the reference's trainer, at its default unless a working value is needed."
    init = API['trainers'][name]['init']
    kw = {p['name']: p.get('default') for p in init if p['kind'] not in ('var_keyword', 'var_positional')}
    cfg_name = name.replace('Trainer', 'Config')
    cfg = _get(cfg_name, API['configs'][cfg_name]['module'])
    small = dict(num_turns=1, max_new_tokens=4, comlrl={'output_dir': out})
    if 'num_generations' in API['configs'][cfg_name]['fields'] and name not in ('IACTrainer', 'MAACTrainer'): small['num_generations'] = 2
    kw.update(tokenizer=tok, reward_func=lambda a, b: [float(len(b[0]) > len(a[0]))], train_dataset=[{'prompt': 'Say hi.'}] * 2,
              eval_dataset=[{'prompt': 'Say hi.'}], args=cfg(**small))
    if name == 'CentralizedMAGRPOTrainer':
        from comlrl.trainers.reinforce import TaggedCentralizedComparatorAdapter
        kw.update(centralized_adapter=TaggedCentralizedComparatorAdapter(), agents=[model])
    else: kw['agent_model'] = model
    if name in ('IACTrainer', 'MAACTrainer'): kw['critic_model'] = model  # MARLHF's RL stage (MAGRPO here) has none
    return kw


@pytest.mark.parametrize('name', TRAINERS)
def test_trainer_takes_the_reference_arguments_and_methods(name, tiny, tmp_path):
    ref = API['trainers'][name]
    cls = _get(name, ref['module'])
    ours = inspect.signature(cls.__init__).parameters
    for p in ref['init']:
        if p['kind'] in ('var_keyword', 'var_positional'): continue
        assert p['name'] in ours, f"{name} does not take the reference's {p['name']}="
        if 'default' in p: assert ours[p['name']].default == p['default'], f"{name}({p['name']}=): default differs"
    model, tok = tiny
    tr = cls(**_reference_arguments(name, model, tok, str(tmp_path / 'out')))
    for method, params in ref['methods'].items():
        assert callable(getattr(tr, method, None)), f'{name}.{method} missing'
        have = inspect.signature(getattr(tr, method)).parameters
        for p in params:
            if p['kind'] not in ('var_keyword', 'var_positional'): assert p['name'] in have, f"{name}.{method} does not take {p['name']}="
    assert tr.evaluate() and all(k.startswith('eval/turn_1/') for k in tr.evaluate())
    assert [len(b) for b in tr.get_train_dataloader()] == [1, 1]


def test_every_module_path_imports_or_says_it_is_not_provided():
    from comlrl.reference.compat import NotProvidedError
    served, refused = [], []
    for module in API['modules']:
        try: importlib.import_module(module); served.append(module)
        except NotProvidedError: refused.append(module)
        except ModuleNotFoundError:
            assert module in NOT_PROVIDED_MODULES, f'{module}: a bare ModuleNotFoundError'
    assert len(served) + len(refused) + len(NOT_PROVIDED_MODULES) == 34
    assert 'comlrl.models.actor_critic' in served
    assert all(m.startswith('comlrl.trainers.preference.') for m in refused), refused


def test_every_public_name_is_there_or_says_it_is_not_provided():
    from comlrl.reference.compat import NotProvidedError
    there, refused = 0, 0
    for module, info in API['modules'].items():
        if module in NOT_PROVIDED_MODULES: continue
        try: mod = importlib.import_module(module)
        except NotProvidedError: refused += len(info['public']); continue
        for name in info['public']:
            try: getattr(mod, name); there += 1
            except NotProvidedError: refused += 1
    total = sum(len(i['public']) for m, i in API['modules'].items() if m not in NOT_PROVIDED_MODULES)
    assert there + refused == total
    assert there >= 100, there
    mod = importlib.import_module('comlrl.models.actor_critic')  # comlrl.models is comlrl's module; this path is the reference's
    assert all(getattr(mod, n) for n in API['modules']['comlrl.models.actor_critic']['public'])


def test_coming_from_comlrl_lists_every_name():
    from comlrl.reference.compat import REFERENCE_NAMES
    names = {n for info in API['modules'].values() for n in info['public']}
    assert set(REFERENCE_NAMES) == names, (names - set(REFERENCE_NAMES), set(REFERENCE_NAMES) - names)


def reference_name_rows() -> list:
    "(name, what its path here does, comlrl's own) for every public name of CoMLRL 1.4.3, sorted: the table of 50_from_comlrl."
    import sys
    from comlrl.reference.compat import NotProvidedError, REFERENCE_NAMES
    served_pkgs = ['comlrl.trainers.reinforce', 'comlrl.trainers.actor_critic', 'comlrl.utils', 'comlrl.schedulers', 'comlrl.trainers.preference',
                   'comlrl.models.actor_critic']
    for p in served_pkgs: importlib.import_module(p)
    modules = ['comlrl', 'comlrl.trainers'] + sorted(m for m in sys.modules if any(m == p or m.startswith(p + '.') for p in served_pkgs))
    def where(name):
        refused = REFERENCE_NAMES[name].startswith('not in comlrl')  # its module refuses to import, saying why
        for m in modules:
            try: getattr(sys.modules[m], name); return 'served'
            except NotProvidedError: refused = True
            except AttributeError: pass
        return 'refused, with the reason' if refused else 'no such path here'
    return [(n, where(n), REFERENCE_NAMES[n]) for n in sorted(REFERENCE_NAMES, key=str.lower)]


def test_coming_from_comlrl_shows_the_table_the_code_gives():
    from execnb.nbio import read_nb
    text = '\n'.join(c.source for c in read_nb(ROOT / 'nbs' / '50_from_comlrl.ipynb').cells if c.cell_type == 'markdown')
    for n, w, e in reference_name_rows():
        assert f'| `{n}` | {w} | {e} |' in text, f'50_from_comlrl: the row of {n} is not | `{n}` | {w} | {e} |'


def test_core_types_carry_no_compatibility_parameters():
    "comlrl's own classes lose what exists only for the reference: it is the layer's (51_compat)."
    import inspect
    from comlrl.core import RewardFunction
    from comlrl.trainer import MAConfig, MATrainer
    reference_only = {'wandb_config', 'external_transition', 'reward_processor', 'agent_model', 'model_config'}
    assert not reference_only & set(inspect.signature(MATrainer.__init__).parameters)
    assert 'reward_processor' not in inspect.signature(RewardFunction.__init__).parameters
    assert 'external_prompt_passthrough' not in {f.name for f in dataclasses.fields(MAConfig)}


def test_comlrl_never_imports_the_layer():
    """Importing any of comlrl's own modules leaves the compatibility layer unloaded (it sits on top, in its wing
    `comlrl.reference`, 51_compat): `comlrl.trainers` loads only the wing's table of the reference's exports (57_ref_trainers)."""
    import subprocess, sys
    own = sorted(p.stem for p in (ROOT / 'comlrl').glob('*.py') if not p.stem.startswith('_'))
    own += [f'trainers.{p.stem}' for p in (ROOT / 'comlrl' / 'trainers').glob('*.py') if not p.stem.startswith('_')]
    own += [f'envs.{p.stem}' for p in (ROOT / 'comlrl' / 'envs').glob('*.py') if not p.stem.startswith('_')]
    code = ('import importlib, sys\n' + ''.join(f"importlib.import_module('comlrl.{m}')\n" for m in own) +
            "print(sorted(m for m in sys.modules if m.startswith(('comlrl.reference.', 'comlrl.utils', 'comlrl.schedulers', 'comlrl.trainers.reinforce', "
            "'comlrl.trainers.actor_critic', 'comlrl.trainers.preference')) and m != 'comlrl.reference.trainers'))")
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == '[]', out.stdout


@pytest.mark.skipif(not os.environ.get('COMLRL_REF_SITE'), reason='CoMLRL 1.4.3 is not installed apart (COMLRL_REF_SITE)')
def test_centralized_prompt_is_the_references():
    "The centralised adapter builds the reference's prompt, character for character (its module imports nothing of the reference's)."
    import importlib.util
    path = Path(os.environ['COMLRL_REF_SITE']) / 'comlrl' / 'trainers' / 'preference' / 'centralized.py'
    spec = importlib.util.spec_from_file_location('_reference_centralized', path)
    ref = importlib.util.module_from_spec(spec); spec.loader.exec_module(ref)
    from comlrl.trainers.reinforce import TaggedCentralizedComparatorAdapter
    ours, theirs = TaggedCentralizedComparatorAdapter(), ref.TaggedCentralizedComparatorAdapter()
    for prompts in (['Write a haiku.'], ['Be brief.', 'Be long:\nvery long.'], ['a', '', 'c']):
        assert ours.build_prompt({'prompt': 'x'}, prompts) == theirs.build_prompt({'prompt': 'x'}, prompts)
    text = '<agent_0> a </agent_0> <AGENT_2>c</agent_2>'
    assert ours.parse_completion(text, {}, 3) == list(theirs.parse_completion(text, {}, 3))


@pytest.mark.skipif(not os.environ.get('COMLRL_REF_SITE'), reason='CoMLRL 1.4.3 is not installed apart (COMLRL_REF_SITE)')
def test_value_head_models_are_the_references():
    "comlrl.models.actor_critic's classes have the reference's parameters, and with its weights give its outputs."
    import importlib.util, torch
    path = Path(os.environ['COMLRL_REF_SITE']) / 'comlrl' / 'models' / 'actor_critic.py'
    spec = importlib.util.spec_from_file_location('_reference_actor_critic', path)
    ref = sys.modules['_reference_actor_critic'] = importlib.util.module_from_spec(spec)  # its dataclass looks its module up
    try: spec.loader.exec_module(ref)
    finally: del sys.modules['_reference_actor_critic']
    from comlrl.models.actor_critic import CausalLMWithValueHead
    from comlrl.models import tiny_llama
    lm, tok = tiny_llama()
    ids = tok('Summarise: the cat sat.', return_tensors='pt').input_ids
    for kw in ({}, {'value_head_hidden_dim': 16}, {'attach_value_head': False}):
        ours, theirs = CausalLMWithValueHead(lm, **kw), ref.CausalLMWithValueHead(lm, **kw)
        assert {k: v.shape for k, v in ours.state_dict().items()} == {k: v.shape for k, v in theirs.state_dict().items()}, kw
        ours.load_state_dict(theirs.state_dict())
        for out_values in (True, False):
            a, b = ours(ids, output_values=out_values), theirs(ids, output_values=out_values)
            assert torch.equal(a.logits, b.logits) and (a.values is None) == (b.values is None), kw
            if a.values is not None: assert torch.equal(a.values, b.values) and torch.equal(a.hidden_states, b.hidden_states)
            else: assert len(a.hidden_states) == len(b.hidden_states)
