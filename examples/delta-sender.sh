#!/usr/bin/env bash
# Sends video as a cudadeltaenc stream over RTP/UDP, with RTCP through rtpbin
# so that the receiver's keyframe requests (PLI) reach the encoder.
#   examples/delta-sender.sh [HOST] [PORT]     (default 127.0.0.1 5004)
# Source: SOURCE=test (default, videotestsrc), SOURCE=v4l2 (DEVICE=/dev/video0),
# SOURCE=jetson (nvarguscamerasrc, a Jetson CSI camera), or SOURCE="any
# gst-launch source description". THRESHOLD (default 10), KEY_INT_MAX
# (default 0: keyframes only when the receiver asks). Ports: RTP on PORT,
# RTCP out on PORT+1, RTCP back on PORT+5. Set GST_PLUGIN_PATH to build/gst.
set -euo pipefail
host=${1:-127.0.0.1}
port=${2:-5004}
case "${SOURCE:-test}" in
  test) src="videotestsrc is-live=true pattern=ball ! video/x-raw,width=640,height=480,framerate=30/1" ;;
  v4l2) src="v4l2src device=${DEVICE:-/dev/video0} ! videoconvert" ;;
  jetson) src="nvarguscamerasrc ! video/x-raw(memory:NVMM),width=1280,height=720,framerate=30/1 ! nvvidconv" ;;
  *) src="$SOURCE" ;;
esac
exec gst-launch-1.0 -e rtpbin name=rtp rtp-profile=avpf \
  $src ! videoconvert ! video/x-raw,format=I420 \
  ! cudadeltaenc threshold="${THRESHOLD:-10}" key-int-max="${KEY_INT_MAX:-0}" \
  ! rtpgstpay config-interval=1 ! rtp.send_rtp_sink_0 \
  rtp.send_rtp_src_0 ! udpsink host="$host" port="$port" \
  rtp.send_rtcp_src_0 ! udpsink host="$host" port=$((port + 1)) sync=false async=false \
  udpsrc port=$((port + 5)) ! rtp.recv_rtcp_sink_0
