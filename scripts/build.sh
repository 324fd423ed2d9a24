#!/usr/bin/env bash
# Configures and builds into $1 (default: build) with the remaining
# arguments passed to meson. Puts /usr/local/cuda/bin on PATH when present
# so that the CUDA backend is found.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
if [ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
if [ -d "$dir" ]; then
  meson setup --reconfigure "$dir" "$@" >/dev/null
else
  meson setup "$dir" "$@" >/dev/null
fi
# Meson 1.0 gives nvcc's objects a depfile but never asks nvcc to write it,
# so ninja does not rebuild a .cu object when only a header it includes
# changed: a kernel launcher then reads a struct with its old layout (seen
# with DeltaLayout). Drop every CUDA object older than the newest header.
newest=$(find cuda/include cuda/src \( -name '*.hpp' -o -name '*.cuh' -o -name '*.h' \) \
  -printf '%T@ %p\n' | sort -n | tail -1 | cut -d' ' -f2-)
if [ -n "$newest" ]; then
  find "$dir" -name '*.cu.o' ! -newer "$newest" -delete
fi
meson compile -C "$dir"
