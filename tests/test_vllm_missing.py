"""`comlrl train --use_vllm true` where vLLM is not installed: it stops before training with one error line that names
`pip install "comlrl[vllm]"` (no traceback). vLLM is hidden from the process here, so the test runs with vLLM installed
too; the same path with the engine installed is tested by tests/vllm_engine (`bash tools/test_vllm.sh`)."""
import subprocess, sys

from comlrl.models import tiny_llama

HIDE_VLLM = "import sys; sys.modules['vllm'] = None; from comlrl.cli import main; sys.exit(main())"  # None: import vllm fails


def test_comlrl_train_use_vllm_without_vllm_is_one_line(tmp_path):
    model, tok = tiny_llama()
    model.save_pretrained(tmp_path / 'tiny'); tok.save_pretrained(tmp_path / 'tiny')
    r = subprocess.run([sys.executable, '-c', HIDE_VLLM, 'train', '--env', 'tldr', '--model', str(tmp_path / 'tiny'),
                        '--output_dir', str(tmp_path / 'run'), '--max_steps', '1', '--num_generations', '2', '--use_vllm', 'true',
                        '--max_completion_length', '8', '--train_split', 'train[:2]', '--eval_split', 'test[:1]'],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    errors = [l for l in r.stderr.splitlines() if 'error' in l.lower() or 'Traceback' in l]
    assert len(errors) == 1 and 'pip install "comlrl[vllm]"' in errors[0], r.stderr[-2000:]
    assert errors[0].startswith('comlrl train: error: use_vllm=True needs vLLM'), errors[0]
    assert not (tmp_path / 'run' / 'metrics.jsonl').exists()  # stopped before training
