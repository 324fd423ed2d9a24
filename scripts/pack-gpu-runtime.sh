#!/usr/bin/env bash
# Packs what the GPU machine (no GStreamer, no OpenCV, no codecs:
# ../shared/gpu/README.md) needs to run the tests of a build made here:
# the runtime, with ../shared/gpu/pack-runtime.sh, into .devrt/, and the
# test data the tests read into .devrt/testdata. Builds nothing.
#
#   scripts/pack-gpu-runtime.sh [BUILD_DIR]        (default: build)
#
# There, from the checkout (with .devrt/, or .devrt.tar.xz unpacked by
# `tar -xJf .devrt.tar.xz`, and BUILD_DIR's tests/test_* and
# gst/libgstcudafx.so):
#   source .devrt/env.sh
#   export GST_PLUGIN_PATH=$PWD/BUILD_DIR/gst CUDAFX_TESTDATA=$PWD/.devrt/testdata
#   export CUDAFX_REQUIRE_GPU=1   # a missing GPU or cudaupload fails instead of skipping
#   BUILD_DIR/tests/test_gaussian_op   # and the other BUILD_DIR/tests/test_*
#
# Plugins: pack-runtime.sh's default list (read from it). The real-footage
# test (test_delta_codec's RealFootageStaysWithinThreshold) decodes
# vtest.avi with avidemux (`avi`) and avdec_msmpeg4 (`libav`), but libav's
# library closure is about 230 MB (all of FFmpeg's codecs and their
# dependencies), far beyond the 64 MiB the device tool carries for the
# build and .devrt together. So neither is packed; instead the first 40
# frames are decoded here into a raw I420 copy, zstd-compressed
# (.devrt/testdata/vtest.avi.i420.zst, about 6 MB), which the test reads
# where GStreamer cannot decode the clip (tests/support/testdata.hpp).
# DEVRT_EXTRA_PLUGINS="avi libav" packs them anyway, for a machine with room.
# Also writes .devrt.tar.xz (git-ignored too, about 20 MB): .devrt is about
# 50 MB, and with the test programs over the 64 MiB the device tool carries.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=.devrt
pack=../shared/gpu/pack-runtime.sh
testdata=${CUDAFX_TESTDATA:-../shared/testdata}
die() { echo "pack-gpu-runtime: $*" >&2; exit 1; }

[ -x "$pack" ] || die "no $pack"
[ -d "$build/tests" ] && [ -d "$build/gst" ] ||
  die "no $build/tests or $build/gst: build first" \
    "(meson setup $build -Dtests=enabled -Dcuda-arch=90 && meson compile -C $build)"
[ -d "$testdata" ] || die "no test data folder $testdata"
for tool in gst-launch-1.0 zstd; do
  command -v "$tool" >/dev/null || die "$tool is missing (scripts/deps.sh; zstd: apt-get install zstd)"
done

# pack-runtime.sh's default list, as its line `plugins=${DEVRT_PLUGINS:-"..."}` has it
default=$(sed -n 's/^plugins=\${DEVRT_PLUGINS:-"\(.*\)"}$/\1/p' "$pack")
[ -n "$default" ] || die "cannot read the default plugin list from $pack"

rm -rf "$out"
# rtsp: test_rtsp_server's clients (rtspsrc) against the example server.
DEVRT_PLUGINS="$default rtsp ${DEVRT_EXTRA_PLUGINS:-}" "$pack" "$out" "$build"

# The images the tests decode (GaussianOnPhotos, ResizeOnPhotos): pngdec and
# jpegdec are in the default list.
mkdir -p "$out/testdata"
for f in fruits.jpg building.jpg box.png sudoku.png chessboard.png left01.jpg; do
  cp "$testdata/$f" "$out/testdata/"
done

# vtest.avi's first frames, raw: "CUDAFX-RAW I420 <w>x<h> <n>\n", then the
# frames with tightly packed planes, zstd-compressed (testdata.hpp).
frames=40 w=768 h=576
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
# identity's eos-after counts the buffer it ends on: frames + 1 lets `frames` through
gst-launch-1.0 -q filesrc location="$testdata/vtest.avi" ! avidemux ! avdec_msmpeg4 ! \
  videoconvert ! "video/x-raw,format=I420,width=$w,height=$h" ! \
  identity eos-after=$((frames + 1)) ! filesink location="$raw" ||
  die "cannot decode vtest.avi here (gstreamer1.0-libav: scripts/deps.sh)"
want=$((frames * w * h * 3 / 2))
got=$(stat -c %s "$raw")
[ "$got" -eq "$want" ] || die "decoded $got bytes of vtest.avi, expected $want ($frames frames of ${w}x$h)"
{ printf 'CUDAFX-RAW I420 %dx%d %d\n' "$w" "$h" "$frames"; cat "$raw"; } |
  zstd -19 -q -T0 -o "$out/testdata/vtest.avi.i420.zst"

# What the device tool would carry: the runtime, the test programs and the
# plugin (not the build's object files), 64 MiB at most. The runtime alone
# is about 50 MB, so it is also packed as .devrt.tar.xz (unpack it there
# with `tar -xJf .devrt.tar.xz`).
tar -cf - "$out" | xz -T0 -6 > .devrt.tar.xz
for d in "$out" "$out/lib" "$out/plugins" "$out/testdata" .devrt.tar.xz; do du -sh "$d"; done |
  sed 's/^/pack-gpu-runtime: /' >&2
mapfile -t progs < <(find "$build/tests" -maxdepth 1 -type f -name 'test_*' -perm -u+x | sort)
progs+=("$build/gst/libgstcudafx.so")
sum_mib() { du -ck "$@" | tail -1 | awk '{printf "%.1f", $1 / 1024}'; }
echo "pack-gpu-runtime: ${#progs[@]} programs of $build: $(sum_mib "${progs[@]}") MiB;" \
  "with $out: $(sum_mib "$out" "${progs[@]}") MiB, with .devrt.tar.xz:" \
  "$(sum_mib .devrt.tar.xz "${progs[@]}") MiB (the device tool carries at most 64 MiB)" >&2
