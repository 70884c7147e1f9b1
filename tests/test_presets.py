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
