"""Run every notebook in `nbs/` as one pytest test, with nbdev's own cell-skipping rules.

Cells flagged with a word from `tst_flags` in settings.ini (`#| slow`, `#| gpu`, `#| notest`) and `#| eval: false`
cells are skipped, exactly as `nbdev_test` skips them. Force flagged cells with `NBDEV_TEST_FLAGS="slow" pytest tests/`;
on a CUDA machine `gpu` cells run automatically."""
import os
from pathlib import Path

import pytest
from nbdev.config import get_config
from nbdev.test import test_nb as run_nb  # aliased: pytest would collect a bare `test_nb`

ROOT = Path(__file__).resolve().parents[1]
CFG = get_config(path=ROOT)
NBS_PATH = ROOT / CFG.get('nbs_path', 'nbs')
SKIP_FLAGS = CFG.get('tst_flags', '').split()
FORCE_FLAGS = os.environ.get('NBDEV_TEST_FLAGS', '').split()


def _cuda_available() -> bool:
    import torch
    return torch.cuda.is_available()


if _cuda_available(): FORCE_FLAGS.append('gpu')


def _notebooks():
    "nbdev's selection rule: skip names starting with `_` or `.`, and folders holding a `.notest` file."
    for p in sorted(NBS_PATH.rglob('*.ipynb')):
        rel = p.relative_to(NBS_PATH)
        if any(part.startswith(('_', '.')) for part in rel.parts): continue
        if (p.parent / '.notest').exists(): continue
        yield p


@pytest.fixture
def own_registries():
    """Each notebook sees comlrl's registries of algorithms and environments as a fresh process has them: a notebook's
    export cells register the classes they define (e.g. 11_magrpo's `MAGRPOTrainer`, in the notebook's namespace), and
    in the one pytest process those would stay registered for the notebooks after it."""
    from comlrl.core import ALGORITHMS, ENVIRONMENTS
    for reg in (ALGORITHMS, ENVIRONMENTS): reg.find_builtins()
    saved = [(reg, dict(reg._entries)) for reg in (ALGORITHMS, ENVIRONMENTS)]
    yield
    for reg, entries in saved: reg._entries.clear(); reg._entries.update(entries)


@pytest.fixture
def shell_released(monkeypatch):
    """Each notebook's IPython shell is reset right after the notebook, not at the process's exit: every shell registers
    `atexit_operations` (a reset that collects garbage), and with all the notebooks' shells alive until exit those
    resets took about 90 s after the last test. A hook the notebook's own code registers (a function of the notebook's
    namespace, e.g. 21a's clean-up of a file) runs just before its shell's reset, while the names it uses still exist;
    other atexit hooks (libraries') pass through to `atexit` as they are."""
    import atexit
    from IPython.core.interactiveshell import InteractiveShell
    real, shells, hooks = atexit.register, [], []
    def register(f, *args, **kwargs):
        if isinstance(getattr(f, '__self__', None), InteractiveShell) and f.__name__ == 'atexit_operations': shells.append(f)
        else: hooks.append((f, args, kwargs))
        return f
    monkeypatch.setattr(atexit, 'register', register)
    yield
    namespaces = [id(f.__self__.user_ns) for f in shells]
    for f, args, kwargs in hooks:
        if id(getattr(f, '__globals__', None)) in namespaces: f(*args, **kwargs)  # the notebook's own: run it now
        else: real(f, *args, **kwargs)
    for f in shells: f()


@pytest.mark.parametrize('nb', list(_notebooks()), ids=lambda p: str(p.relative_to(NBS_PATH)))
def test_notebook(nb, own_registries, shell_released):
    ok, secs = run_nb(nb, skip_flags=SKIP_FLAGS, force_flags=FORCE_FLAGS, basepath=ROOT)
    assert ok, f'{nb.name} failed; the failing cell and its traceback are in the captured stderr above'
