// Sender and receiver of the delta codec in one program, over real RTP/UDP
// on 127.0.0.1: frames from a file (or a test pattern) go through
// cudadeltaenc ! rtpgstpay ! udpsink, come back through udpsrc !
// rtpgstdepay ! cudadeltadec, and are compared with their source. Prints the
// bitrate, the ratio to raw video, the largest error against the threshold,
// PSNR and the end-to-end frame rate.
//
//   GST_PLUGIN_PATH=build/gst build/examples/delta_stream_demo [FILE] [--threshold T]
//       [--key-int-max K] [--frames N]
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

struct Totals {
  guint64 payload_bytes = 0, keyframes = 0;
};

GstBusSyncReply on_stats(GstBus*, GstMessage* msg, gpointer data) {
  const GstStructure* s = gst_message_get_structure(msg);
  if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ELEMENT && gst_structure_has_name(s, "cudadeltaenc-stats")) {
    Totals* t = static_cast<Totals*>(data);
    guint bytes = 0;
    gboolean key = FALSE;
    gst_structure_get_uint(s, "payload-bytes", &bytes);
    gst_structure_get_boolean(s, "keyframe", &key);
    t->payload_bytes += bytes;
    t->keyframes += key;
  }
  return GST_BUS_PASS;
}

GstElement* launch(const std::string& desc) {
  GError* err = nullptr;
  GstElement* p = gst_parse_launch(desc.c_str(), &err);
  if (!p) {
    fprintf(stderr, "delta demo: %s\n  in: %s\n", err ? err->message : "?", desc.c_str());
    exit(1);
  }
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  std::string file;
  int threshold = 10, key_int_max = 100, max_frames = 1000000;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--threshold" && i + 1 < argc) threshold = atoi(argv[++i]);
    else if (a == "--key-int-max" && i + 1 < argc) key_int_max = atoi(argv[++i]);
    else if (a == "--frames" && i + 1 < argc) max_frames = atoi(argv[++i]);
    else file = a;
  }
  const std::string source =
      file.empty() ? "videotestsrc num-buffers=300 pattern=ball ! video/x-raw,width=640,height=480,framerate=30/1"
                   : "filesrc location=\"" + file + "\" ! decodebin";
  GstElement* src = launch(source + " ! videoconvert ! video/x-raw,format=I420 ! appsink name=frames sync=false max-buffers=4");
  GstElement* receiver = launch(
      "udpsrc name=udp port=0 address=127.0.0.1 buffer-size=8388608 "
      "caps=\"application/x-rtp,media=application,clock-rate=90000,encoding-name=X-GST\" "
      "! rtpgstdepay ! cudadeltadec ! appsink name=out sync=false max-buffers=1000");
  gst_element_set_state(receiver, GST_STATE_PLAYING);
  GstElement* udp = gst_bin_get_by_name(GST_BIN(receiver), "udp");
  gint port = 0;
  g_object_get(udp, "port", &port, nullptr);
  gst_object_unref(udp);

  GstElement* frames = gst_bin_get_by_name(GST_BIN(src), "frames");
  GstElement* out = gst_bin_get_by_name(GST_BIN(receiver), "out");
  gst_element_set_state(src, GST_STATE_PLAYING);
  GstSample* first = gst_app_sink_pull_sample(GST_APP_SINK(frames));
  if (!first) {
    fprintf(stderr, "delta demo: no frame from %s\n", source.c_str());
    return 1;
  }
  GstVideoInfo info;
  gst_video_info_from_caps(&info, gst_sample_get_caps(first));
  gchar* caps = gst_caps_to_string(gst_sample_get_caps(first));
  GstElement* sender = launch(std::string("appsrc name=in format=time caps=\"") + caps +
                              "\" ! cudadeltaenc post-stats=true stats-interval=0 threshold=" +
                              std::to_string(threshold) +
                              " key-int-max=" + std::to_string(key_int_max) +
                              " ! rtpgstpay config-interval=1 mtu=1400 ! udpsink host=127.0.0.1 port=" +
                              std::to_string(port) + " sync=false");
  g_free(caps);
  Totals totals;
  GstBus* bus = gst_element_get_bus(sender);
  gst_bus_set_sync_handler(bus, on_stats, &totals, nullptr);
  GstElement* in = gst_bin_get_by_name(GST_BIN(sender), "in");
  gst_element_set_state(sender, GST_STATE_PLAYING);

  int sent = 0, received = 0, max_err = 0;
  double sq_err = 0, samples = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (GstSample* s = first; s && sent < max_frames;
       s = gst_app_sink_try_pull_sample(GST_APP_SINK(frames), 10 * GST_SECOND)) {
    GstBuffer* frame = gst_buffer_ref(gst_sample_get_buffer(s));
    gst_sample_unref(s);
    gst_app_src_push_buffer(GST_APP_SRC(in), gst_buffer_ref(frame));
    sent++;
    // Lockstep: the decoded frame comes back before the next is sent.
    GstSample* back = gst_app_sink_try_pull_sample(GST_APP_SINK(out), GST_SECOND);
    if (back) {
      received++;
      GstVideoFrame a, b;
      if (gst_video_frame_map(&a, &info, frame, GST_MAP_READ) &&
          gst_video_frame_map(&b, &info, gst_sample_get_buffer(back), GST_MAP_READ)) {
        for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&a); p++) {
          const int w = GST_VIDEO_FRAME_COMP_WIDTH(&a, p) * GST_VIDEO_FRAME_COMP_PSTRIDE(&a, p);
          for (int y = 0; y < GST_VIDEO_FRAME_COMP_HEIGHT(&a, p); y++) {
            const guint8* pa = static_cast<guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&a, p)) +
                               y * GST_VIDEO_FRAME_PLANE_STRIDE(&a, p);
            const guint8* pb = static_cast<guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&b, p)) +
                               y * GST_VIDEO_FRAME_PLANE_STRIDE(&b, p);
            for (int x = 0; x < w; x++) {
              const int d = std::abs(pa[x] - pb[x]);
              max_err = std::max(max_err, d);
              sq_err += d * d;
            }
            samples += w;
          }
        }
        gst_video_frame_unmap(&a);
        gst_video_frame_unmap(&b);
      }
      gst_sample_unref(back);
    }
    gst_buffer_unref(frame);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double fps = GST_VIDEO_INFO_FPS_N(&info) > 0
                         ? static_cast<double>(GST_VIDEO_INFO_FPS_N(&info)) / GST_VIDEO_INFO_FPS_D(&info)
                         : 30.0;
  const double raw = static_cast<double>(GST_VIDEO_INFO_SIZE(&info)) * sent;
  const double mse = samples > 0 ? sq_err / samples : 0;
  printf("delta demo: %d frames of %dx%d I420 over RTP/UDP on 127.0.0.1, threshold %d, "
         "key-int-max %d\n",
         sent, GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info), threshold, key_int_max);
  printf("  bitrate     %.2f Mbit/s at %.0f fps (%" G_GUINT64_FORMAT " keyframes)\n",
         totals.payload_bytes * 8.0 * fps / std::max(sent, 1) / 1e6, fps, totals.keyframes);
  printf("  vs raw      %.1fx smaller\n", totals.payload_bytes ? raw / totals.payload_bytes : 0.0);
  printf("  max error   %d (threshold %d)%s\n", max_err, threshold,
         max_err <= threshold ? "" : "  <-- BOUND VIOLATED");
  if (mse > 0)
    printf("  PSNR        %.1f dB\n", 10 * std::log10(255.0 * 255.0 / mse));
  else
    printf("  PSNR        inf (lossless)\n");
  printf("  frames/s    %.0f end to end (encode, RTP, UDP, decode, compare; lockstep)\n", sent / secs);
  printf("  lost        %d of %d frames\n", sent - received, sent);

  for (GstElement* p : {sender, receiver, src})
    gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(bus);
  for (GstElement* e : {in, out, frames, sender, receiver, src})
    gst_object_unref(e);
  return max_err <= threshold && received == sent ? 0 : 1;
}
