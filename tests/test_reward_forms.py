"""Every form of reward function the reference library CoMLRL 1.4.3 accepts, scored by comlrl on the same joint actions
as the reference scored them with its own code (`benchmarks/reward_forms.py`, run with `comlrl==1.4.3` installed; its
answers are committed in `benchmarks/results/reward_forms/reference.json`).

- The reference's classes here (`comlrl.trainers.reinforce`, `comlrl.trainers.actor_critic`, through
  `PerJointActionReward` / `PerItemReward`) give the reference's numbers for every form and every way of calling, and
  fail where the reference fails (or, for per-agent rewards, which comlrl's team cannot take, with an error saying so).
- comlrl's own trainers (`RewardFunction`, `00_core`) give the same numbers, or one error that says how to fix it, or,
  for the one form whose reading differs by design (a third positional parameter, which the reference fills with its
  prompts), say so in an INFO line: no form trains on different rewards silently.
"""
import json, logging, math, sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'benchmarks'))
from reward_forms import FORMS, ITEM, K, PROCESSOR, inputs  # noqa: E402

REF = json.loads((ROOT / 'benchmarks' / 'results' / 'reward_forms' / 'reference.json').read_text())
FIXES = ('comlrl.trainers.reinforce', 'per_joint_action', 'one per agent')  # an error names one of these ways out


def _same(got, want) -> bool:
    if isinstance(want, dict): return isinstance(got, Exception)  # the reference fails: so must comlrl's layer
    return not isinstance(got, Exception) and len(got) == len(want) and all(math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6) for a, b in zip(got, want))


def _run(fn):
    try: return [float(x) for x in fn()]
    except Exception as e: return e


def test_the_forms_are_the_references():
    assert REF['comlrl'] == '1.4.3' and set(REF['forms']) == set(FORMS)
    trains = [f for f, r in REF['forms'].items() if isinstance(r['reinforce_plain'], list)]
    assert len(trains) == 23, trains  # the forms that train on the reference; 'dict' and 'none' fail there


@pytest.mark.parametrize('name', list(FORMS))
def test_reference_classes_give_the_references_rewards(name):
    from comlrl.reference.compat import PerItemReward, PerJointActionReward
    f, n = FORMS[name]
    comps, prompts = inputs(n)
    ref = REF['forms'][name]
    for key, proc in (('reinforce_plain', None), ('reinforce_processed', PROCESSOR)):
        got = _run(lambda: PerJointActionReward(f, n, proc)(*comps, prompts=[[p] * K for p in prompts], batch_items=[ITEM] * K))
        assert _same(got, ref[key]), (key, got, ref[key])
    for k in (1, K):
        got = _run(lambda: PerItemReward(f, n, PROCESSOR, group_size=k)(*[c[:k] for c in comps], prompts=[[p] * k for p in prompts],
                                                                       batch_items=[ITEM] * k))
        want = ref[f'actor_critic_k{k}']
        if isinstance(want, dict) and 'per-agent rewards' in want['error']: assert 'one per agent' in str(got), got  # refused, saying why
        else: assert _same(got, want), (k, got, want)


@pytest.mark.parametrize('name', [f for f, r in REF['forms'].items() if isinstance(r['reinforce_plain'], list)])
def test_comlrl_trainers_same_rewards_or_one_error_or_said(name, caplog):
    from comlrl.core import RewardFunction
    f, n = FORMS[name]
    comps, prompts = inputs(n)
    want = REF['forms'][name]['reinforce_plain']
    with caplog.at_level(logging.INFO, logger='comlrl'):
        caplog.handler.setLevel(logging.INFO)
        logging.getLogger('comlrl').addHandler(caplog.handler)
        try: got = _run(lambda: RewardFunction(f, n)(comps, prompts=[[p] * K for p in prompts], batch_items=[ITEM] * K).total.tolist())
        finally: logging.getLogger('comlrl').removeHandler(caplog.handler)
    if _same(got, want): return
    if isinstance(got, Exception):
        assert any(x in str(got) for x in FIXES), f'{name}: an error that does not say how to fix it: {got}'
        return
    said = ' '.join(r.getMessage() for r in caplog.records)
    if name == 'batch_items_positional':  # the reference's call fails ('multiple values for batch_items'), its retry drops them
        assert _same(got, [x - 1 for x in want]), got  # comlrl gives the function the batch_items it asks for
        return
    assert 'CoMLRL 1.4.3 would pass its prompts to the first' in said, f'{name}: different rewards {got} (reference {want}), silently'
