#!/usr/bin/env bash
# Stamps a label and the time on a camera's frames on the GPU and streams them
# with cudadeltaenc over RTP/UDP (receive with examples/delta-receiver.sh).
# The frames go to CUDA memory once (cudaupload), get the text there
# (cudatextoverlay: a glyph atlas for the changing time) and are encoded
# there: nothing returns to the host before the encoder's packets.
#   examples/textoverlay-camera-stream.sh [HOST] [PORT] [LABEL]
# Source: SOURCE=test (default, videotestsrc), SOURCE=v4l2 (DEVICE=/dev/video0),
# SOURCE=jetson (nvarguscamerasrc). TIME_MODE (default running-time; also
# buffer-time, stream-time, time-code, none), CLOCK=1 adds the wall clock.
# Without nvcodec's cudaupload (no libgstcuda), MEMORY=system keeps the frames
# in system memory (the element still blends on the GPU). Set GST_PLUGIN_PATH
# to build/gst.
set -euo pipefail
host=${1:-127.0.0.1}
port=${2:-5004}
label=${3:-Camera 1}
case "${SOURCE:-test}" in
  test) src="videotestsrc is-live=true pattern=smpte ! video/x-raw,width=1280,height=720,framerate=30/1" ;;
  v4l2) src="v4l2src device=${DEVICE:-/dev/video0} ! videoconvert" ;;
  jetson) src="nvarguscamerasrc ! video/x-raw(memory:NVMM),width=1920,height=1080,framerate=30/1 ! nvvidconv" ;;
  *) src="$SOURCE" ;;
esac
to_gpu="cudaupload ! video/x-raw(memory:CUDAMemory)"
[ "${MEMORY:-cuda}" = system ] && to_gpu="identity"
clock=false
[ "${CLOCK:-0}" = 1 ] && clock=true
exec gst-launch-1.0 -e rtpbin name=rtp rtp-profile=avpf \
  $src ! videoconvert ! video/x-raw,format=I420 ! $to_gpu \
  ! cudatextoverlay text="$label" time-mode="${TIME_MODE:-running-time}" clock=$clock \
      halignment=left valignment=top font-desc="Sans 18" \
  ! cudadeltaenc threshold="${THRESHOLD:-10}" \
  ! rtpgstpay config-interval=1 ! rtp.send_rtp_sink_0 \
  rtp.send_rtp_src_0 ! udpsink host="$host" port="$port" \
  rtp.send_rtcp_src_0 ! udpsink host="$host" port=$((port + 1)) sync=false async=false \
  udpsrc port=$((port + 5)) ! rtp.recv_rtcp_sink_0
