"""The hook table of `04_trainer` (`HOOKS`) against every trainer class comlrl defines (its own, and the compatibility
layer's, in comlrl.reference), which the notebook cannot import (they come in later notebooks): trainers override
hooks, never the loop's own calls."""
import importlib, inspect, pkgutil

import comlrl
from comlrl.trainer import HOOKS, TRAINER_CALLS, MATrainer, hooks_markdown, overrides

REFERENCE_PACKAGES = ('comlrl.reference.',)  # the compatibility layer's trainers, in its wing (re-exported at the reference's paths)


def _trainers() -> list:
    "Every subclass of MATrainer defined in the comlrl package (each module imported first)."
    for m in pkgutil.walk_packages(comlrl.__path__, 'comlrl.'):
        if not m.name.startswith('comlrl.trainers.preference'): importlib.import_module(m.name)  # preference: refused by design
    out, todo = [], [MATrainer]
    while todo:
        for c in todo.pop().__subclasses__():
            if c.__module__.startswith('comlrl.') and c not in out: out.append(c)
            todo.append(c)
    return out


def test_every_public_name_is_a_hook_or_a_call():
    public = {k for k in dir(MATrainer) if not k.startswith('_')}
    assert public == {h.name for h in HOOKS} | set(TRAINER_CALLS)


def test_every_trainer_overrides_some_hook_and_the_hooks_exist():
    "The table's 'overridden by' column is read from the classes (`overrides`): every trainer changes at least one hook."
    names = {h.name for h in HOOKS}
    for c in _trainers():
        assert any(overrides(c, n) for n in names) or c.__module__.startswith(REFERENCE_PACKAGES), c.__name__
    table = hooks_markdown(HOOKS, _trainers())
    assert 'MAGRPOTrainer' in table.split('`advantages(')[1].split('\n')[0]


STAGED = {  # trainers whose algorithm is more than the loop's hooks, and the loop's calls each of them changes
    'MADPOTrainer': {'train', 'training_step'},  # the pair set collected before the loop; each step a DPO step on pairs, not a rollout
    'MARLHFTrainer': {'train', 'training_step'},  # stages 1-2 before the RL trainer's loop; the RL steps scored by its reward model
    # the online versions (17e): a round's comparator pairs collected by the step that opens it, the steps split over the rounds
    'MADPOIterTrainer': {'train', 'training_step', 'num_training_steps'},
    'MARLHFIterTrainer': {'train', 'training_step', 'num_training_steps'},
}


def test_only_the_reference_layer_overrides_the_other_public_methods():
    "train, evaluate, ...: the loop's and the user's, not hooks; the compatibility layer replaces some with the reference's API."
    for c in _trainers():
        changed = {k for k in TRAINER_CALLS if overrides(c, k)}
        if c.__module__.startswith(REFERENCE_PACKAGES): continue
        assert changed <= STAGED.get(c.__name__, set()), (c.__name__, changed)


def test_hook_methods_take_the_arguments_the_table_lists():
    for h in HOOKS:
        if h.inputs is not None:
            assert list(inspect.signature(getattr(MATrainer, h.name)).parameters)[1:] == list(h.inputs), h.name
