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

bool load_video(const std::string& path, cudafx::PixelFormat format, int max_frames,
                std::vector<HostImage>* out, std::string* error) {
  gst_init(nullptr, nullptr);
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
  out->clear();
  while (static_cast<int>(out->size()) < max_frames) {
    GstSample* sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 30 * GST_SECOND);
    if (!sample)
      break;
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
    *error = "no frame decoded from " + path;
  return !out->empty();
}

}  // namespace testing_support
