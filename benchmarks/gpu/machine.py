"""The machine part of the GPU check: what the card and its software are, and the anchors every speed figure is divided
by, measured here: the bf16 and fp16 matrix-product peak (8192³) and the device-to-device copy bandwidth."""
import subprocess, time

import torch

from common import sync, versions


def nvidia_smi() -> dict:
    "Name, driver, memory and clocks as nvidia-smi reports them ({} where there is no nvidia-smi)."
    fields = ['name', 'driver_version', 'memory.total', 'clocks.max.sm', 'clocks.max.memory', 'power.limit']
    try: out = subprocess.run(['nvidia-smi', f"--query-gpu={','.join(fields)}", '--format=csv,noheader'],
                              capture_output=True, text=True, timeout=30)
    except (FileNotFoundError, subprocess.TimeoutExpired) as e: return {'error': f'{type(e).__name__}: {e}'}
    if out.returncode: return {'error': out.stderr.strip()[-300:]}
    return dict(zip(fields, [v.strip() for v in out.stdout.splitlines()[0].split(',')]))


def matmul_tflops(n: int, dtype: torch.dtype, device, repeats: int = 10) -> float:
    "TFLOP/s of an n×n×n product in `dtype` on random data: the mean of `repeats` timed products after three warm-ups."
    a, b = (torch.randn(n, n, device=device, dtype=dtype) for _ in range(2))
    for _ in range(3): a @ b
    sync(device); t = time.perf_counter()
    for _ in range(repeats): a @ b
    sync(device)
    return 2 * n ** 3 * repeats / (time.perf_counter() - t) / 1e12


def copy_bandwidth(nbytes: int, device, repeats: int = 10) -> float:
    "GB/s of a device-to-device copy of `nbytes`, counting the bytes read and the bytes written."
    src = torch.empty(nbytes, dtype=torch.uint8, device=device).random_()
    dst = torch.empty_like(src)
    for _ in range(3): dst.copy_(src)
    sync(device); t = time.perf_counter()
    for _ in range(repeats): dst.copy_(src)
    sync(device)
    return 2 * nbytes * repeats / (time.perf_counter() - t) / 1e9


def run(device: str, dry_run: bool) -> dict:
    "The machine's description and anchors. A dry run times 256³ products and an 8 MiB copy on the CPU."
    out = {'device': device, 'torch': torch.__version__, 'cuda': torch.version.cuda,
           'versions': versions('transformers', 'peft', 'accelerate', 'trl', 'datasets', 'tokenizers', 'fastcore')}
    if torch.device(device).type == 'cuda':
        p = torch.cuda.get_device_properties(0)
        out.update(gpu=p.name, memory_gib=round(p.total_memory / 2 ** 30, 2), multiprocessors=p.multi_processor_count,
                   capability=f'{p.major}.{p.minor}', bf16_supported=torch.cuda.is_bf16_supported(),
                   cudnn=torch.backends.cudnn.version(), nvidia_smi=nvidia_smi())
    else: out.update(gpu=None, threads=torch.get_num_threads())
    n, nbytes = (256, 8 << 20) if dry_run else (8192, 1 << 30)
    out['matmul_n'] = n
    out['bf16_tflops'] = matmul_tflops(n, torch.bfloat16, device)
    out['fp16_tflops'] = matmul_tflops(n, torch.float16, device)
    out['copy_gbps'] = copy_bandwidth(nbytes, device)
    return out
