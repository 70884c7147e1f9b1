"""Fail when library code puts a tensor or module on a hard-coded device.

comlrl's code runs unchanged on a CPU, one GPU, or one GPU per process (03b_distributed, 07_data_parallel): every device
comes from the model (`agent.device`, `next(model.parameters()).device`), the accelerator (`accelerator.device`) or
`default_device()`. Bookkeeping tensors (rewards, returns, advantages, counts) are created on the CPU by default and
moved with `.to(dev)` where they meet model outputs; results come back with `.cpu()`. What this check refuses is a
literal device: `device='cuda'`, `torch.device('cpu')`, `.cuda()`, `.to('cpu')`. The one place that names devices is
`default_device()`.

    python tools/check_devices.py [files]   # default: comlrl/**/*.py
"""
import re, sys
from pathlib import Path

LITERAL = re.compile(r"""device\s*=\s*['"](cpu|cuda|mps|xpu)|torch\.device\(\s*['"]|\.cuda\(|\.to\(\s*['"](cpu|cuda|mps|xpu)""")
ALLOWED = {('models.py', "return 'cuda' if torch.cuda.is_available() else 'cpu'")}  # default_device() itself


def offenders(path: Path) -> list:
    out = []
    for i, line in enumerate(path.read_text().splitlines(), 1):
        code = line.split('#', 1)[0]
        if LITERAL.search(code) and (path.name, line.strip()) not in ALLOWED: out.append((i, line.strip()))
    return out


if __name__ == '__main__':
    paths = [Path(p) for p in sys.argv[1:]] or sorted(Path('comlrl').rglob('*.py'))
    bad = [(p, i, l) for p in paths for i, l in offenders(p)]
    for p, i, l in bad:
        print(f"{p}:{i}: hard-coded device in `{l}`: take the device from the model, the accelerator or default_device()")
    if bad: sys.exit(1)
    print(f'{len(paths)} files: no hard-coded device')
