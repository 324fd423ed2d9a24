// An application that embeds cudagaussian: a test stream is blurred with a
// sigma that sweeps while the pipeline plays, and the frame rate and the
// backend in use are printed. Shows how an application sets and changes the
// element's properties and reads its warnings (a CPU fallback, say).
//
//   GST_PLUGIN_PATH=build/gst build/examples/blur_app [seconds]
#include <gst/gst.h>

#include <cstdio>
#include <cstdlib>

namespace {

struct App {
  GstElement* pipeline = nullptr;
  GstElement* blur = nullptr;
  GMainLoop* loop = nullptr;
  guint frames = 0;
  double sigma = 1.0;
};

GstPadProbeReturn count_frame(GstPad*, GstPadProbeInfo*, gpointer data) {
  static_cast<App*>(data)->frames++;
  return GST_PAD_PROBE_OK;
}

gboolean on_tick(gpointer data) {
  App* app = static_cast<App*>(data);
  app->sigma = app->sigma >= 8.0 ? 1.0 : app->sigma + 1.0;
  g_object_set(app->blur, "sigma", app->sigma, nullptr);  // takes effect on the next frame
  printf("blur_app: %u frames/s, sigma now %.1f\n", app->frames, app->sigma);
  app->frames = 0;
  return G_SOURCE_CONTINUE;
}

gboolean on_message(GstBus*, GstMessage* msg, gpointer data) {
  App* app = static_cast<App*>(data);
  GError* err = nullptr;
  switch (GST_MESSAGE_TYPE(msg)) {
    case GST_MESSAGE_WARNING:
      gst_message_parse_warning(msg, &err, nullptr);
      printf("blur_app: warning: %s\n", err->message);
      g_error_free(err);
      break;
    case GST_MESSAGE_ERROR:
      gst_message_parse_error(msg, &err, nullptr);
      fprintf(stderr, "blur_app: error: %s\n", err->message);
      g_error_free(err);
      g_main_loop_quit(app->loop);
      break;
    case GST_MESSAGE_EOS:
      g_main_loop_quit(app->loop);
      break;
    default:
      break;
  }
  return TRUE;
}

gboolean on_timeout(gpointer data) {
  g_main_loop_quit(static_cast<App*>(data)->loop);
  return G_SOURCE_REMOVE;
}

}  // namespace

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  const int seconds = argc > 1 ? atoi(argv[1]) : 5;
  App app;
  GError* err = nullptr;
  app.pipeline = gst_parse_launch(
      "videotestsrc is-live=false pattern=ball ! video/x-raw,format=RGBA,width=1280,height=720 "
      "! cudagaussian name=blur ! fakesink name=sink sync=false",
      &err);
  if (!app.pipeline) {
    fprintf(stderr, "blur_app: %s (is GST_PLUGIN_PATH set?)\n", err ? err->message : "?");
    return 1;
  }
  app.blur = gst_bin_get_by_name(GST_BIN(app.pipeline), "blur");
  GstElement* sink = gst_bin_get_by_name(GST_BIN(app.pipeline), "sink");
  GstPad* pad = gst_element_get_static_pad(sink, "sink");
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, count_frame, &app, nullptr);
  gst_object_unref(pad);
  gst_object_unref(sink);

  app.loop = g_main_loop_new(nullptr, FALSE);
  GstBus* bus = gst_element_get_bus(app.pipeline);
  gst_bus_add_watch(bus, on_message, &app);
  g_timeout_add_seconds(1, on_tick, &app);
  g_timeout_add_seconds(seconds, on_timeout, &app);
  gst_element_set_state(app.pipeline, GST_STATE_PLAYING);
  g_main_loop_run(app.loop);
  gst_element_set_state(app.pipeline, GST_STATE_NULL);

  gst_bus_remove_watch(bus);
  gst_object_unref(bus);
  gst_object_unref(app.blur);
  gst_object_unref(app.pipeline);
  g_main_loop_unref(app.loop);
  return 0;
}
