"""Speed/memory benchmark job for the *reference* library, CoMLRL 1.4.3 (PyPI `comlrl==1.4.3`).

Run it with the reference virtualenv, never with this repo's own environment:

    benchmarks/.venv-ref/bin/python benchmarks/ref_comlrl_job.py            # the full job
    benchmarks/.venv-ref/bin/python benchmarks/ref_comlrl_job.py --prompts 1 --max-new-tokens 8   # smoke run

The venv is made by `bash benchmarks/setup_ref_venv.sh` (one pip command, so the reference's unpinned torch resolves
to the same torch==2.13.0 as ours; gguf and accelerate are needed to load the GGUF model).

The job (fixed by the benchmark spec): 2 agents, each a full fp32 copy of SmolLM2-135M-Instruct (local Q4_1 GGUF,
dequantised on load), MAGRPO, single turn, the first N TL;DR test posts as prompts, K samples per agent per prompt,
temperature-1 sampling of up to 64 new tokens, one AdamW step per agent per prompt (lr 1e-5), no evaluation, no W&B,
one CPU thread. The reward is a cheap length-shaping function so that the reward is not what is measured.

Only the reference's public API is used (`MAGRPOConfig`, `MAGRPOTrainer(...)`, `trainer.train()`). Instrumentation
is done from outside: each agent's `generate` is wrapped to count/time generated tokens, and a forward pre-hook counts
the gradient-carrying forward passes of the policy update.

Prints exactly one JSON line on stdout at the end (progress bars and warnings go to stderr), with the job's FLOPs
counted by `flops.py` from the prompt lengths (as this library tokenised them) and completion lengths of the run.
"""

import os

# Pin to one CPU thread and keep everything offline *before* torch / transformers / wandb are imported.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ["WANDB_MODE"] = "disabled"  # comlrl imports wandb unconditionally; make sure it can never go online
os.environ["WANDB_SILENT"] = "true"
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse
import dataclasses
import json
import platform
import random
import resource
import time
from pathlib import Path

import numpy as np
import torch

from flops import Shapes, job_flops

# the offline assets, found like the tests find them
DEFAULT_MODEL_DIR = Path(os.environ.get("COMLRL_MODEL_DIR", "models")) / "smollm2-135m-instruct-gguf"
DEFAULT_DATA = Path(os.environ.get("COMLRL_DATA_DIR", "data")) / "tldr" / "test.json"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--prompts", type=int, default=8, help="number of TL;DR posts = training steps (batch size 1)")
    p.add_argument("--max-new-tokens", type=int, default=64)
    p.add_argument("--min-new-tokens", type=int, default=0,
                   help="0 = off (default). >0 forces fixed-length samples; MAGRPOConfig has no such field, so it is "
                        "passed through trainer.train(**kwargs), which 1.4.3 forwards to model.generate")
    p.add_argument("--num-generations", type=int, default=4, help="K samples per agent per prompt")
    p.add_argument("--num-agents", type=int, default=2)
    p.add_argument("--lr", type=float, default=1e-5)
    p.add_argument("--model-dir", type=Path, default=DEFAULT_MODEL_DIR)
    p.add_argument("--gguf-file", default=GGUF_FILE)
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="TL;DR JSON Lines file")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    return p.parse_args()


def tldr_prompt(r):
    "The benchmark's prompt format (plain text, no chat template; the reference applies none either)."
    return f"SUBREDDIT: r/{r['subreddit']}\n\nTITLE: {r['title']}\n\nPOST: {r['instruction']}\n\nTL;DR:"


def load_prompts(path, n):
    rows = []
    with open(path) as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
            if len(rows) == n:
                break
    if len(rows) < n:
        raise SystemExit(f"{path} has only {len(rows)} rows, {n} requested")
    return [{"prompt": tldr_prompt(r), "id": r.get("id", str(i))} for i, r in enumerate(rows)]


def length_reward(a, b):
    """Joint reward: agent 1 should write ~20 words, agent 2 ~40 words.

    Two positional parameters = one list of completions per agent (the 1.4.3 dispatch rule for N=2 agents);
    returns one float per joint action (1.4.3 calls it once per joint action with one-element lists).
    """
    return [-abs(len(x.split()) - 20) / 20 - abs(len(y.split()) - 40) / 40 for x, y in zip(a, b)]


def length_reward_for(n):
    """The same reward for n agents (agent i ~20·(i + 1) words, as `comlrl_job.length_reward`), as a function of exactly
    n positional parameters: 1.4.3 counts them to decide how to call it."""
    if n == 2:
        return length_reward
    names = ", ".join(f"c{i}" for i in range(n))
    score = lambda cs: [sum(-abs(len(c.split()) - 20 * (i + 1)) / (20 * (i + 1)) for i, c in enumerate(j)) for j in zip(*cs)]
    ns = {"_score": score}
    exec(f"def length_reward({names}):\n    return _score([{names}])", ns)
    return ns["length_reward"]


def rss_now_mib():
    "Current resident set size (VmRSS) in MiB."
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_mib():
    "Peak resident set size of this process so far (Linux reports ru_maxrss in KiB)."
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Meter:
    "Counts/times generation and counts training forwards, from outside the reference library."

    def __init__(self, eos_ids):
        self.eos_ids = torch.tensor(sorted(eos_ids))
        self.generate_calls = 0
        self.generate_seconds = 0.0
        self.tokens_generated = 0  # real tokens: up to and including the first EOS of each sample
        self.token_slots = 0  # samples x padded length: what the reference stores as policy-gradient targets
        self.samples = 0
        self.samples_hit_max = 0
        self.train_forwards = 0  # forward passes with autograd on (the policy-gradient re-scoring)
        self.prompt_lens = {}  # agent -> [P_b tokens of each prompt], as the reference tokenised it
        self.completion_lens = {}  # agent -> [[n_bk tokens up to and including the first EOS] * K] per prompt

    def wrap_generate(self, model, agent=0):
        original = model.generate  # bound method of this model instance

        def generate(*args, **kwargs):
            t0 = time.perf_counter()
            out = original(*args, **kwargs)
            self.generate_seconds += time.perf_counter() - t0
            self.generate_calls += 1
            seqs = out.sequences if hasattr(out, "sequences") else out
            prompt_len = kwargs["input_ids"].shape[1] if "input_ids" in kwargs else args[0].shape[1]
            new = seqs[:, prompt_len:].cpu()
            is_eos = torch.isin(new, self.eos_ids)
            has_eos = is_eos.any(1)
            first_eos = torch.where(has_eos, is_eos.int().argmax(1), torch.full_like(has_eos, new.shape[1], dtype=torch.long))
            lengths = torch.where(has_eos, first_eos + 1, first_eos)
            self.tokens_generated += int(lengths.sum())
            mask = kwargs.get("attention_mask")
            prompt_lens = mask.sum(-1).tolist() if mask is not None else [prompt_len] * seqs.shape[0]
            K = kwargs.get("num_return_sequences", 1)  # output rows are prompt-major: row b*K + k
            self.prompt_lens.setdefault(agent, []).extend(int(p) for p in prompt_lens)
            self.completion_lens.setdefault(agent, []).extend(lengths.view(-1, K).tolist())
            self.token_slots += new.numel()
            self.samples += new.shape[0]
            self.samples_hit_max += int((~has_eos).sum())
            return out

        model.generate = generate  # instance attribute shadows the class method

    def hook_forwards(self, model):
        def pre_hook(module, args, kwargs):
            if torch.is_grad_enabled() and not torch.is_inference_mode_enabled():
                self.train_forwards += 1

        model.register_forward_pre_hook(pre_hook, with_kwargs=True)


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    random.seed(args.seed)  # 1.4.3 shuffles each update's samples with `random`
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)

    import comlrl
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from comlrl.trainers.reinforce import MAGRPOConfig, MAGRPOTrainer

    transformers.set_seed(args.seed)
    items = load_prompts(args.data, args.prompts)

    # ---- loading (excluded from `seconds`) ------------------------------------------------------------------------
    t_load = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(args.model_dir)
    # FULL fine-tuning: one independent fp32 model per agent, passed to the trainer as model objects
    # (1.4.3 accepts `agents=[PreTrainedModel, ...]`, but then needs the tokenizer explicitly).
    agents = [
        AutoModelForCausalLM.from_pretrained(args.model_dir, gguf_file=args.gguf_file, dtype=torch.float32)
        for _ in range(args.num_agents)
    ]
    model_load_seconds = time.perf_counter() - t_load

    cfg = MAGRPOConfig(
        num_agents=args.num_agents,
        num_train_epochs=1,  # one pass over the N prompts = N training steps (the train loader is batch size 1)
        agent_learning_rate=args.lr,  # plain torch AdamW per agent, lr only
        num_generations=args.num_generations,
        max_new_tokens=args.max_new_tokens,
        # 1.4.3 defaults are temperature 0.6 / top_p 0.6 / top_k 50; the spec asks for plain temperature-1 sampling.
        temperature=1.0,
        top_p=1.0,
        top_k=0,  # passed to HF generate; 0 switches the top-k filter off (None would leave it to generation_config)
        num_turns=1,  # default is 2, which would require an external_transition and double the work
        joint_mode="aligned",  # K joint actions (k-th sample of every agent), not K^N
        early_termination_threshold=None,  # irrelevant for one turn; set so nothing depends on the reward's sign
        # Default rollout_buffer_size=2 would update every 2nd prompt; 1 gives one optimizer step per agent per prompt.
        rollout_buffer_size=1,
        train_batch_size=1,
        eval_interval=0,  # no evaluation (default 16 evaluates at step 0 of every epoch when an eval set exists)
        logging_steps=1,
        advantage_mode="mean",  # defaults: mean baseline + z-score normalisation within the K-group
        advantage_normalization=True,
        reference_kl_enabled=False,  # default; no frozen reference copies
        parallel_training="none",
        agent_devices="cpu",
    )
    trainer = MAGRPOTrainer(
        agents=agents,
        num_agents=args.num_agents,
        tokenizer=tokenizer,  # one shared tokenizer (pad = eos = <|im_end|>)
        train_dataset=items,  # list of dicts; 1.4.3 wraps it in a DataLoader(batch_size=1, shuffle=False)
        eval_dataset=None,
        reward_func=length_reward_for(args.num_agents),
        formatters=lambda item: item["prompt"],  # one callable = same formatter for every agent
        wandb_config=None,  # None => the trainer never calls wandb.init (and WANDB_MODE=disabled anyway)
        args=cfg,
    )
    load_seconds = time.perf_counter() - t_load

    eos_ids = {tokenizer.eos_token_id, tokenizer.pad_token_id}
    gen_eos = agents[0].generation_config.eos_token_id
    eos_ids |= set(gen_eos if isinstance(gen_eos, (list, tuple)) else [gen_eos])
    meter = Meter({int(e) for e in eos_ids if e is not None})
    for i, agent in enumerate(agents):
        meter.wrap_generate(agent, i)
        meter.hook_forwards(agent)
    rss_after_load = rss_now_mib()
    peak_after_load = peak_rss_mib()

    # ---- training (timed) ---------------------------------------------------------------------------------------
    train_kwargs = {"min_new_tokens": args.min_new_tokens} if args.min_new_tokens > 0 else {}
    torch.manual_seed(args.seed)
    t0 = time.perf_counter()
    trainer.train(**train_kwargs)
    seconds = time.perf_counter() - t0
    per_agent = [(meter.prompt_lens.get(i, []), meter.completion_lens.get(i, [])) for i in range(args.num_agents)]
    shapes = Shapes.from_config(agents[0].config)
    flops = job_flops(shapes, per_agent)  # full fine-tuning

    result = {
        "library": f"comlrl=={comlrl.__version__}",
        "prompts": args.prompts,
        "seconds": round(seconds, 3),
        "seconds_per_prompt": round(seconds / args.prompts, 3),
        "peak_rss_mib": round(peak_rss_mib(), 1),
        "load_seconds": round(load_seconds, 3),
        "model_load_seconds": round(model_load_seconds, 3),
        "tokens_generated": meter.tokens_generated,
        "token_slots": meter.token_slots,
        "tokens_per_second": round(meter.tokens_generated / seconds, 2),
        "flops": flops["total"],
        "flops_generation": flops["generation"],
        "flops_update": flops["update"],
        "shapes": dataclasses.asdict(shapes),
        "lora_rank": 0,
        "prompt_tokens": [p for p, _ in per_agent],
        "completion_tokens": [n for _, n in per_agent],
        "samples": meter.samples,
        "samples_hit_max_new_tokens": meter.samples_hit_max,
        "generate_calls": meter.generate_calls,
        "generate_seconds": round(meter.generate_seconds, 3),
        "update_and_other_seconds": round(seconds - meter.generate_seconds, 3),
        "train_forwards": meter.train_forwards,
        "optimizer_steps_per_agent": args.prompts,  # rollout_buffer_size=1, train_batch_size=1
        "rss_after_load_mib": round(rss_after_load, 1),
        "peak_rss_after_load_mib": round(peak_after_load, 1),
        "num_agents": args.num_agents,
        "num_generations": args.num_generations,
        "max_new_tokens": args.max_new_tokens,
        "min_new_tokens": args.min_new_tokens,
        "lr": args.lr,
        "threads": torch.get_num_threads(),
        "attn_implementation": getattr(agents[0].config, "_attn_implementation", None),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
    }
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
