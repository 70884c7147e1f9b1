"""tests/vllm/ runs a real vLLM engine (nbs/02c_vllm_sampler.ipynb): `bash tools/test_vllm.sh` makes the venv with vLLM's
CPU build and runs these tests. Without vLLM (CI's venv, `pytest tests/`) nothing here is collected."""
import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec('vllm') is not None else ['test_*.py']
