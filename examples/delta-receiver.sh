#!/usr/bin/env bash
# Receives examples/delta-sender.sh's stream and shows it, and goes on
# receiving when the sender restarts (a new RTP stream: the program links
# it in place of the old one, where a gst-launch line would stop with
# "not-linked"). Lost packets make cudadeltadec drop frames and ask for a
# keyframe, which rtpbin sends back to the sender as an RTCP PLI.
#   examples/delta-receiver.sh [SENDER_HOST] [PORT]   (default 127.0.0.1 5004)
# SINK (default autovideosink). Runs build/examples/delta_receiver
# (DELTA_RECEIVER overrides the path). Set GST_PLUGIN_PATH to build/gst.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
receiver=${DELTA_RECEIVER:-$here/../build/examples/delta_receiver}
if [ ! -x "$receiver" ]; then
  echo "delta-receiver.sh: $receiver not found: build first (meson compile -C build)" >&2
  exit 1
fi
exec "$receiver" "${1:-127.0.0.1}" "${2:-5004}"
