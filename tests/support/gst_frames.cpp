#include "gst_frames.hpp"

#include <cstring>

namespace testing_support {

using namespace cudafx;

std::string caps_string(const ImageDesc& desc, bool cuda_memory) {
  return std::string("video/x-raw") + (cuda_memory ? "(memory:CUDAMemory)" : "") +
         ",format=" + format_info(desc.format).name + ",width=" + std::to_string(desc.width) +
         ",height=" + std::to_string(desc.height) + ",framerate=30/1";
}

GstBuffer* buffer_from_image(const HostImage& img, size_t pad) {
  const ImageDesc desc = img.desc();
  const FormatInfo& fi = format_info(desc.format);
  gsize offsets[GST_VIDEO_MAX_PLANES] = {};
  gint strides[GST_VIDEO_MAX_PLANES] = {};
  size_t total = 0;
  for (int i = 0; i < fi.n_planes; i++) {
    const PlaneView p = img.view().plane(i);
    offsets[i] = total;
    strides[i] = static_cast<gint>(p.row_bytes() + pad);
    total += static_cast<size_t>(strides[i]) * p.height;
  }
  GstBuffer* buf = gst_buffer_new_allocate(nullptr, total, nullptr);
  GstMapInfo map;
  gst_buffer_map(buf, &map, GST_MAP_WRITE);
  memset(map.data, 0xA5, total);  // padding that must never leak into results
  for (int i = 0; i < fi.n_planes; i++) {
    const PlaneView p = img.view().plane(i);
    for (int y = 0; y < p.height; y++)
      memcpy(map.data + offsets[i] + static_cast<size_t>(y) * strides[i],
             p.data + y * p.pitch, p.row_bytes());
  }
  gst_buffer_unmap(buf, &map);
  GstVideoFormat vf = gst_video_format_from_string(fi.name);
  gst_buffer_add_video_meta_full(buf, GST_VIDEO_FRAME_FLAG_NONE, vf, desc.width, desc.height,
                                 fi.n_planes, offsets, strides);
  return buf;
}

bool image_from_buffer(GstBuffer* buf, const ImageDesc& desc, HostImage* out) {
  GstVideoInfo info;
  gst_video_info_set_format(&info, gst_video_format_from_string(format_info(desc.format).name),
                            desc.width, desc.height);
  GstVideoFrame frame;
  if (!gst_video_frame_map(&frame, &info, buf, GST_MAP_READ))
    return false;
  ImageView v;
  v.desc = desc;
  for (guint i = 0; i < GST_VIDEO_FRAME_N_PLANES(&frame); i++) {
    v.data[i] = static_cast<uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, i));
    v.pitch[i] = GST_VIDEO_FRAME_PLANE_STRIDE(&frame, i);
  }
  *out = HostImage(desc);
  out->copy_from(v);
  gst_video_frame_unmap(&frame);
  return true;
}

}  // namespace testing_support
