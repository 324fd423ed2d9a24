// An application that reads cudaharris's corners meta: frames (a test
// pattern by default, or any file GStreamer decodes) go through cudaharris
// to an appsink; for every frame the app reads the GstCudaFxCornersMeta
// (libgstcudafxmeta: <gst/cudafx/gstcudafxcornersmeta.h>, pkg-config
// gstreamer-cudafx-meta-1.0), prints the strongest corners and keeps track
// of the count (least, most, mean).
//
//   GST_PLUGIN_PATH=build/gst build/examples/corners_app [FILE] [FRAMES]
#include <gst/app/gstappsink.h>
#include <gst/cudafx/gstcudafxcornersmeta.h>
#include <gst/gst.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  const std::string source =
      argc > 1 ? "filesrc location=\"" + std::string(argv[1]) + "\" ! decodebin ! videoconvert"
               : std::string("videotestsrc pattern=checkers-8 ! videoconvert");
  const int max_frames = argc > 2 ? std::atoi(argv[2]) : 30;
  const std::string launch = source +
                             " ! video/x-raw,format=RGBA ! cudaharris gradient-size=5 block-size=5 "
                             "min-distance=3 max-corners=200 ! appsink name=out sync=false";
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(launch.c_str(), &err);
  if (!pipeline) {
    fprintf(stderr, "corners_app: %s\n", err ? err->message : "cannot build the pipeline");
    return 1;
  }
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "out");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  guint least = G_MAXUINT, most = 0;
  guint64 total = 0;
  int frames = 0;
  while (frames < max_frames) {
    GstSample* sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 5 * GST_SECOND);
    if (!sample)
      break;  // end of stream, or an error (below)
    GstBuffer* buf = gst_sample_get_buffer(sample);
    const GstCudaFxCornersMeta* meta = gst_buffer_get_cuda_fx_corners_meta(buf);
    const guint n = meta ? meta->n_corners : 0;
    least = std::min(least, n);
    most = std::max(most, n);
    total += n;
    printf("frame %d (%" GST_TIME_FORMAT "): %u corners", frames,
           GST_TIME_ARGS(GST_BUFFER_PTS(buf)), n);
    for (guint i = 0; i < n && i < 3; i++)
      printf("%s(%.1f, %.1f) %.3g", i ? ", " : "; strongest ", meta->corners[i].x,
             meta->corners[i].y, meta->corners[i].score);
    printf("\n");
    gst_sample_unref(sample);
    frames++;
  }
  GstBus* bus = gst_element_get_bus(pipeline);
  if (GstMessage* msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
    GError* e = nullptr;
    gst_message_parse_error(msg, &e, nullptr);
    fprintf(stderr, "corners_app: %s\n", e->message);
    g_error_free(e);
    gst_message_unref(msg);
  }
  gst_object_unref(bus);
  if (frames > 0)
    printf("corners_app: %d frames, corners per frame %u .. %u, mean %.1f\n", frames, least, most,
           double(total) / frames);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return frames > 0 ? 0 : 1;
}
