#!/usr/bin/env bash
# README's test command: installs what is missing, builds, runs every test.
#   scripts/test.sh            CUDA backend if nvcc is there (GPU tests skip
#                              without a GPU), else CPU only
#   scripts/test.sh --cpu-only the build without CUDA (-Dcuda=disabled)
# Prints "tests: N passed, N failed, N skipped" (GoogleTest cases) last.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
if [ "${1:-}" = "--cpu-only" ]; then
  dir=build-cpu-only
  scripts/build.sh "$dir" -Dcuda=disabled -Dtests=enabled
else
  dir=build-test
  # One GPU architecture keeps the build short; release builds cover all.
  scripts/build.sh "$dir" -Dtests=enabled -Dcuda-arch="${CUDAFX_TEST_ARCH:-90}"
fi
status=0
meson test -C "$dir" --print-errorlogs || status=$?
python3 scripts/gtest_summary.py "$dir/meson-logs/testlog.txt" || status=1
exit $status
