// An RTSP server for one camera's delta stream, to any number of clients
// (issue #18, item 3). One pipeline, one encoder, shared by every client
// (gst-rtsp-server's shared media); each client that starts playing gets a
// keyframe at once, so a late joiner decodes from its first frames instead
// of waiting for the next periodic keyframe.
//
// A client that loses a packet (UDP) drops frames until a keyframe; its
// decoder's keyframe request reaches the encoder as an RTCP PLI, which the
// SDP offers ("a=rtcp-fb:96 nack pli", see offer_pli): the keyframe comes a
// few frames after the loss (tests/test_rtsp_server.cpp, with no periodic
// keyframes at all). RTCP feedback goes early at most once a report interval
// (RFC 4585), so a second loss soon after the first may wait up to five
// seconds: the periodic keyframes (key-int-max, default 60: two seconds at
// 30 frames/s) bound that wait.
//
// --intra-refresh replaces both the periodic keyframes and the keyframe for
// each joining client (cudadeltaenc intra-refresh=true): a band of tiles
// coded without temporal prediction sweeps the frame every key-int-max
// frames, so a client that joins or loses a packet is whole again within
// one sweep (after the payloader's next config, sent every second), and no
// client's arrival puts a keyframe spike into everyone's stream.
//
//   GST_PLUGIN_PATH=build/gst build/examples/delta_rtsp_server [--port P]
//       [--mount /cam] [--threshold T] [--key-int-max K] [--intra-refresh]
//       [--multicast] [--source "gst-launch description of the raw video"]
//       [--seconds S]
//
// Prints "rtsp://127.0.0.1:PORT/MOUNT" on a line of its own when it serves
// (--port 0: any free port, the one it got). A client:
//
//   gst-launch-1.0 rtspsrc location=rtsp://HOST:8554/cam latency=50
//       ! rtpgstdepay ! cudadeltadec ! videoconvert ! autovideosink  (one line)
//
// --multicast also offers multicast transport (224.3.0.0-224.3.0.10, ports
// 5000-5010, TTL 16) to clients that ask for it (rtspsrc protocols=udp-mcast).
#include <glib-unix.h>
#include <gst/gst.h>
#include <gst/rtsp-server/rtsp-server.h>
#include <gst/video/video.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace {

struct Options {
  std::string port = "8554";
  std::string mount = "/cam";
  int threshold = 10;
  int key_int_max = 60;
  bool intra_refresh = false;
  bool multicast = false;
  double seconds = 0;  // 0: until SIGINT or SIGTERM
  std::string source =
      "videotestsrc is-live=true pattern=ball ! "
      "video/x-raw,format=I420,width=640,height=480,framerate=30/1";
};

// The shared media's payloader, where keyframe requests go upstream to the
// encoder. Set when the media is configured, cleared when it is unprepared
// (the last client left; the next one makes a new one).
struct Shared {
  std::mutex lock;
  std::condition_variable gone;   // the media was unprepared
  GstRTSPMedia* media = nullptr;  // not a reference: compared, never used
  GstElement* payloader = nullptr;
  guint requests = 0;
};

void request_keyframe(Shared* s, const char* why) {
  GstPad* pad = nullptr;
  guint count = 0;
  {
    std::lock_guard<std::mutex> g(s->lock);
    if (s->payloader)
      pad = gst_element_get_static_pad(s->payloader, "sink");
    count = ++s->requests;
  }
  if (!pad)
    return;
  // all-headers: rtpgstpay sends its config (the caps) with the keyframe,
  // which a new client's depayloader needs before any frame
  gst_pad_push_event(pad, gst_video_event_new_upstream_force_key_unit(GST_CLOCK_TIME_NONE, TRUE,
                                                                       count));
  gst_object_unref(pad);
  g_printerr("keyframe requested: %s\n", why);
}

void on_unprepared(GstRTSPMedia* media, gpointer data) {
  Shared* s = static_cast<Shared*>(data);
  std::lock_guard<std::mutex> g(s->lock);
  if (s->media == media) {
    gst_clear_object(&s->payloader);
    s->media = nullptr;
    s->gone.notify_all();
  }
}

GstRTSPFilterResult close_client(GstRTSPServer*, GstRTSPClient*, gpointer) {
  return GST_RTSP_FILTER_REMOVE;
}

// Adds "rtcp-fb-nack-pli" to the payloader's caps, so that the SDP offers
// "a=rtcp-fb:96 nack pli". A client's rtpsession turns its decoder's keyframe
// request (GstForceKeyUnit, upstream) into an RTCP PLI only for a payload type
// whose caps have that field; without it the request went on upstream into
// rtspsrc's udpsrc and was lost. The server's rtpsession turns the PLI back
// into a GstForceKeyUnit towards the encoder. (rtpgstpay keeps fields that
// downstream caps fix, but gst-rtsp-server links the payloader to rtpbin
// itself: no capsfilter can follow it in the launch line.)
GstPadProbeReturn offer_pli(GstPad*, GstPadProbeInfo* info, gpointer) {
  GstEvent* event = GST_PAD_PROBE_INFO_EVENT(info);
  if (GST_EVENT_TYPE(event) != GST_EVENT_CAPS)
    return GST_PAD_PROBE_OK;
  GstCaps* caps = nullptr;
  gst_event_parse_caps(event, &caps);
  caps = gst_caps_copy(caps);
  for (guint i = 0; i < gst_caps_get_size(caps); ++i)
    gst_structure_set(gst_caps_get_structure(caps, i), "rtcp-fb-nack-pli", G_TYPE_BOOLEAN, TRUE,
                      nullptr);
  GstEvent* with_pli = gst_event_new_caps(caps);
  gst_event_set_seqnum(with_pli, gst_event_get_seqnum(event));
  gst_caps_unref(caps);
  gst_event_unref(event);
  GST_PAD_PROBE_INFO_DATA(info) = with_pli;
  return GST_PAD_PROBE_OK;
}

void on_media_configure(GstRTSPMediaFactory*, GstRTSPMedia* media, gpointer data) {
  Shared* s = static_cast<Shared*>(data);
  GstElement* bin = gst_rtsp_media_get_element(media);
  GstElement* pay = gst_bin_get_by_name(GST_BIN(bin), "pay0");
  gst_object_unref(bin);
  if (GstPad* src = pay ? gst_element_get_static_pad(pay, "src") : nullptr) {
    gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, offer_pli, nullptr, nullptr);
    gst_object_unref(src);
  }
  {
    std::lock_guard<std::mutex> g(s->lock);
    gst_clear_object(&s->payloader);
    s->payloader = pay;
    s->media = media;
  }
  g_signal_connect(media, "unprepared", G_CALLBACK(on_unprepared), s);
}

// Emitted after the PLAY response, when the client's transport is active:
// the keyframe that follows reaches it.
void on_play_request(GstRTSPClient* client, GstRTSPContext*, gpointer data) {
  GstRTSPConnection* conn = gst_rtsp_client_get_connection(client);
  const std::string who = conn ? gst_rtsp_connection_get_ip(conn) : "?";
  request_keyframe(static_cast<Shared*>(data), ("a client at " + who + " plays").c_str());
}

// With intra refresh a joining client needs no keyframe (the sweep makes
// it whole): no play-request handler then.
void on_client_connected(GstRTSPServer*, GstRTSPClient* client, gpointer data) {
  g_signal_connect(client, "play-request", G_CALLBACK(on_play_request), data);
}

gboolean quit_loop(gpointer loop) {
  g_main_loop_quit(static_cast<GMainLoop*>(loop));
  return G_SOURCE_REMOVE;
}

// A whole decimal number in [lo, hi] (atoi would take "abc" for 0).
bool parse_int(const char* text, long lo, long hi, int* out) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi)
    return false;
  *out = static_cast<int>(v);
  return true;
}

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--port" && has_value)
      o->port = argv[++i];
    else if (a == "--mount" && has_value)
      o->mount = argv[++i];
    else if (a == "--threshold" && has_value) {
      if (!parse_int(argv[++i], 0, 255, &o->threshold))  // cudadeltaenc's range
        return false;
    } else if (a == "--key-int-max" && has_value) {
      if (!parse_int(argv[++i], 0, G_MAXINT, &o->key_int_max))
        return false;
    }
    else if (a == "--source" && has_value)
      o->source = argv[++i];
    else if (a == "--seconds" && has_value) {
      char* end = nullptr;
      o->seconds = std::strtod(argv[++i], &end);
      if (end == argv[i] || *end != '\0' || !(o->seconds >= 0))
        return false;
    }
    else if (a == "--multicast")
      o->multicast = true;
    else if (a == "--intra-refresh")
      o->intra_refresh = true;
    else
      return false;
  }
  return !o->mount.empty() && o->mount[0] == '/';
}

}  // namespace

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  Options o;
  if (!parse(argc, argv, &o)) {
    fprintf(stderr,
            "usage: %s [--port P] [--mount /cam] [--threshold T] [--key-int-max K] "
            "[--intra-refresh] [--multicast] [--source \"LAUNCH\"] [--seconds S]\n",
            argv[0]);
    return 2;
  }
  GstElementFactory* enc = gst_element_factory_find("cudadeltaenc");
  if (!enc) {
    fprintf(stderr, "delta_rtsp_server: no cudadeltaenc (set GST_PLUGIN_PATH to build/gst)\n");
    return 1;
  }
  gst_object_unref(enc);

  GMainLoop* loop = g_main_loop_new(nullptr, FALSE);
  GstRTSPServer* server = gst_rtsp_server_new();
  gst_rtsp_server_set_service(server, o.port.c_str());
  GstRTSPMediaFactory* factory = gst_rtsp_media_factory_new();
  const std::string launch = "( " + o.source + " ! cudadeltaenc name=enc threshold=" +
                             std::to_string(o.threshold) + " key-int-max=" +
                             std::to_string(o.key_int_max) +
                             (o.intra_refresh ? " intra-refresh=true" : "") +
                             " ! rtpgstpay name=pay0 pt=96 config-interval=1 )";
  // gst-rtsp-server parses the description only when the first client
  // comes: a mistake in --source is found here, at start, instead.
  {
    GError* err = nullptr;
    GstElement* check = gst_parse_launch_full(launch.c_str(), nullptr,
                                              GST_PARSE_FLAG_FATAL_ERRORS, &err);
    if (!check) {
      fprintf(stderr, "delta_rtsp_server: the pipeline cannot be built: %s\n  %s\n",
              err ? err->message : "?", launch.c_str());
      g_clear_error(&err);
      return 1;
    }
    gst_object_unref(check);
  }
  gst_rtsp_media_factory_set_launch(factory, launch.c_str());
  gst_rtsp_media_factory_set_shared(factory, TRUE);
  // AVPF offered too, for receivers that use early RTCP feedback
  gst_rtsp_media_factory_set_profiles(factory, static_cast<GstRTSPProfile>(
                                                   GST_RTSP_PROFILE_AVP | GST_RTSP_PROFILE_AVPF));
  if (o.multicast) {
    GstRTSPAddressPool* pool = gst_rtsp_address_pool_new();
    gst_rtsp_address_pool_add_range(pool, "224.3.0.0", "224.3.0.10", 5000, 5010, 16);
    gst_rtsp_media_factory_set_address_pool(factory, pool);
    gst_object_unref(pool);
    gst_rtsp_media_factory_set_protocols(
        factory, static_cast<GstRTSPLowerTrans>(GST_RTSP_LOWER_TRANS_UDP |
                                                GST_RTSP_LOWER_TRANS_UDP_MCAST |
                                                GST_RTSP_LOWER_TRANS_TCP));
  }
  // Signals come from the server's threads, also while it shuts down: the
  // state outlives them (never freed).
  Shared& shared = *new Shared;
  g_signal_connect(factory, "media-configure", G_CALLBACK(on_media_configure), &shared);
  if (!o.intra_refresh)
    g_signal_connect(server, "client-connected", G_CALLBACK(on_client_connected), &shared);
  GstRTSPMountPoints* mounts = gst_rtsp_server_get_mount_points(server);
  gst_rtsp_mount_points_add_factory(mounts, o.mount.c_str(), factory);  // takes the factory
  g_object_unref(mounts);

  if (gst_rtsp_server_attach(server, nullptr) == 0) {
    fprintf(stderr, "delta_rtsp_server: cannot listen on port %s\n", o.port.c_str());
    return 1;
  }
  g_unix_signal_add(SIGINT, quit_loop, loop);
  g_unix_signal_add(SIGTERM, quit_loop, loop);
  if (o.seconds > 0)
    g_timeout_add(static_cast<guint>(o.seconds * 1000), quit_loop, loop);
  printf("rtsp://127.0.0.1:%d%s\n", gst_rtsp_server_get_bound_port(server), o.mount.c_str());
  fflush(stdout);
  g_main_loop_run(loop);

  // Close every client; the shared media is unprepared (its pipeline
  // stopped) when the last one goes: wait for that, up to five seconds.
  gst_rtsp_server_client_filter(server, close_client, nullptr);
  {
    std::unique_lock<std::mutex> g(shared.lock);
    shared.gone.wait_for(g, std::chrono::seconds(5), [&] { return shared.media == nullptr; });
    gst_clear_object(&shared.payloader);
  }
  g_object_unref(server);
  g_main_loop_unref(loop);
  return 0;
}
