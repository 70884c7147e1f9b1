#!/usr/bin/env bash
# Download, here, what the GPU machine lacks, as wheels for its Python (3.12, manylinux x86-64), into .whl/ at the
# repository's root (git-ignored; the device tool carries it with `carry: [".whl"]`):
#   .whl/site  the pinned list in requirements-gpu.txt
#   .whl/ref   CoMLRL 1.4.3, installed apart on the machine (its import name is this repository's)
# Prints the carried size, which must stay under the device tool's 64 MiB (with the working tree).
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .whl && mkdir -p .whl/site .whl/ref
dl() {
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$@"
}
dl .whl/site -r benchmarks/gpu/requirements-gpu.txt
dl .whl/ref "comlrl==1.4.3"
ls -l .whl/site .whl/ref
tree=$(git ls-files -z | xargs -0 du -cb | tail -1 | cut -f1)
whl=$(du -sb .whl | cut -f1)
echo "carried: wheels $((whl / 1024)) KiB + working tree $((tree / 1024)) KiB = $(((whl + tree) / 1048576)) MiB (limit 64 MiB)"
