#!/usr/bin/env bash
# Runs the test suites on the GPU machine (see ../shared/gpu/README.md), with
# CUDAFX_REQUIRE_GPU=1 so that a missing device or nvcodec element fails
# instead of skipping, then a memcheck pass over the CUDA cases.
#   scripts/gpu-tests.sh BUILD_DIR [OUT_DIR] [GTEST_FILTER_FOR_MEMCHECK]
# MEMCHECK=0 leaves the memcheck pass out; MEMCHECK_SUITES="test_a test_b"
# limits it to those suites (the whole pass takes longer than one device call). RACECHECK="suite ..." runs those
# suites' CUDA cases (RACECHECK_FILTER, default the memcheck filter) under
# racecheck and synccheck too (shared-memory kernels; racecheck is ~70x slower
# than a plain run, so a narrow filter).
# memcheck runs every case of the element and base-class suites (small
# frames) and the filter's cases (default: the CUDA ones) of the others.
# BUILD_DIR: a build configured for the GPU's architecture (-Dcuda-arch=90);
# the runtime packed by scripts/pack-gpu-runtime.sh must be in .devrt/.
# Prints "tests: N passed, N failed, N skipped" over all suites; logs go to
# OUT_DIR (default: gpu-logs).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:?build dir}
out=${2:-gpu-logs}
memcheck_filter=${3:-*Cuda*:*CUDA*:*Gpu*:*GPU*:*Device*}
mkdir -p "$out"
# shellcheck disable=SC1091
source .devrt/env.sh
export GST_PLUGIN_PATH=$PWD/$build/gst
export CUDAFX_REQUIRE_GPU=1
[ -d .devrt/testdata ] && export CUDAFX_TESTDATA=$PWD/.devrt/testdata
# test_rtsp_server starts the example server, which meson names in the
# environment of `meson test` only.
[ -x "$build/examples/delta_rtsp_server" ] &&
  export CUDAFX_RTSP_SERVER=$PWD/$build/examples/delta_rtsp_server
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/device.txt" 2>&1
status=0
for t in "$build"/tests/test_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  "$t" --gtest_output="xml:$out/$name.xml" > "$out/$name.log" 2>&1 || status=1
  tail -n 3 "$out/$name.log" | sed "s/^/$name: /"
done
python3 - "$out" <<'PY'
import glob, sys, xml.etree.ElementTree as ET
p = f = s = 0
for x in glob.glob(sys.argv[1] + "/*.xml"):
    for c in ET.parse(x).getroot().iter("testcase"):
        if c.find("failure") is not None: f += 1
        elif c.get("result") == "skipped" or c.find("skipped") is not None: s += 1
        else: p += 1
print(f"tests: {p} passed, {f} failed, {s} skipped")
PY
# memcheck over the CUDA cases of every suite (slow: filtered)
if [ "${MEMCHECK:-1}" != 0 ] && command -v compute-sanitizer >/dev/null; then
  for t in "$build"/tests/test_*; do
    name=$(basename "$t")
    if [ -n "${MEMCHECK_SUITES:-}" ] && [[ " $MEMCHECK_SUITES " != *" $name "* ]]; then continue; fi
    case $name in
      test_filter_modes|test_filter_idioms|test_gaussian_element|test_upscale_element|test_harris_element|test_corners_meta|test_text_overlay_element|test_overlay_blend|test_shade|test_greyworld_element|test_autocontrast_element|test_convolve_element|test_canny_element) filter='*' ;;
      test_support) continue ;;
      *) filter=$memcheck_filter ;;
    esac
    compute-sanitizer --tool memcheck --leak-check full --require-cuda-init=no --error-exitcode 9 \
      "$t" --gtest_filter="$filter" > "$out/memcheck-$name.log" 2>&1
    rc=$?
    echo "memcheck $name: rc=$rc $(grep -E 'ERROR SUMMARY' "$out/memcheck-$name.log" | tail -1) $(grep -cE '^\[       OK \]' "$out/memcheck-$name.log") ok"
    [ $rc -eq 0 ] || status=1
  done
fi
for name in ${RACECHECK:-}; do
  t=$build/tests/$name
  for tool in racecheck synccheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 \
      "$t" --gtest_filter="${RACECHECK_FILTER:-$memcheck_filter}" > "$out/$tool-$name.log" 2>&1
    rc=$?
    echo "$tool $name: rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/$tool-$name.log" | tail -1) $(grep -cE '^\[       OK \]' "$out/$tool-$name.log") ok"
    [ $rc -eq 0 ] || status=1
  done
done
exit $status
