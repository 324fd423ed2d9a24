#!/usr/bin/env bash
# Upscales a camera live: a v4l2 webcam by default, or a Jetson CSI camera with
# JETSON=1 (nvarguscamerasrc). Set GST_PLUGIN_PATH to the build's gst/ first.
#   examples/upscale-camera.sh [factor] [method]
#   method: nearest-neighbour | bilinear | bicubic
set -euo pipefail
factor=${1:-2}
method=${2:-bilinear}
if [ "${JETSON:-0}" = 1 ]; then
  src="nvarguscamerasrc ! video/x-raw(memory:NVMM),width=1280,height=720,framerate=30/1 ! nvvidconv ! video/x-raw,format=RGBA"
else
  src="v4l2src device=${DEVICE:-/dev/video0} ! videoconvert ! video/x-raw,format=RGBA"
fi
exec gst-launch-1.0 $src ! cudaupscale factor="$factor" method="$method" ! videoconvert ! autovideosink
