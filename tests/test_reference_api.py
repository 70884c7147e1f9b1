"""Published code of the reference library CoMLRL (github.com/OpenMLRL/CoMLRL) runs in comlrl's notebooks, and these
tests keep those cells honest: the code there must be the published one, character for character, with only the model
id (and, where said, the data) replaced by local ones, since CI has no internet.

- the quick start of the reference's older README ("Usage", `from comlrl.trainers.magrpo import ...`) runs in
  `nbs/11_magrpo.ipynb` on comlrl's own MAGRPOTrainer;
- the two docs pages of CoMLRL 1.4.3 a new user starts from, `docs/content/docs/examples/comlrl-quick-start.md` and
  `docs/content/docs/examples/shared-actor-critic.md`, run in `nbs/50_from_comlrl.ipynb` through the reference's own
  module paths (`comlrl.trainers.reinforce`, `comlrl.trainers.actor_critic`, `comlrl.utils`)."""
from pathlib import Path

from execnb.nbio import read_nb

ROOT = Path(__file__).resolve().parents[1]

# Copied from the reference README as published (the part after the dataset and tokenizer are loaded).
PUBLISHED = '''# Initialize trainer and start training
trainer = MAGRPOTrainer(
    model="Qwen/Qwen2.5-0.5B",
    num_agents=2,
    tokenizer=tokenizer,
    train_dataset=dataset,
    reward_func=lambda a, b: [abs(max(len(b[0]), 1) / max(len(a[0]), 1) - 3.0)],
    formatters=[lambda example: example["prompt"]] * 2,
    args=MAGRPOConfig(
        per_device_train_batch_size=1,
    ),
)
trainer.train()'''
PUBLISHED_IMPORTS = ('from transformers import AutoTokenizer', 'from comlrl.trainers.magrpo import MAGRPOConfig, MAGRPOTrainer')
PUBLISHED_TOKENIZER = 'tokenizer = AutoTokenizer.from_pretrained("Qwen/Qwen2.5-0.5B")'


def _quick_start_cells() -> tuple[str, str]:
    "The quick-start cell and the visible cell above it, which holds its imports (docs processing runs import cells)."
    cells = read_nb(ROOT / 'nbs' / '11_magrpo.ipynb').cells
    at = [i for i, c in enumerate(cells)
          if c.cell_type == 'code' and 'trainer = MAGRPOTrainer(' in c.source and 'trainer.train()' in c.source
          and 'reward_func=lambda a, b: [abs(' in c.source]
    assert len(at) == 1, f'expected one quick-start cell in 11_magrpo, found {len(at)}'
    return cells[at[0] - 1].source, cells[at[0]].source


def test_quick_start_cell_is_the_published_code():
    imports, src = _quick_start_cells()
    local = lambda s: s.replace('"Qwen/Qwen2.5-0.5B"', 'MODEL')
    assert local(PUBLISHED) in src, 'the trainer call in 11_magrpo is no longer the README\'s, as published'
    assert local(PUBLISHED_TOKENIZER) in src
    for line in PUBLISHED_IMPORTS: assert line in imports.splitlines()
    for s in (imports, src): assert '#|' not in s.splitlines()[0], 'the quick-start cells must be plain, visible, tested cells'


# The Python blocks of the reference's docs pages, in order, as published (github.com/OpenMLRL/CoMLRL, docs/content/docs/examples/).
QUICK_START_BLOCKS = (
    'import math\nfrom functools import partial\nfrom datasets import Dataset\nfrom transformers import AutoModelForCausalLM, AutoTokenizer\nfrom comlrl.utils.reward_processor import RewardProcessors\nfrom comlrl.trainers.reinforce import MAGRPOConfig, MAGRPOTrainer\n',
    'train_data = {\n    "prompt": [\n        "Describe a city in the clouds:",\n        "Invent a new holiday and explain it:",\n        "Write a bedtime story for a dragon:",\n        "Explain how teleportation might work:",\n        "Tell a joke about dinosaurs:",\n        "Describe a world without electricity:",\n        "Create a superhero with a unique power:",\n        "Write a scene where the moon talks:",\n        "Invent a new type of fruit:",\n        "Design a playground on Mars:",\n    ]\n}\ntrain_dataset = Dataset.from_dict(train_data)\n',
    'model_name = "Qwen/Qwen2.5-0.5B"\ntokenizer = AutoTokenizer.from_pretrained(model_name)\nagents = [AutoModelForCausalLM.from_pretrained(model_name) for _ in range(2)]\n',
    'def proper_length_ratio_reward(\n    completions1, completions2, target_min=2.0, target_max=3.0\n):\n    rewards = []\n    for c1, c2 in zip(completions1, completions2):\n        len1, len2 = len(c1), len(c2)\n\n        if len1 == 0:\n            rewards.append(0.0)\n            continue\n\n        ratio = len2 / len1\n\n        if target_min <= ratio <= target_max:\n            reward = 1.0\n        else:\n            if ratio < target_min:\n                distance = target_min - ratio\n            else:\n                distance = ratio - target_max\n\n            reward = math.exp(-distance)\n\n        rewards.append(float(reward))\n\n    return rewards\n',
    'output_dir = "./magrpo_multi_reward_output"\nconfig = MAGRPOConfig(\n    num_train_epochs=3,\n    agent_learning_rate=5e-5,\n    logging_steps=10,\n    num_generations=8,\n    num_turns=1,\n    max_new_tokens=128,\n)\n',
    'wandb_config = {\n    "project": "your-project-name",\n    "entity": "your-entity-name",\n    "name": "length-ratio-demo",\n}\n\nconfigured_reward_func = partial(\n    proper_length_ratio_reward, target_min=2, target_max=3\n)\n\ntrainer = MAGRPOTrainer(\n    agents=agents,\n    reward_func=configured_reward_func,\n    reward_processor=RewardProcessors.scale(factor=100.0),\n    args=config,\n    train_dataset=train_dataset,\n    tokenizer=tokenizer,\n    wandb_config=wandb_config,\n)\n',
    'trainer.train()\ntrainer.save_model(f"{output_dir}/models")\n',
)
SHARED_ACTOR_CRITIC_BLOCKS = (
    'from datasets import load_dataset\nfrom transformers import AutoTokenizer\nfrom comlrl.trainers.actor_critic import IACConfig, IACTrainer\n\nmodel_name = "Qwen/Qwen2.5-0.5B"\ntokenizer = AutoTokenizer.from_pretrained(model_name)\n\ndataset = load_dataset("trl-lib/tldr", split="train").select(range(128))\n\ndef length_balance_reward(agent1, agent2):\n    a = agent1[0]\n    b = agent2[0]\n    denom = max(len(a), len(b), 1)\n    return [1.0 - abs(len(a) - len(b)) / denom]\n\ntrainer = IACTrainer(\n    agent_model=model_name,\n    tokenizer=tokenizer,\n    train_dataset=dataset,\n    reward_func=length_balance_reward,\n    formatters=[lambda ex: ex["prompt"]] * 2,\n    args=IACConfig(\n        num_agents=2,\n        num_turns=1,\n        use_separate_critic=False,\n        rollout_buffer_size=4,\n        train_batch_size=4,\n    ),\n)\ntrainer.train()\n',
)
MODEL_SWAP = ('"Qwen/Qwen2.5-0.5B"', 'MODEL')  # a local tiny model instead of the hub's
DATA_SWAP = ('load_dataset("trl-lib/tldr", split="train").select(range(128))', 'TLDREnv().load_dataset("train").select(range(1))')  # the offline TL;DR copy


def _cell_with(nb: str, needle: str) -> str:
    """The code cell holding `needle`, with the cell of its imports just above it (the docs build runs a cell that imports,
    so a page's imports stand in a cell of their own): one text, as the published block reads."""
    cells = read_nb(ROOT / 'nbs' / nb).cells
    at = [i for i, c in enumerate(cells) if c.cell_type == 'code' and needle in c.source]
    assert len(at) == 1, f'expected one cell of {nb} holding {needle!r}, found {len(at)}'
    imports = cells[at[0] - 1].source
    assert imports.splitlines() and all(l.startswith(('import ', 'from ')) for l in imports.splitlines()), \
        f'the cell above the published code in {nb} must hold its imports, and only them'
    return imports + '\n\n' + cells[at[0]].source


def _assert_published(src: str, blocks, swaps):
    "Every block, with the swaps made, appears in the cell, in the published order; the cell is a plain, visible one."
    pos = 0
    for b in blocks:
        for old, new in swaps: b = b.replace(old, new)
        b = b.rstrip("\n")  # a cell does not end with a newline
        at = src.find(b, pos)
        assert at >= 0, f'this published block is not in the cell as published (after the swaps):\n{b}'
        pos = at + len(b)
    assert not src.lstrip().startswith('#|'), 'the cell must be a plain, visible, tested cell'


def test_docs_quick_start_is_the_published_code():
    _assert_published(_cell_with('50_from_comlrl.ipynb', 'proper_length_ratio_reward('), QUICK_START_BLOCKS, [MODEL_SWAP])


def test_docs_shared_actor_critic_is_the_published_code():
    _assert_published(_cell_with('50_from_comlrl.ipynb', 'length_balance_reward('), SHARED_ACTOR_CRITIC_BLOCKS, [MODEL_SWAP, DATA_SWAP])


def test_the_swaps_are_the_only_changes():
    "The swaps touch only the model id and the data: each published block holds what is swapped at most once per line."
    for blocks in (QUICK_START_BLOCKS, SHARED_ACTOR_CRITIC_BLOCKS):
        text = ''.join(blocks)
        assert text.count(MODEL_SWAP[0]) == 1
    assert ''.join(SHARED_ACTOR_CRITIC_BLOCKS).count(DATA_SWAP[0]) == 1
