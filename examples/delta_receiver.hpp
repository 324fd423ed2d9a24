// The receiving end of examples/delta-sender.sh's stream, as a pipeline an
// application (examples/delta_receiver.cpp) or a test builds:
//
//   rtpbin (rtp-profile=avpf)
//     udpsrc RTP  -> recv_rtp_sink_0     udpsrc RTCP -> recv_rtcp_sink_0
//     send_rtcp_src_0 -> udpsink to the sender (receiver reports, PLI)
//     recv_rtp_src_0_<SSRC>_<PT> -> rtpgstdepay ! cudadeltadec ! <sink>
//
// rtpbin adds a pad for every new SSRC. A restarted sender comes back with a
// new one, and a gst-launch line links only the first pad it sees: the new
// pad stays unlinked and the pipeline fails with "not-linked". Here each
// new SSRC's pad is linked to the depayloader in place of the previous one,
// whose data is dropped from then on (its jitterbuffer may still hold some).
// The decoder picks the new stream up at its first keyframe; its keyframe
// requests travel upstream through the linked pad and reach the new sender
// as an RTCP PLI.
#pragma once

#include <gst/gst.h>

#include <cstdio>
#include <mutex>
#include <string>

namespace delta_receiver {

struct Ports {
  int rtp = 5004;        // RTP from the sender
  int rtcp = 5005;       // RTCP from the sender
  int rtcp_back = 5009;  // RTCP to the sender (its udpsrc)
};

namespace detail {

// Which rtpbin pad feeds the depayloader now.
struct Relink {
  std::mutex lock;
  GstPad* depay_sink = nullptr;
  GstPad* current = nullptr;
  int ssrc_pads = 0;  // recv_rtp_src pads seen

  ~Relink() {
    if (current)
      gst_object_unref(current);
    if (depay_sink)
      gst_object_unref(depay_sink);
  }
};

inline GstPadProbeReturn drop_data(GstPad*, GstPadProbeInfo*, gpointer) {
  return GST_PAD_PROBE_DROP;
}

inline void on_pad_added(GstElement*, GstPad* pad, gpointer data) {
  if (!g_str_has_prefix(GST_PAD_NAME(pad), "recv_rtp_src_"))
    return;
  Relink* r = static_cast<Relink*>(data);
  std::lock_guard<std::mutex> g(r->lock);
  r->ssrc_pads++;
  if (r->current) {
    // What the old stream still pushes is dropped before it could reach an
    // unlinked pad (not-linked would stop the pipeline).
    gst_pad_add_probe(r->current, GST_PAD_PROBE_TYPE_DATA_DOWNSTREAM, drop_data, nullptr,
                      nullptr);
    gst_pad_unlink(r->current, r->depay_sink);
    gst_object_unref(r->current);
    r->current = nullptr;
  }
  const GstPadLinkReturn ret = gst_pad_link(pad, r->depay_sink);
  if (GST_PAD_LINK_FAILED(ret)) {
    fprintf(stderr, "delta_receiver: cannot link %s: %s\n", GST_PAD_NAME(pad),
            gst_pad_link_get_name(ret));
    return;
  }
  r->current = GST_PAD(gst_object_ref(pad));
}

inline void on_pad_removed(GstElement*, GstPad* pad, gpointer data) {
  Relink* r = static_cast<Relink*>(data);
  std::lock_guard<std::mutex> g(r->lock);
  if (r->current == pad) {
    gst_object_unref(r->current);
    r->current = nullptr;
  }
}

}  // namespace detail

// The receiver pipeline: RTP and RTCP from `sender_host` on `ports`
// (sockets bound to `bind_address`), RTCP back to it, decoded frames into
// `sink` (a gst-launch description, e.g. "videoconvert ! autovideosink").
// rtpbin is named "rtp", the decoder "dec". NULL with *error set when the
// description does not parse.
inline GstElement* make_pipeline(const std::string& sender_host, const Ports& ports,
                                 const std::string& sink, const std::string& bind_address,
                                 GError** error) {
  const std::string caps =
      "application/x-rtp,media=application,payload=96,clock-rate=90000,encoding-name=X-GST,"
      "rtcp-fb-nack-pli=(boolean)true";
  const std::string desc =
      "rtpbin name=rtp rtp-profile=avpf "
      "udpsrc address=" + bind_address + " port=" + std::to_string(ports.rtp) + " caps=\"" + caps +
      "\" ! rtp.recv_rtp_sink_0 "
      "udpsrc address=" + bind_address + " port=" + std::to_string(ports.rtcp) +
      " ! rtp.recv_rtcp_sink_0 "
      "rtp.send_rtcp_src_0 ! udpsink host=" + sender_host + " port=" +
      std::to_string(ports.rtcp_back) + " sync=false async=false "
      "rtpgstdepay name=depay ! cudadeltadec name=dec ! " + sink;
  GstElement* pipeline = gst_parse_launch(desc.c_str(), error);
  if (!pipeline)
    return nullptr;
  if (error && *error) {  // parsed, but with a recoverable problem: treat it as fatal
    gst_object_unref(pipeline);
    return nullptr;
  }
  GstElement* rtpbin = gst_bin_get_by_name(GST_BIN(pipeline), "rtp");
  GstElement* depay = gst_bin_get_by_name(GST_BIN(pipeline), "depay");
  auto* r = new detail::Relink();
  r->depay_sink = gst_element_get_static_pad(depay, "sink");
  g_object_set_data_full(G_OBJECT(rtpbin), "delta-receiver-relink", r,
                         [](gpointer p) { delete static_cast<detail::Relink*>(p); });
  g_signal_connect(rtpbin, "pad-added", G_CALLBACK(detail::on_pad_added), r);
  g_signal_connect(rtpbin, "pad-removed", G_CALLBACK(detail::on_pad_removed), r);
  gst_object_unref(depay);
  gst_object_unref(rtpbin);
  return pipeline;
}

// How many SSRC pads (streams) rtpbin of `pipeline` has added so far.
inline int ssrc_pads(GstElement* pipeline) {
  GstElement* rtpbin = gst_bin_get_by_name(GST_BIN(pipeline), "rtp");
  auto* r = static_cast<detail::Relink*>(
      g_object_get_data(G_OBJECT(rtpbin), "delta-receiver-relink"));
  int n = 0;
  if (r) {
    std::lock_guard<std::mutex> g(r->lock);
    n = r->ssrc_pads;
  }
  gst_object_unref(rtpbin);
  return n;
}

}  // namespace delta_receiver
