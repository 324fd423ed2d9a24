// Corner markers: validation, the paint of a style, and the CPU backend.
#include <cmath>
#include <string>

#include "cudafx/corner_markers.hpp"
#include "markers/markers_math.hpp"

namespace cudafx {

MarkerPaint marker_paint_of(PixelFormat format, const MarkerStyle& style) {
  MarkerPaint p{};
  const FormatInfo& fi = format_info(format);
  p.channels = fi.planes[0].channels;
  p.n_planes = fi.n_planes;
  p.nv12 = format == PixelFormat::NV12;
  p.xs = fi.n_planes > 1 ? fi.planes[1].x_shift : 0;
  p.ys = fi.n_planes > 1 ? fi.planes[1].y_shift : 0;
  p.u = style.yuv[1];
  p.v = style.yuv[2];
  const uint8_t r = style.rgb[0], g = style.rgb[1], b = style.rgb[2], a = 255;
  auto set = [&p](uint8_t c0, uint8_t c1, uint8_t c2, uint8_t c3) {
    p.px[0] = c0;
    p.px[1] = c1;
    p.px[2] = c2;
    p.px[3] = c3;
  };
  switch (format) {
    case PixelFormat::RGBA: case PixelFormat::RGBx: set(r, g, b, a); break;
    case PixelFormat::BGRA: case PixelFormat::BGRx: set(b, g, r, a); break;
    case PixelFormat::ARGB: set(a, r, g, b); break;
    case PixelFormat::ABGR: set(a, b, g, r); break;
    case PixelFormat::RGB: set(r, g, b, 0); break;
    case PixelFormat::BGR: set(b, g, r, 0); break;
    default: set(style.yuv[0], 0, 0, 0); break;  // GRAY8 and the luma planes
  }
  return p;
}

Status check_marker_style(const ImageDesc& desc, const MarkerStyle& style) {
  if (style.size < 1 || style.size > kMarkerMaxSize)
    return Status::invalid("marker size " + std::to_string(style.size) + " is outside 1.." +
                           std::to_string(kMarkerMaxSize));
  if (desc.width <= 0 || desc.height <= 0)
    return Status::invalid("markers: empty frame");
  return Status::ok();
}

Status draw_corner_markers_cuda(StreamHandle stream, const ImageView& frame,
                                const HarrisCorner* corners, const uint32_t* count, int capacity,
                                const MarkerStyle& style, const MarkerPaint& paint);

Status draw_corner_markers(Backend backend, StreamHandle stream, const ImageView& frame,
                           const HarrisCorner* corners, const uint32_t* count, int capacity,
                           const MarkerStyle& style) {
  CUDAFX_TRY(check_marker_style(frame.desc, style));
  CUDAFX_TRY(validate_view(frame, frame.desc, "markers frame"));
  if (capacity < 0 || (capacity > 0 && (!corners || !count)))
    return Status::invalid("markers: no corner list");
  const MarkerPaint paint = marker_paint_of(frame.desc.format, style);
  if (capacity == 0)
    return Status::ok();
  if (backend == Backend::Cuda)
    return draw_corner_markers_cuda(stream, frame, corners, count, capacity, style, paint);
  const int n = static_cast<int>(*count < static_cast<uint32_t>(capacity) ? *count : capacity);
  const int s = style.size;
  for (int i = 0; i < n; i++) {
    const int cx = marker_centre(corners[i].x), cy = marker_centre(corners[i].y);
    for (int dy = -s; dy <= s; dy++) {
      const int py = cy + dy;
      if (py < 0 || py >= frame.desc.height)
        continue;
      for (int dx = -s; dx <= s; dx++) {
        const int px = cx + dx;
        if (px >= 0 && px < frame.desc.width && marker_covers(style.shape, s, dx, dy))
          marker_paint(frame, paint, px, py);
      }
    }
  }
  return Status::ok();
}

}  // namespace cudafx
