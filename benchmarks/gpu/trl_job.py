"""TRL's run of the GPU check's speed job: `GRPOTrainer` (TRL 1.16, `use_vllm=False`), one LoRA agent (r=32 on every
linear layer, as comlrl's), on the same random Qwen2.5-1.5B in bfloat16, prompts, samples and forced length.

TRL counts a step in samples: K samples per micro-step (`per_device_train_batch_size`), B micro-steps per optimizer
step (`gradient_accumulation_steps`), one generation of B × K samples every B micro-steps (`steps_per_generation`):
one optimizer step = the job's B prompts × K samples, as in comlrl. Steps are timed by a callback, the generation by
wrapping the PEFT model's `generate` (what TRL calls), the reward by wrapping the reward function."""
import tempfile, time

import torch

from common import (Timer, completion_lengths, decode_weight_bytes, length_reward, peak_memory_bytes, speed_job, speed_record,
                    sync, tldr_prompts, versions)


def run(device: str, dry_run: bool = False, quick: bool = False) -> dict:
    "TRL's speed run. Raises `AssertionError` unless every sample has exactly C new tokens."
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer
    job = speed_job(device, dry_run, quick)
    s, tok, model, stop_ids, t0 = job.sizes, job.tokenizer, job.model, job.stop_ids, job.started
    steps = s['warmup'] + s['timed']
    data = Dataset.from_list([{'prompt': q} for q in tldr_prompts(tok, s['B'] * steps, s['P'])])
    timer, per_step, lengths = Timer(device), [], []

    def length_reward_trl(prompts, completions, **kwargs):
        with timer('reward'): return length_reward(completions)

    class StepTimes(TrainerCallback):
        "Seconds of each optimizer step and of the generation and reward inside it."
        def on_step_begin(self, args, state, control, **kw):
            self.before = {n: sum(v) for n, v in timer.seconds.items()}
            self.t = time.perf_counter()
        def on_step_end(self, args, state, control, **kw):
            sync(device)
            row = {n: sum(v) - self.before.get(n, 0.0) for n, v in timer.seconds.items()}
            per_step.append({**row, 'step': time.perf_counter() - self.t})

    with tempfile.TemporaryDirectory() as d:
        args = GRPOConfig(output_dir=d, per_device_train_batch_size=s['K'], gradient_accumulation_steps=s['B'],
                          steps_per_generation=s['B'], num_generations=s['K'], max_completion_length=s['C'],
                          temperature=1.0, top_p=1.0, top_k=0, learning_rate=1e-5, beta=0.0, scale_rewards='none',
                          loss_type='dapo', bf16=True, gradient_checkpointing=False, logging_steps=1, report_to='none',
                          max_steps=steps, save_strategy='no', shuffle_dataset=False, seed=0, disable_dropout=True,
                          use_vllm=False, use_cpu=torch.device(device).type == 'cpu', dataloader_num_workers=0)
        lora = LoraConfig(r=32, lora_alpha=64, lora_dropout=0.0, target_modules='all-linear', task_type='CAUSAL_LM')
        tr = GRPOTrainer(model=model, reward_funcs=length_reward_trl, args=args, train_dataset=data, processing_class=tok,
                         peft_config=lora, callbacks=[StepTimes()])
        load_s = time.perf_counter() - t0
        generate = tr.model.generate
        def timed_generate(*a, **k):
            with timer('generation'): out = generate(*a, **k)
            seqs = out.sequences if hasattr(out, 'sequences') else out
            lengths.extend(completion_lengths(seqs, k['input_ids'].shape[1], stop_ids))
            return out
        tr.model.generate = timed_generate
        tr.train()
    if set(lengths) != {s['C']}:
        raise AssertionError(f"the speed job needs exactly {s['C']} new tokens per sample; got lengths {sorted(set(lengths))}")
    return speed_record('TRL GRPOTrainer', 1, True, s, per_step, peak_memory_bytes(device), load_s, lengths,
                        decode_weight_bytes(tr.model), compiled=False, versions=versions('trl', 'transformers', 'peft', 'accelerate'))
