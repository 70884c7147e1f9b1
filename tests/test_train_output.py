"""What a user of `comlrl train` sees on the terminal: no deprecation warning from comlrl's calls into transformers or
peft (whatever Python's default filters hide: every warning is shown here), and a progress bar over the items for the
evaluation before training and the one after it."""
import re, subprocess, sys

from comlrl.models import tiny_llama


def test_comlrl_train_prints_no_deprecation_warning_and_shows_evaluation_progress(tmp_path):
    model, tok = tiny_llama()
    model.save_pretrained(tmp_path / 'tiny'); tok.save_pretrained(tmp_path / 'tiny')
    r = subprocess.run([sys.executable, '-W', 'always', '-m', 'comlrl.cli', 'train', '--env', 'tldr', '--model', str(tmp_path / 'tiny'),
                        '--output_dir', str(tmp_path / 'run'), '--max_steps', '2', '--num_generations', '2',
                        '--max_completion_length', '8', '--train_split', 'train[:4]', '--eval_split', 'test[:3]'],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    shown = r.stdout + r.stderr
    warnings = [l for l in re.split(r'[\r\n]', shown) if re.search(r'Warning\b|deprecated', l)]
    assert warnings == [], warnings
    for label in ('evaluating the untrained team', 'evaluating the trained team'):  # tqdm may skip 100% when the items run faster than its refresh
        assert re.search(label + r': +0%\|[^\r\n]*\| 0/3 ', r.stderr), f'no progress bar {label!r} over 3 items in:\n{r.stderr}'
