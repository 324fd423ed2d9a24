// Receives examples/delta-sender.sh's stream and shows it, across restarts
// of the sender: each new RTP stream (SSRC) that rtpbin announces is linked
// to the depayloader and decoder in place of the previous one
// (delta_receiver.hpp), where a gst-launch line would fail with
// "not-linked". Lost packets make cudadeltadec drop frames and ask for a
// keyframe, which rtpbin sends to the sender as an RTCP PLI.
//
//   GST_PLUGIN_PATH=build/gst build/examples/delta_receiver [SENDER_HOST] [PORT]
//
// SENDER_HOST (default 127.0.0.1) receives the RTCP; RTP comes in on PORT
// (default 5004), RTCP on PORT+1, RTCP goes back to PORT+5.
// SINK (environment, default autovideosink): where the decoded frames go,
// after videoconvert. Ctrl-C ends the stream (EOS) and the program.
#include <glib-unix.h>
#include <gst/gst.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "delta_receiver.hpp"

namespace {

struct App {
  GstElement* pipeline = nullptr;
  GMainLoop* loop = nullptr;
  int ssrc_pads = 0;
  int status = 0;
};

gboolean on_message(GstBus*, GstMessage* msg, gpointer data) {
  App* app = static_cast<App*>(data);
  GError* err = nullptr;
  gchar* debug = nullptr;
  switch (GST_MESSAGE_TYPE(msg)) {
    case GST_MESSAGE_WARNING:
      gst_message_parse_warning(msg, &err, &debug);
      fprintf(stderr, "delta_receiver: warning from %s: %s\n", GST_OBJECT_NAME(msg->src),
              err->message);
      break;
    case GST_MESSAGE_ERROR:
      gst_message_parse_error(msg, &err, &debug);
      fprintf(stderr, "delta_receiver: error from %s: %s\n%s\n", GST_OBJECT_NAME(msg->src),
              err->message, debug ? debug : "");
      app->status = 1;
      g_main_loop_quit(app->loop);
      break;
    case GST_MESSAGE_EOS:
      g_main_loop_quit(app->loop);
      break;
    default:
      break;
  }
  if (err)
    g_error_free(err);
  g_free(debug);
  return TRUE;
}

// Reports each new stream (a sender that started or restarted).
gboolean on_tick(gpointer data) {
  App* app = static_cast<App*>(data);
  const int pads = delta_receiver::ssrc_pads(app->pipeline);
  if (pads != app->ssrc_pads)
    printf("delta_receiver: receiving stream %d\n", pads);
  app->ssrc_pads = pads;
  return G_SOURCE_CONTINUE;
}

gboolean on_interrupt(gpointer data) {
  App* app = static_cast<App*>(data);
  printf("delta_receiver: interrupted, ending the stream\n");
  gst_element_send_event(app->pipeline, gst_event_new_eos());
  return G_SOURCE_REMOVE;
}

}  // namespace

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  const std::string host = argc > 1 ? argv[1] : "127.0.0.1";
  const int port = argc > 2 ? atoi(argv[2]) : 5004;
  if (port <= 0 || port > 65530) {
    fprintf(stderr, "usage: delta_receiver [SENDER_HOST] [PORT]\n");
    return 2;
  }
  const char* sink = getenv("SINK");
  delta_receiver::Ports ports;
  ports.rtp = port;
  ports.rtcp = port + 1;
  ports.rtcp_back = port + 5;
  GError* err = nullptr;
  App app;
  app.pipeline = delta_receiver::make_pipeline(
      host, ports, std::string("videoconvert ! ") + (sink && *sink ? sink : "autovideosink"),
      "0.0.0.0", &err);
  if (!app.pipeline) {
    fprintf(stderr, "delta_receiver: %s\n", err ? err->message : "cannot build the pipeline");
    return 1;
  }
  app.loop = g_main_loop_new(nullptr, FALSE);
  GstBus* bus = gst_element_get_bus(app.pipeline);
  gst_bus_add_watch(bus, on_message, &app);
  g_timeout_add(500, on_tick, &app);
  g_unix_signal_add(SIGINT, on_interrupt, &app);
  if (gst_element_set_state(app.pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    fprintf(stderr, "delta_receiver: the pipeline does not start\n");
    app.status = 1;
  } else {
    printf("delta_receiver: listening on port %d (RTCP %d, back to %s:%d)\n", ports.rtp,
           ports.rtcp, host.c_str(), ports.rtcp_back);
    g_main_loop_run(app.loop);
  }
  gst_element_set_state(app.pipeline, GST_STATE_NULL);
  gst_bus_remove_watch(bus);
  gst_object_unref(bus);
  gst_object_unref(app.pipeline);
  g_main_loop_unref(app.loop);
  return app.status;
}
