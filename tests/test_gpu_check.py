"""The prepared GPU check (benchmarks/gpu/) must not rot between GPU runs: its CPU dry run passes every part, and the
pieces it is built of do what its report says they do."""
import argparse, json, math, os, subprocess, sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
GPU = ROOT / 'benchmarks' / 'gpu'
sys.path.insert(0, str(GPU))

import check, common, comlrl_parts, report  # noqa: E402


@pytest.fixture(scope='module')
def dry_run(tmp_path_factory):
    "One dry run of the whole check (CoMLRL 1.4.3 included when COMLRL_REF_SITE names its folder, as in CI)."
    out = tmp_path_factory.mktemp('gpu-check')
    r = subprocess.run([sys.executable, 'benchmarks/gpu/check.py', '--dry-run', '--out', str(out)], cwd=ROOT,
                       capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS='1'))
    return r, out


def test_dry_run_passes_every_part(dry_run):
    r, out = dry_run
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    res = json.loads((out / 'results.json').read_text())
    parts = res['parts']
    assert set(parts) == {p.name for p in check.parts_for('full')}
    ref = 'speed-comlrl143-2full'
    for name, d in parts.items():
        expected = 'skipped' if name == ref and not os.environ.get('COMLRL_REF_SITE') else 'ok'
        assert d['status'] == expected, (name, d['status'], d.get('why'))
    print(f"dry run: {res['meta']['wall_seconds']} s")


def test_dry_run_checks_what_the_issue_asks(dry_run):
    _, out = dry_run
    parts = json.loads((out / 'results.json').read_text())['parts']
    for name in ('preset-colab-t4-magrpo', 'preset-colab-t4-ippo', 'preset-a100-magrpo', 'preset-a100-ippo'):
        r = parts[name]['result']
        assert set(r['checks']) == {'losses_finite', 'grad_norms_finite', 'adapters_changed', 'no_skipped_step_after_the_first',
                                    'greedy_compiled_equals_eager'}
        assert all(c['ok'] for c in r['checks'].values()) and r['steps'] == 2
        assert all(x > 0 for x in r['checks']['adapters_changed']['max_abs_change'])
        assert (r['dtype'], r['fp16'], r['bf16']) == (('float16', True, False) if 'colab-t4' in name else ('bfloat16', False, True))
        assert r['gradient_checkpointing'] and r['estimate_bytes'] > 0 and r['peak_memory_bytes'] > 0
    for name, d in parts.items():
        if d['group'] != 'speed' or d['status'] != 'ok': continue
        r, x = d['result'], d['derived']
        assert r['new_tokens_per_sample'] == [r['C']], name  # the forced length, asserted by the run itself too
        assert len(r['steps']) == r['warmup'] + r['timed']
        assert all(s['generation'] > 0 and s['update'] > 0 for s in r['steps']), name
        assert 0 < x['update_mfu'] and 0 < x['decode_bandwidth_share'] and x['tokens_per_second'] > 0, name
    team, each = (parts[n]['result'] for n in ('speed-comlrl-2lora', 'speed-comlrl-2lora-peragent'))
    assert (team['team_batch'], team['decode_calls'], each['team_batch'], each['decode_calls']) == (True, 1, False, 2)
    one, by_agent = (parts[n]['result'] for n in ('speed-comlrl-2lora', 'speed-comlrl-2lora-byagent'))
    assert by_agent['one_pass_update'] is False  # the default (`one`) is one pass on CUDA only: agent by agent in a CPU dry run
    md = (out / 'results.md').read_text()
    assert "## Every preset's path" in md and '## The speed job' in md and '## Not ok' not in md
    assert ('## Skipped' in md) != bool(os.environ.get('COMLRL_REF_SITE'))  # the reference, when it is not installed apart


def test_a_compile_fall_back_fails_the_greedy_check(monkeypatch, tmp_path):
    "comlrl decodes eagerly, with a warning, when compiling fails: the check must not pass that as compiled = eager."
    import warnings
    import comlrl.generation as G
    from comlrl.models import tiny_llama
    from comlrl.trainers.magrpo import MAGRPOConfig, MAGRPOTrainer
    plain = G.generate
    def generate(*a, compile_decoding=None, **k):
        if compile_decoding: warnings.warn('compiled decoding failed (InductorError: planted); decoding eagerly from now on')
        return plain(*a, compile_decoding=False, **k)
    monkeypatch.setattr(G, 'generate', generate)
    model, tok = tiny_llama()
    tr = MAGRPOTrainer(model=model, tokenizer=tok, reward_func=common.length_reward, train_dataset=[{'prompt': 'x'}],
                       args=MAGRPOConfig(output_dir=str(tmp_path), max_completion_length=4, report_to='none'))
    for compiled, ok in ((True, False), (False, True)):
        r = comlrl_parts.compare_decodings(tr, ['Hello there', 'Say something'], compiled=compiled)
        assert r['ok'] is ok and bool(r['compile_failed']) is compiled and r['identical_rows'] == 2, r


def test_a_failing_or_slow_part_does_not_hide_the_others(tmp_path, monkeypatch):
    args = argparse.Namespace(device='cpu', dry_run=True, quick=False, ref_site=None, budget=100, lanes=2, speed_lanes=1)
    parts = [check.Part('machine', 'machine', 'machine'), check.Part('bogus', 'speed', 'nope'),
             check.Part('speed-comlrl-1lora-eager', 'speed', 'comlrl', dict(num_agents=1, lora=True, compiled=False)),
             check.Part('speed-comlrl143-2full', 'speed', 'ref')]
    monkeypatch.setitem(check.LIMITS, 'speed', 4)  # the real speed part cannot finish in 4 s: it is killed
    outcomes, log = check.run_all(args, parts, tmp_path)
    assert outcomes['machine'].status == 'ok' and outcomes['machine'].result['bf16_tflops'] > 0
    assert outcomes['bogus'].status == 'failed' and "unknown part 'bogus'" in outcomes['bogus'].why
    assert outcomes['speed-comlrl-1lora-eager'].status == 'timed out'
    assert outcomes['speed-comlrl143-2full'].status == 'skipped' and '--ref-site' in outcomes['speed-comlrl143-2full'].why
    md = report.markdown(report.build({'mode': 'dry run', 'date': 'd', 'command': 'c', 'wall_seconds': 1, 'budget_seconds': 100},
                                      parts, outcomes))
    assert '**bogus**: failed' in md and '**speed-comlrl-1lora-eager**: timed out' in md


def test_budget_left_too_small_means_not_run(tmp_path):
    args = argparse.Namespace(device='cpu', dry_run=True, quick=False, ref_site=None, budget=check.MIN_START - 1, lanes=1, speed_lanes=1)
    outcomes, _ = check.run_all(args, [check.Part('machine', 'machine', 'machine')], tmp_path)
    assert outcomes['machine'].status == 'not run' and '--budget' in outcomes['machine'].why


def test_reference_runs_without_this_checkout_on_its_path(tmp_path):
    args = argparse.Namespace(device='cuda', dry_run=False, quick=True, ref_site='/x/ref-site')
    cmd, env = check.command(next(p for p in check.PARTS if p.target == 'ref'), args, tmp_path)
    path = env['PYTHONPATH'].split(os.pathsep)
    assert path[:2] == ['/x/ref-site', str(GPU / 'stubs')] and str(check.ROOT) not in path
    assert cmd[1].endswith('ref_job.py') and '--quick' in cmd and '--dry-run' not in cmd
    cmd, env = check.command(next(p for p in check.PARTS if p.target == 'trl'), args, tmp_path)
    assert env['PYTHONPATH'].split(os.pathsep)[0] == str(check.ROOT) and cmd[cmd.index('--part') + 1] == 'speed-trl-1lora'


def test_quick_and_full_runs():
    full, quick = {p.name for p in check.parts_for('full')}, {p.name for p in check.parts_for('quick')}
    assert {'speed-comlrl-2lora', 'speed-comlrl-2lora-peragent', 'speed-comlrl-2lora-byagent', 'speed-comlrl-2lora-eager', 'speed-comlrl-2full',
            'speed-comlrl143-2full', 'speed-trl-1lora', 'speed-comlrl-1lora'} <= full
    assert quick == {'machine', 'preset-colab-t4-magrpo', 'preset-colab-t4-ippo', 'preset-a100-magrpo', 'preset-a100-ippo',
                     'speed-comlrl-2lora-eager', 'speed-trl-1lora', 'speed-comlrl-1lora-eager'}
    with pytest.raises(SystemExit, match='unknown parts'): check.parts_for('full', ['machin'])
    assert [p.name for p in check.parts_for('full', ['machine', 'preset'])] == [
        'machine', 'preset-colab-t4-magrpo', 'preset-colab-t4-ippo', 'preset-a100-magrpo', 'preset-a100-ippo']
    assert {p.name for p in check.parts_for('full', ['speed', 'machine'])} == full - {p for p in full if p.startswith('preset')}


def test_written_out_architectures_are_the_presets_models():
    "The configs in common.QWEN give the published parameter counts, and agree with the presets' MODEL_CONFIGS."
    from transformers import Qwen2Config, Qwen2ForCausalLM
    from comlrl.presets import MODEL_CONFIGS, PRESETS
    counts = {'Qwen/Qwen2.5-0.5B-Instruct': 494_032_768, 'Qwen/Qwen2.5-1.5B-Instruct': 1_543_714_304}
    for name, cfg in common.QWEN.items():
        with torch.device('meta'): m = Qwen2ForCausalLM(Qwen2Config(**{k: v for k, v in cfg.items() if k != 'model_type'}))
        assert sum(q.numel() for q in m.parameters()) == counts[name], name
        assert {k: cfg[k] for k in MODEL_CONFIGS[name]} == MODEL_CONFIGS[name]
    assert {PRESETS[p].models['writing'] for p in ('colab-t4', 'a100')} == set(common.QWEN)


def test_tokenizer_has_the_models_size_and_qwens_special_ids():
    tok = common.build_tokenizer(151936)
    assert len(tok) == 151646 <= 151936
    assert (tok.pad_token_id, tok.convert_tokens_to_ids('<|im_start|>'), tok.eos_token_id) == (151643, 151644, 151645)
    text = 'SUBREDDIT: r/test\n\nPOST: I (24F) told him: "no". Ünïcode!\n\nTL;DR:'
    assert tok.decode(tok(text).input_ids) == text
    assert tok.apply_chat_template([{'role': 'user', 'content': 'hi'}], tokenize=False, add_generation_prompt=True) == \
        '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n'
    tiny = common.build_tokenizer(1024)
    assert len(tiny) == 1024 and tiny.eos_token_id == 1023


@pytest.mark.parametrize('vocab', [1024, 151936])
def test_prompts_have_exactly_the_asked_tokens(vocab):
    tok = common.build_tokenizer(vocab)
    lengths = [128, 129, 130, 131, 200, 257]
    prompts = common.tldr_prompts(tok, len(lengths), lengths, seed=3)
    assert [len(tok(p).input_ids) for p in prompts] == lengths
    assert all(p.startswith('SUBREDDIT: r/') and p.endswith('\n\nTL;DR:') for p in prompts)
    with pytest.raises(ValueError, match='cannot hold'): common.tldr_prompt(tok, 20, __import__('random').Random(0))


def test_forbidden_tokens_are_never_sampled_and_training_is_untouched():
    cfg = common.model_config('any', dry_run=True)
    m = common.random_model(cfg, torch.float32, 'cpu')
    ids = torch.tensor([[1, 2, 3, 4]])
    plain = m(ids).logits.detach()
    handle = common.forbid_tokens(m, [1021, 1023])
    with torch.no_grad(): masked = m(ids).logits
    assert torch.isinf(masked[..., [1021, 1023]]).all() and (masked[..., [1021, 1023]] < 0).all()
    torch.testing.assert_close(masked[..., :1021], plain[..., :1021])
    torch.testing.assert_close(m(ids).logits.detach(), plain)  # with gradients on: untouched
    out = m.generate(ids, max_new_tokens=12, do_sample=True, top_k=0, pad_token_id=1021)
    assert out.shape[1] == 16 and not torch.isin(out[:, 4:], torch.tensor([1021, 1023])).any()
    handle.remove()


def test_skipped_steps_read_from_the_loss_scale():
    assert comlrl_parts.skipped_steps([65536.0, 65536.0]) == []
    assert comlrl_parts.skipped_steps([32768.0, 32768.0]) == [1]
    assert comlrl_parts.skipped_steps([65536.0, 32768.0, 16384.0]) == [2, 3]


def test_first_divergence():
    a, b = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]]), torch.tensor([[1, 2, 3], [4, 0, 6], [7, 8, 0]])
    ones = torch.ones(3, 3, dtype=torch.long)
    assert comlrl_parts.first_divergence(a, b, ones, ones) == [None, 1, 2]
    short = ones.clone(); short[2, 2] = 0  # both ended before the last token: what follows the end does not count
    assert comlrl_parts.first_divergence(a, b, short, short) == [None, 1, None]


def test_derived_speed_figures():
    "MFU and the bandwidth share from a hand-made record, against numbers worked out here."
    r = dict(num_agents=2, prompts_per_step=1, K=2, P=128, C=8, lora_r=0, warmup_steps=1, decode_weight_bytes=1000,
             peak_memory_bytes=2 ** 30, steps=[dict(step=9.0, generation=1.0, reward=0.5, update=7.5)] +
             [dict(step=4.0, generation=1.0, reward=1.0, update=2.0)] * 2)
    x = report.derive_speed(r, {'bf16_tflops': 1.0, 'copy_gbps': 2.0}, dry_run=True)
    s = report.shapes(common.model_config('x', dry_run=True))
    from flops import agent_flops
    upd = agent_flops(s, [128], [[8, 8]], 0)['update']
    assert x['seconds_per_step'] == 4.0 and x['warmup_seconds'] == 9.0 and x['tokens_per_second'] == 2 * 2 * 8 / 4
    assert math.isclose(x['update_mfu'], 2 * upd / 2.0 / 1e12)
    kv = s.layers * 2 * s.kv_heads * s.head_dim * 2  # bytes per cached token
    read = 2 * (8 * 1000 + 2 * kv * (8 * 128 + 28))
    assert math.isclose(x['decode_bandwidth_share'], read / 1.0 / 2e9)
    team = report.derive_speed({**r, 'decode_calls': 1}, {'bf16_tflops': 1.0, 'copy_gbps': 2.0}, dry_run=True)  # one call for both agents
    assert math.isclose(team['decode_bandwidth_share'], (8 * 1000 + 4 * kv * (8 * 128 + 28)) / 1.0 / 2e9)


def test_wandb_stub_refuses_to_log():
    import importlib.util
    spec = importlib.util.spec_from_file_location('wandb_stub', GPU / 'stubs' / 'wandb' / '__init__.py')
    w = importlib.util.module_from_spec(spec); spec.loader.exec_module(w)
    assert w.run is None
    with pytest.raises(RuntimeError, match='stub'): w.init(project='x')
