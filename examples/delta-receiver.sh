#!/usr/bin/env bash
# Receives examples/delta-sender.sh's stream and shows it. Lost packets make
# cudadeltadec drop frames and ask for a keyframe, which rtpbin sends back
# to the sender as an RTCP PLI.
#   examples/delta-receiver.sh [SENDER_HOST] [PORT]   (default 127.0.0.1 5004)
# SINK (default autovideosink). Set GST_PLUGIN_PATH to build/gst.
set -euo pipefail
host=${1:-127.0.0.1}
port=${2:-5004}
caps="application/x-rtp,media=application,payload=96,clock-rate=90000,encoding-name=X-GST,rtcp-fb-nack-pli=(boolean)true"
exec gst-launch-1.0 -e rtpbin name=rtp rtp-profile=avpf \
  udpsrc port="$port" caps="$caps" ! rtp.recv_rtp_sink_0 \
  rtp. ! rtpgstdepay ! cudadeltadec ! videoconvert ! "${SINK:-autovideosink}" \
  udpsrc port=$((port + 1)) ! rtp.recv_rtcp_sink_0 \
  rtp.send_rtcp_src_0 ! udpsink host="$host" port=$((port + 5)) sync=false async=false
