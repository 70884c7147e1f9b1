"""The hook table of `04_trainer` (`HOOKS`) names, for each hook, the trainers that override it: checked here against
every trainer class comlrl defines (its own, and the compatibility layer's at the reference's paths), which the
notebook cannot import (they come in later notebooks)."""
import importlib, inspect, pkgutil

import comlrl
from comlrl.trainer import HOOKS, TRAINER_CALLS, MATrainer

REFERENCE_PACKAGES = ('comlrl.trainers.reinforce', 'comlrl.trainers.actor_critic')  # the compatibility layer's trainers


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


def _label(cls) -> str:
    "A trainer's name in the table: its class name, the compatibility layer's with its package ('reinforce.MAGRPOTrainer')."
    pkg = next((p for p in REFERENCE_PACKAGES if cls.__module__.startswith(p)), None)
    return f"{pkg.rsplit('.', 1)[1]}.{cls.__name__}" if pkg else cls.__name__


def _owner(cls, name):
    "The class whose body defines `name` for `cls` (the first in its method resolution order)."
    return next(c for c in cls.__mro__ if name in vars(c))


def _overrides(cls, name) -> bool:
    "Whether `cls` changes `name` from what every one of its trainer bases has (a mixin such as the reference's counts)."
    parents = [b for b in cls.__bases__ if issubclass(b, MATrainer)]
    return all(_owner(cls, name) is not _owner(p, name) for p in parents)


def test_every_public_name_is_a_hook_or_a_call():
    public = {k for k in dir(MATrainer) if not k.startswith('_')}
    assert public == {h.name for h in HOOKS} | set(TRAINER_CALLS)


def test_the_overriding_trainers_are_those_the_table_names():
    trainers = _trainers()
    assert len({_label(c) for c in trainers}) == len(trainers), 'two trainers share a label'
    for h in HOOKS:
        actual = {_label(c) for c in trainers if _overrides(c, h.name)}
        assert actual == set(h.overridden_by), (h.name, sorted(actual), sorted(h.overridden_by))


def test_only_the_reference_layer_overrides_the_other_public_methods():
    "train, evaluate, ...: the loop's and the user's, not hooks; the compatibility layer replaces some with the reference's API."
    for c in _trainers():
        changed = {k for k in TRAINER_CALLS if _overrides(c, k)}
        if c.__module__.startswith(REFERENCE_PACKAGES): continue
        assert changed == set(), (c.__name__, changed)


def test_hook_methods_take_the_arguments_the_table_lists():
    for h in HOOKS:
        if h.inputs is not None:
            assert list(inspect.signature(getattr(MATrainer, h.name)).parameters)[1:] == list(h.inputs), h.name
