"""Where the benchmark job's time goes: run `comlrl_job.py` with the trainer's phases timed.

Wraps (by name, for this process only) the prefill, the generate calls, the rollout, the log-prob forwards and the
backward pass, runs the job, and prints the job's JSON line and then the seconds spent in each phase (summed over
agents and steps; the phases nest: `collect_rollout` contains `generate`, which contains `prefill_cache`; `backward`
contains `completion_logprobs`, the rest of `backward` is the backward pass itself).

    OMP_NUM_THREADS=1 python benchmarks/profile_phases.py --model-dir ../shared/models/smollm2-135m-instruct-gguf \
        --data ../shared/data/tldr/test.json --lora
"""
import atexit, functools, json, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import comlrl.generation as G, comlrl.samplers as R, comlrl.trainer as T

seconds = {}

def timed(owner, name):
    "Replace owner.name by a wrapper that adds its wall time to `seconds[name]`."
    f = getattr(owner, name)
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        t = time.perf_counter()
        try: return f(*args, **kwargs)
        finally: seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - t
    setattr(owner, name, wrapper)

for owner, name in [(G, 'prefill_cache'), (R, 'generate'), (T, 'completion_logprobs'),
                    (T.MATrainer, 'collect_rollout'), (T.MATrainer, 'rollout_tensors'), (T.MATrainer, 'backward'),
                    (T.MATrainer, 'optimizer_step')]:
    timed(owner, name)
atexit.register(lambda: print(json.dumps({'phase_seconds': {k: round(v, 1) for k, v in seconds.items()}})))

if __name__ == '__main__':
    import comlrl_job
    comlrl_job.main()
