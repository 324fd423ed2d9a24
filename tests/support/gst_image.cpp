#include "gst_image.hpp"

#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <cstring>

namespace testing_support {

bool load_image(const std::string& path, cudafx::PixelFormat format, HostImage* out,
                std::string* error) {
  std::vector<HostImage> frames;
  if (!load_video(path, format, 1, &frames, error))
    return false;
  *out = std::move(frames[0]);
  return true;
}

namespace {

// The first error on the pipeline's bus, as "message (debug)", or "".
std::string bus_error(GstElement* pipeline) {
  GstBus* bus = gst_element_get_bus(pipeline);
  GstMessage* msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  std::string text;
  if (msg) {
    GError* err = nullptr;
    gchar* debug = nullptr;
    gst_message_parse_error(msg, &err, &debug);
    text = err ? err->message : "unknown error";
    if (debug)
      text += std::string(" (") + debug + ")";
    g_clear_error(&err);
    g_free(debug);
    gst_message_unref(msg);
  }
  gst_object_unref(bus);
  return text;
}

}  // namespace

bool load_video(const std::string& path, cudafx::PixelFormat format, int max_frames,
                std::vector<HostImage>* out, std::string* error) {
  gst_init(nullptr, nullptr);
  out->clear();
  if (!g_file_test(path.c_str(), G_FILE_TEST_IS_REGULAR)) {
    *error = "no such file: " + path;
    return false;
  }
  const std::string desc = "filesrc location=\"" + path +
                           "\" ! decodebin ! videoconvert ! video/x-raw,format=" +
                           cudafx::format_info(format).name + " ! appsink name=sink sync=false";
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(desc.c_str(), &err);
  if (!pipeline) {
    *error = err ? err->message : "cannot build decode pipeline";
    g_clear_error(&err);
    return false;
  }
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  std::string failure;
  // Polls in short steps so that a pipeline that failed (a missing decoder,
  // a damaged file) reports its error at once instead of after a timeout.
  for (int waited_ms = 0; static_cast<int>(out->size()) < max_frames && waited_ms < 30000;) {
    GstSample* sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 100 * GST_MSECOND);
    if (!sample) {
      failure = bus_error(pipeline);
      if (!failure.empty() || gst_app_sink_is_eos(GST_APP_SINK(sink)))
        break;
      waited_ms += 100;
      continue;
    }
    waited_ms = 0;
    GstVideoInfo info;
    GstVideoFrame frame;
    if (gst_video_info_from_caps(&info, gst_sample_get_caps(sample)) &&
        gst_video_frame_map(&frame, &info, gst_sample_get_buffer(sample), GST_MAP_READ)) {
      cudafx::ImageView v;
      v.desc = {format, GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info)};
      for (guint i = 0; i < GST_VIDEO_FRAME_N_PLANES(&frame); i++) {
        v.data[i] = static_cast<uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, i));
        v.pitch[i] = GST_VIDEO_FRAME_PLANE_STRIDE(&frame, i);
      }
      HostImage img(v.desc);
      img.copy_from(v);
      out->push_back(std::move(img));
      gst_video_frame_unmap(&frame);
    }
    gst_sample_unref(sample);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  if (out->empty())
    *error = "no frame decoded from " + path + (failure.empty() ? "" : ": " + failure);
  return !out->empty();
}

}  // namespace testing_support
