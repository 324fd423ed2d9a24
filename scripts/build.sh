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
meson compile -C "$dir"
