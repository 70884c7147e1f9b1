"""Every form of reward function the reference library accepts, scored by the reference and by comlrl.

Run with the reference installed (its own venv, `bash benchmarks/setup_ref_venv.sh`) it scores each form the way
CoMLRL 1.4.3 does, with its own code: `MAGRPOTrainer._compute_rewards` (the REINFORCE family: one call per joint
action, `prompts=[agent 0's prompt]`, the first number kept) and, for the actor-critic family, `call_reward_function`
then `normalize_reward_lengths` and `_expand_rewards` (one call per task item with the K samples). It writes what each
form gives, or the error it raises, to `benchmarks/results/reward_forms/reference.json`:

    benchmarks/.venv-ref/bin/python benchmarks/reward_forms.py      # the reference's answers -> results/reward_forms/reference.json

`tests/test_reward_forms.py` scores the same forms on the same joint actions with comlrl and compares: the reference's
classes here (`comlrl.trainers.reinforce`, `comlrl.trainers.actor_critic`) must give the same numbers for every form
the reference accepts; comlrl's own trainers must give the same numbers or one error that says how to fix it.
"""
import functools, json, math, sys
from pathlib import Path

import numpy as np
import torch

OUT = Path(__file__).resolve().parent / 'results' / 'reward_forms' / 'reference.json'

# Two agents, K = 2 samples each at one node; the prompts are each agent's formatted prompt.
ITEM = {'prompt': 'Describe the sea:', 'word': 'blue'}
PROMPTS = ['Describe the sea briefly:', 'Describe the sea at length:']
COMPLETIONS = [['The sea is blue.', 'Waves.'], ['The sea is deep, wide and blue under the sky.', 'Salt water everywhere.']]
K = 2

def ratio(a: str, b: str) -> float: return len(b) / max(len(a), 1)

class Judge:
    "A callable object."
    def __call__(self, c1, c2): return [ratio(c1[0], c2[0])]

def _target(c1, c2, target=2.0): return [-abs(ratio(c1[0], c2[0]) - target)]

def _with_default(c1, c2, scale=1.0):  # a third positional parameter: the reference passes the prompts first
    return [float(len(str(c1[0])))]

def _batch_items_positional(c1, c2, batch_items=None):  # on the reference: prompts first, batch_items twice, then f(c1, c2)
    return [ratio(c1[0], c2[0]) + (batch_items is None)]

FORMS = {  # name -> (function, number of agents); each is a function a CoMLRL user could pass as reward_func
    'list': (lambda c1, c2: [ratio(c1[0], c2[0])], 2),
    'number': (lambda c1, c2: ratio(c1[0], c2[0]), 2),
    'int': (lambda c1, c2: len(c2[0]) - len(c1[0]), 2),
    'tuple': (lambda c1, c2: (ratio(c1[0], c2[0]),), 2),
    'tensor': (lambda c1, c2: torch.tensor([ratio(c1[0], c2[0])]), 2),
    'numpy_number': (lambda c1, c2: np.float64(ratio(c1[0], c2[0])), 2),
    'one_per_agent': (lambda c1, c2: [float(len(c1[0])), float(len(c2[0]))], 2),
    'one_per_sample': (lambda c1, c2: [ratio(a, b) for a, b in zip(c1, c2)], 2),
    'kwargs': (lambda c1, c2, **kw: [float(kw['batch_items'][0]['word'] in c2[0]) + ratio(c1[0], c2[0])], 2),
    'batch_items_keyword': (lambda c1, c2, *, batch_items: [float(batch_items[0]['word'] in c2[0])], 2),
    'batch_items_positional': (_batch_items_positional, 2),
    'prompts_first': (lambda prompts, c1, c2: [float(len(prompts[0].lower())) + ratio(c1[0], c2[0])], 2),
    'prompts_other_name': (lambda p, c1, c2: [float(len(p[0])) - ratio(c1[0], c2[0])], 2),
    'prompts_keyword': (lambda c1, c2, *, prompts: [float(len(prompts[0])) * ratio(c1[0], c2[0])], 2),
    'one_parameter': (lambda completions: [ratio(completions[0][0], completions[1][0])], 2),
    'varargs': (lambda *cs: [ratio(cs[0][0], cs[1][0])], 2),
    'varargs_batch_items': (lambda *cs, batch_items=None: [ratio(cs[0][0], cs[1][0]) + len(batch_items)], 2),
    'partial': (functools.partial(_target, target=2.5), 2),
    'callable_object': (Judge(), 2),
    'third_positional_default': (_with_default, 2),
    'single_agent': (lambda c1: [float(len(c1[0]))], 1),
    'single_agent_prompts': (lambda prompts, c1: [float(len(prompts[0]) + len(c1[0]))], 1),
    'three_agents': (lambda c1, c2, c3: [float(len(c1[0]) + len(c2[0]) - len(c3[0]))], 3),
    'dict': (lambda c1, c2: {'reward': ratio(c1[0], c2[0])}, 2),
    'none': (lambda c1, c2: None, 2),
}
PROCESSOR = lambda r: 10.0 * r - 1.0  # every form is scored with a reward_processor too

def inputs(n: int):
    "The node's completions, each agent's prompt, for n agents (the third agent repeats the first)."
    comps = [COMPLETIONS[i % 2] for i in range(n)]
    return comps, [PROMPTS[i % 2] for i in range(n)]

def _answer(fn):
    try: return [float(x) for x in fn()]
    except Exception as e: return {'error': f'{type(e).__name__}: {e}'}

def reference_answers() -> dict:
    "Each form scored by the reference's own code (run with comlrl==1.4.3 installed)."
    from types import SimpleNamespace
    from comlrl.trainers.actor_critic.ac_base import ActorCriticTrainerBase
    from comlrl.trainers.reinforce.magrpo import MAGRPOTrainer
    from comlrl.utils.reward_utils import call_reward_function, normalize_reward_lengths
    out = {}
    for name, (f, n) in FORMS.items():
        comps, prompts = inputs(n)
        res = {}
        for proc_name, proc in (('plain', lambda x: x), ('processed', PROCESSOR)):
            me = SimpleNamespace(num_agents=n, reward_func=f, reward_processor=proc)
            res[f'reinforce_{proc_name}'] = _answer(lambda: MAGRPOTrainer._compute_rewards(me, [prompts[0]], [list(c) for c in comps], batch_items=[ITEM]))
        for k in (1, K):
            def ac():
                r = call_reward_function(f, prompts, [c[:k] for c in comps], num_agents=n, batch_items=[ITEM])
                r = normalize_reward_lengths([float(PROCESSOR(x)) for x in r], num_agents=n, num_generations=k, algorithm='IAC')
                m = ActorCriticTrainerBase._expand_rewards(SimpleNamespace(args=SimpleNamespace(num_agents=n)), r, num_ret=k)
                if any(row != m[0] for row in m): raise ValueError(f'per-agent rewards {m}')  # recorded, not trained on as one team reward
                return m[0]
            res[f'actor_critic_k{k}'] = _answer(ac)
        out[name] = res
    return out

if __name__ == '__main__':
    import importlib.metadata as md
    if md.version('comlrl') != '1.4.3': sys.exit('run this with the reference installed: benchmarks/.venv-ref/bin/python benchmarks/reward_forms.py')
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({'comlrl': md.version('comlrl'), 'forms': reference_answers()}, indent=1) + '\n')
    print(f'{OUT}: {len(FORMS)} forms')
