#!/usr/bin/env bash
# Builds the delta decoder's libFuzzer target with clang under
# AddressSanitizer and UndefinedBehaviorSanitizer, makes a seed corpus of
# valid streams, and fuzzes for a bounded number of runs.
#   scripts/fuzz.sh [RUNS]      (default 200000; -1 runs until stopped)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-200000}
out=build-fuzz
mkdir -p "$out/corpus"
srcs="cuda/src/common/image.cpp cuda/src/common/parallel.cpp cuda/src/delta/delta_cpu.cpp cuda/src/delta/delta_packet.cpp cuda/src/delta/delta_stream.cpp cuda/src/delta/delta_entropy.cpp cuda/src/delta/adaptive_model.cpp"
flags="-std=c++17 -O1 -g -Icuda/include -Icuda/src -fno-omit-frame-pointer"
libs="-lzstd -lz -lpthread"
clang++ $flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  tests/fuzz/fuzz_delta_decoder.cpp $srcs $libs -o "$out/fuzz_delta_decoder"
clang++ $flags tests/fuzz/make_delta_seeds.cpp $srcs $libs -o "$out/make_delta_seeds"
"$out/make_delta_seeds" "$out/corpus"
set +e
"$out/fuzz_delta_decoder" -runs="$runs" -max_len=16384 -print_final_stats=1 "$out/corpus" \
  > "$out/fuzz.log" 2>&1
rc=$?
set -e
grep -E "stat::number_of_executed_units|Done" "$out/fuzz.log" || true
if [ $rc -ne 0 ]; then
  tail -40 "$out/fuzz.log"
  echo "fuzz: fuzz_delta_decoder FAILED (exit $rc); the crashing input is in $PWD"
  exit 1
fi
echo "fuzz: $runs runs of fuzz_delta_decoder, no crash"
