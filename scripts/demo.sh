#!/usr/bin/env bash
# README's demo command: installs what is missing, builds, then streams
# ../shared/testdata/vtest.avi (or a test pattern) through cudadeltaenc and
# cudadeltadec over RTP/UDP on 127.0.0.1 and prints bitrate, compression,
# error and frame rate; then blurs a photo and a 720p stream with
# cudagaussian (GPU when there is one, else the CPU backend).
#   scripts/demo.sh [threshold]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh build-demo -Dtests=disabled -Dbenchmarks=disabled -Dexamples=enabled
export GST_PLUGIN_PATH=$PWD/build-demo/gst
clip=${CUDAFX_DEMO_CLIP:-../shared/testdata/vtest.avi}
[ -f "$clip" ] || clip=""
build-demo/examples/delta_stream_demo $clip --threshold "${1:-10}"
out=demo-out
mkdir -p "$out"
photo=${CUDAFX_DEMO_PHOTO:-../shared/testdata/building.jpg}
if [ -f "$photo" ]; then
  gst-launch-1.0 -q filesrc location="$photo" ! decodebin ! videoconvert ! video/x-raw,format=RGBA \
    ! cudagaussian sigma=4 ! videoconvert ! pngenc ! filesink location="$out/blurred.png"
  echo "demo: $photo blurred with sigma 4 -> $out/blurred.png"
fi
frames=300
t0=$(date +%s.%N)
gst-launch-1.0 -q videotestsrc num-buffers=$frames pattern=ball \
  ! video/x-raw,format=RGBA,width=1280,height=720,framerate=30/1 \
  ! cudagaussian sigma=3 ! fakesink sync=false 2>&1 | grep -v "^$" || true
t1=$(date +%s.%N)
python3 - "$t0" "$t1" "$frames" <<'PY'
import sys
t0, t1, n = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
print(f"demo: {n} frames of 1280x720 RGBA through cudagaussian sigma=3 in {t1 - t0:.2f} s "
      f"({n / (t1 - t0):.0f} frames/s, videotestsrc included)")
PY
