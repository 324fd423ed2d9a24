#!/usr/bin/env bash
# Builds the libFuzzer targets with clang under AddressSanitizer and
# UndefinedBehaviorSanitizer and fuzzes each for a bounded number of runs:
# the delta decoder (RUNS, from a seed corpus of valid streams of formats 3
# and 4, with and without motion vectors),
# cudaconvolve's kernel text (RUNS / 4: each run plans and filters a small
# frame) and, where pangocairo is, cudatextoverlay's text input (RUNS / 20:
# each run lays out and paints text).
#   scripts/fuzz.sh [RUNS]      (default 200000; -1 runs until stopped)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-200000}
out=build-fuzz
mkdir -p "$out/corpus"
srcs="cuda/src/common/image.cpp cuda/src/common/parallel.cpp cuda/src/common/cpu_features.cpp cuda/src/delta/delta_cpu.cpp cuda/src/delta/delta_packet.cpp cuda/src/delta/crc32_clmul.cpp cuda/src/delta/delta_stream.cpp cuda/src/delta/delta_motion.cpp cuda/src/delta/motion_sad.cpp cuda/src/delta/temporal_avx2.cpp cuda/src/delta/symbol_pairs_avx2.cpp cuda/src/delta/delta_entropy.cpp cuda/src/delta/adaptive_model.cpp cuda/src/delta/delta_tiles_cpu.cpp cuda/src/delta/delta_tile_entropy.cpp"
flags="-std=c++17 -O1 -g -Icuda/include -Icuda/src -fno-omit-frame-pointer"
libs="-lzstd -lz -lpthread"
clang++ $flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  tests/fuzz/fuzz_delta_decoder.cpp $srcs $libs -o "$out/fuzz_delta_decoder"
clang++ $flags tests/fuzz/make_delta_seeds.cpp $srcs $libs -o "$out/make_delta_seeds"
"$out/make_delta_seeds" "$out/corpus"

# Runs fuzzer $1 for $2 runs on corpus $3 with the further libFuzzer
# arguments after it; prints the run count, or the log's end and fails.
fuzz() {
  local name=$1 n=$2 corpus=$3
  shift 3
  set +e
  "$out/$name" -runs="$n" -print_final_stats=1 "$@" "$corpus" > "$out/$name.log" 2>&1
  local rc=$?
  set -e
  grep -E "stat::number_of_executed_units|Done" "$out/$name.log" || true
  if [ $rc -ne 0 ]; then
    tail -40 "$out/$name.log"
    echo "fuzz: $name FAILED (exit $rc); the crashing input is in $PWD"
    exit 1
  fi
  echo "fuzz: $n runs of $name, no crash"
}

fuzz fuzz_delta_decoder "$runs" "$out/corpus" -max_len=16384

# cudaconvolve's kernel property.
kernel_runs=$(( runs < 0 ? -1 : runs / 4 ))
convsrcs="cuda/src/common/image.cpp cuda/src/common/parallel.cpp cuda/src/common/cuda_resources_none.cpp cuda/src/convolve/convolve_plan.cpp cuda/src/convolve/convolve_cpu.cpp cuda/src/convolve/convolve_cuda_none.cpp"
# shellcheck disable=SC2086
clang++ $flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  tests/fuzz/fuzz_convolve_kernel.cpp $convsrcs -lpthread -o "$out/fuzz_convolve_kernel"
mkdir -p "$out/kernel-corpus"
printf '\x04\x00\xff\xff\x00\x05 1 2 1; 2 4 2; 1 2 1' > "$out/kernel-corpus/seed1"
printf '\x00\x80\x01\x02\x06\x31-1 0 1\n-2,0,2\n-1 0 1' > "$out/kernel-corpus/seed2"
fuzz fuzz_convolve_kernel "$kernel_runs" "$out/kernel-corpus" -max_len=2048

# cudatextoverlay's text input: Pango and fontconfig keep caches for the
# life of the process, which LeakSanitizer would report, so leaks are not
# checked here (ASan's other checks are).
if pkg-config --exists pangocairo; then
  text_runs=$(( runs < 0 ? -1 : runs / 20 ))
  textsrcs="gst/gstcudafxtextrender.cpp gst/gstcudafxglyphatlas.cpp gst/gstcudafxtimedtext.cpp"
  # shellcheck disable=SC2046
  clang++ $flags -Igst -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    tests/fuzz/fuzz_text_input.cpp $textsrcs $(pkg-config --cflags --libs pangocairo gstreamer-1.0) \
    -o "$out/fuzz_text_input"
  mkdir -p "$out/text-corpus"
  printf 'xxxxHello <b>GPU</b> 0:00:01.000' > "$out/text-corpus/seed1"
  printf '\x0f\x40\x80\x01\xff\xfe<i' > "$out/text-corpus/seed2"
  ASAN_OPTIONS=detect_leaks=0 fuzz fuzz_text_input "$text_runs" "$out/text-corpus" -max_len=512
fi
