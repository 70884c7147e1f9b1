"""tests/vllm_engine/ runs a real vLLM engine (nbs/02c_vllm_sampler.ipynb): `bash tools/test_vllm.sh` makes the venv with vLLM's
CPU build and runs these tests. Without vLLM (CI's venv, `pytest tests/`) nothing here is collected."""
import importlib.util

spec = importlib.util.find_spec('vllm')  # a namespace package of that name (a folder on sys.path) is not vLLM
collect_ignore_glob = [] if spec is not None and spec.origin not in (None, 'namespace') else ['test_*.py']
