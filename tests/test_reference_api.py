"""The quick start of the reference library's README (CoMLRL, github.com/OpenMLRL/CoMLRL, README.md "Usage") runs in
`nbs/11_magrpo.ipynb`. This test keeps that cell honest: the trainer call there must be the published one, character
for character, with only the model id replaced by the notebook's `MODEL` (a local folder, since CI has no internet)."""
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
