#!/usr/bin/env bash
# Blurs a camera live: a v4l2 webcam by default, or a Jetson CSI camera with
# JETSON=1 (nvarguscamerasrc). Set GST_PLUGIN_PATH to the build's gst/ first.
#   examples/gaussian-camera.sh [sigma]
set -euo pipefail
sigma=${1:-3}
if [ "${JETSON:-0}" = 1 ]; then
  src="nvarguscamerasrc ! video/x-raw(memory:NVMM),width=1920,height=1080,framerate=30/1 ! nvvidconv ! video/x-raw,format=RGBA"
else
  src="v4l2src device=${DEVICE:-/dev/video0} ! videoconvert ! video/x-raw,format=RGBA"
fi
exec gst-launch-1.0 $src ! cudagaussian sigma="$sigma" ! videoconvert ! autovideosink
