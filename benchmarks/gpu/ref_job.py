"""CoMLRL 1.4.3's run of the GPU check's speed job (the reference library, `comlrl==1.4.3` from PyPI).

Its import name is this repository's, so it runs in a process of its own whose path starts with the folder it was
installed into (`pip install --no-deps --target DIR comlrl==1.4.3`) and `stubs/` (a stand-in for `wandb`, which 1.4.3
imports at module top and never calls here): `check.py` starts it so, without this repository on the path.

    PYTHONPATH=DIR:benchmarks/gpu/stubs python benchmarks/gpu/ref_job.py --device cuda --out ref.json

The job: two fully fine-tuned agents (1.4.3 trains whole models) on the same random Qwen2.5-1.5B in bfloat16, the same
prompts, K samples of exactly C new tokens (the same forced length), MAGRPO through its public API only, with the
settings that keep the comparison fair (one turn, temperature 1 without top-k/top-p, no evaluation, no W&B). 1.4.3
takes one prompt per optimizer step, so its step is one prompt: one warm-up prompt, then the timed ones. Steps begin
where agent 0's first `generate` of a prompt begins (instrumented from outside, as `benchmarks/ref_comlrl_job.py`)."""
import argparse, copy, os, sys, time

os.environ['WANDB_MODE'] = 'disabled'
os.environ.setdefault('TOKENIZERS_PARALLELISM', 'false')

from common import (Timer, completion_lengths, decode_weight_bytes, length_reward, peak_memory_bytes, speed_job, speed_record,
                    sync, tldr_prompts, versions, write_json)


class Steps:
    "Per-prompt steps from outside: a step begins at agent 0's generate; generation and reward seconds are summed within it."
    def __init__(self, timer: Timer): self.timer, self.rows, self.start, self.before = timer, [], None, {}

    def begin(self):
        self.end()
        self.start, self.before = time.perf_counter(), {n: sum(v) for n, v in self.timer.seconds.items()}

    def end(self):
        if self.start is None: return
        sync(self.timer.device)
        row = {n: sum(v) - self.before.get(n, 0.0) for n, v in self.timer.seconds.items()}
        self.rows.append({**row, 'step': time.perf_counter() - self.start})
        self.start = None


def run(device: str, dry_run: bool = False, quick: bool = False) -> dict:
    "The reference's speed run. Raises `AssertionError` unless every sample has exactly C new tokens."
    import comlrl
    if comlrl.__version__ != '1.4.3':
        raise RuntimeError(f"ref_job.py needs CoMLRL 1.4.3 first on the path, but imported comlrl {comlrl.__version__} "
                           f"from {comlrl.__file__}: install it apart (pip install --no-deps --target DIR comlrl==1.4.3) "
                           "and start this script with PYTHONPATH=DIR:benchmarks/gpu/stubs")
    from comlrl.trainers.reinforce import MAGRPOConfig, MAGRPOTrainer
    job = speed_job(device, dry_run, quick)
    s, tok, base, stop_ids, t0 = job.sizes, job.tokenizer, job.model, job.stop_ids, job.started
    agents = [base, copy.deepcopy(base)]
    prompts = s['warmup'] + s['timed']  # one prompt per step
    items = [{'prompt': q} for q in tldr_prompts(tok, prompts, s['P'])]
    timer, lengths = Timer(device), []
    steps = Steps(timer)

    def reward(a, b):  # two positional parameters: 1.4.3's rule for two agents
        with timer('reward'): return length_reward(a, b)

    for i, m in enumerate(agents):
        def timed_generate(*a, _generate=m.generate, _i=i, **k):
            if _i == 0: steps.begin()
            with timer('generation'): out = _generate(*a, **k)
            seqs = out.sequences if hasattr(out, 'sequences') else out
            lengths.extend(completion_lengths(seqs, k['input_ids'].shape[1], stop_ids))
            return out
        m.generate = timed_generate
    args = MAGRPOConfig(num_agents=2, num_train_epochs=1, agent_learning_rate=1e-5, num_generations=s['K'],
                        max_new_tokens=s['C'], temperature=1.0, top_p=1.0, top_k=0, num_turns=1, joint_mode='aligned',
                        early_termination_threshold=None, rollout_buffer_size=1, train_batch_size=1, eval_interval=0,
                        logging_steps=1, advantage_mode='mean', advantage_normalization=True, reference_kl_enabled=False,
                        parallel_training='none', agent_devices=device)
    tr = MAGRPOTrainer(agents=agents, num_agents=2, tokenizer=tok, train_dataset=items, eval_dataset=None, reward_func=reward,
                       formatters=lambda item: item['prompt'], wandb_config=None, args=args)
    load_s = time.perf_counter() - t0
    tr.train()
    steps.end()
    if set(lengths) != {s['C']}:
        raise AssertionError(f"the speed job needs exactly {s['C']} new tokens per sample; got lengths {sorted(set(lengths))}")
    return speed_record('CoMLRL 1.4.3', 2, False, s, steps.rows, peak_memory_bytes(device), load_s, lengths,
                        decode_weight_bytes(base), compiled=False, prompts_per_step=1,
                        versions={'comlrl': comlrl.__version__, **versions('transformers', 'accelerate')})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--device', default='cuda')
    ap.add_argument('--out', required=True, help='where the JSON result is written')
    ap.add_argument('--dry-run', action='store_true', help='tiny shapes (the CPU check in CI)')
    ap.add_argument('--quick', action='store_true')
    a = ap.parse_args()
    write_json(a.out, run(a.device, a.dry_run, a.quick))


if __name__ == '__main__': sys.exit(main())
