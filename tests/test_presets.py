"""The run settings that environments used to declare (`TLDREnv.preset_config` and `preset_kwargs`) live in the presets
(`Preset.env_config`, `Preset.env_options`; issue 35). The move changed no setting: every preset gives every built-in
environment, every kind of task and no environment at all the config fields, options, prompt length and model that it
gave before. tests/data/preset_configs.json holds what main gave before the move (commit 4ef44a1): change it only with a
setting you mean to change."""
import json
from pathlib import Path

import pytest

from comlrl.presets import PRESETS

BEFORE = json.loads((Path(__file__).parent / 'data' / 'preset_configs.json').read_text())


def _settings(preset, env) -> dict:
    "What the preset gives `env` (an environment's name, a kind of task, or '(none)')."
    if env == '(none)': return {'config_kwargs': preset.config_kwargs()}
    out = {'config_kwargs': preset.config_kwargs(env), 'prompt_length': preset.prompt_length(env), 'model': preset.model(env)}
    if env not in ('writing', 'code'): out['env_kwargs'] = preset.env_kwargs(env)
    return out


def test_every_preset_is_recorded():
    assert set(BEFORE) == set(PRESETS)


@pytest.mark.parametrize('preset,env', [(p, e) for p in sorted(BEFORE) for e in sorted(BEFORE[p])])
def test_settings_unchanged_by_the_move(preset, env):
    assert _settings(PRESETS[preset], env) == BEFORE[preset][env]


def test_sharded_estimate_against_the_measured_fsdp_run():
    "`estimate_memory(num_shards=2)` against benchmarks/fsdp_memory.py's committed run (two fully fine-tuned SmolLM2-135M agents)."
    import re
    from pathlib import Path
    from comlrl.presets import MODEL_CONFIGS, estimate_memory
    text = (Path(__file__).parent.parent / 'benchmarks/results/fsdp_memory/fsdp_memory.txt').read_text()
    line = lambda label: next(l for l in text.splitlines() if l.startswith(label))
    one = int(re.search(r'\s(\d+);', line('1 process')).group(1)) * 2**20  # the process's peak resident set, bytes
    sharded = int(re.search(r'\s(\d+), \d+;', line('2 processes, sharded')).group(1)) * 2**20  # process 0's
    assert 'fully fine-tuned' in text and '2 per step over all processes, 2 samples of up to 16 tokens' in text
    # the job's longest prompt is the first TL;DR post, 506 SmolLM2 tokens (plain text, no chat template); process 0 gets it
    job = dict(num_agents=2, use_lora=False, num_generations=2, prompt_length=506, max_completion_length=16)
    smol = MODEL_CONFIGS['HuggingFaceTB/SmolLM2-135M-Instruct']
    est_one = estimate_memory(smol, batch_size=2, **job)['total']
    est_sharded = estimate_memory(smol, batch_size=1, num_shards=2, **job)['total']
    est_unsharded = estimate_memory(smol, batch_size=1, **job)['total']  # the same process, were the team not sharded
    # the measured peaks include the interpreter and its libraries, which the estimate leaves out
    assert abs(est_one / one - 1) < 0.25 and abs(est_sharded / sharded - 1) < 0.25, (est_one / one, est_sharded / sharded)
    assert abs(est_sharded / sharded - 1) < abs(est_unsharded / sharded - 1)
