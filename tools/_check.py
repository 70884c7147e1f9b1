"""What the notebook checks in tools/ share: the files named on the command line (default: a glob), and the report.

    from _check import run
    run(offenders, 'nbs/*.ipynb', lambda n: f'{n} problem(s): how to fix them', ok=lambda paths: f'{len(paths)} notebooks: fine')

`offenders(path)` returns one message per violation; `run` prints each and exits with status 1 and the summary when
there is any (the tools are run as scripts, `python tools/check_x.py`, so this module is found beside them)."""
import sys
from pathlib import Path
from typing import Callable, Optional


def paths(args: list, default: str) -> list:
    "The files named in `args`, or every file matching the `default` glob (e.g. 'nbs/*.ipynb', 'comlrl/**/*.py'), sorted."
    return [Path(p) for p in args] or sorted(Path('.').glob(default))


def run(offenders: Callable, # path -> list of messages, one per violation
        default: str, # glob of the files to check when none are named
        failure: Callable, # number of violations -> the summary to exit with
        ok: Optional[Callable] = None, # files checked -> the line to print when there is no violation
        args: Optional[list] = None, # the files to check (default: sys.argv[1:])
       ):
    "Check every file, print each violation; exit with status 1 and `failure(n)` if there are any."
    files = paths(sys.argv[1:] if args is None else args, default)
    bad = [o for p in files for o in offenders(p)]
    for o in bad: print(o)
    if bad: sys.exit(failure(len(bad)))
    if ok: print(ok(files))
