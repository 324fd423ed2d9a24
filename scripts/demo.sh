#!/usr/bin/env bash
# README's demo command: installs what is missing, builds, then runs
# cudagaussian on a photo and on a 720p test stream, printing what it did.
# Uses the GPU when there is one (backend=auto), else the CPU backend.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh build-demo -Dtests=disabled -Dbenchmarks=disabled
export GST_PLUGIN_PATH=$PWD/build-demo/gst
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
