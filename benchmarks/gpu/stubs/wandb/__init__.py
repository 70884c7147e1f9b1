"""A stand-in for `wandb`, for CoMLRL 1.4.3 in the GPU check only (`ref_job.py`): 1.4.3 imports wandb at module top,
and the check runs it with `wandb_config=None`, so it never starts a run. Any call that would log raises, naming this
file, rather than pretending to log."""
run = None


def _refuse(*args, **kwargs):
    raise RuntimeError("wandb is a stub here (benchmarks/gpu/stubs/wandb): the GPU check runs CoMLRL 1.4.3 without W&B")


init = log = finish = Html = _refuse
