// Overlay blend: validation, the coefficients, the job, and the CPU backend.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>

#include "cudafx/cuda_resources.hpp"
#include "cudafx/overlay_blend.hpp"
#include "cudafx/overlay_blend_math.hpp"
#include "cudafx/parallel.hpp"
#include "overlay/overlay_job.hpp"

namespace cudafx {
namespace {

OverlayPackedLayout packed_layout(PixelFormat format) {
  switch (format) {
    case PixelFormat::RGBA: return {4, 2, 1, 0, 3};
    case PixelFormat::BGRA: return {4, 0, 1, 2, 3};
    case PixelFormat::RGBx: return {4, 2, 1, 0, -1};
    case PixelFormat::BGRx: return {4, 0, 1, 2, -1};
    case PixelFormat::ARGB: return {4, 3, 2, 1, 0};
    case PixelFormat::ABGR: return {4, 1, 2, 3, 0};
    case PixelFormat::RGB: return {3, 2, 1, 0, -1};
    case PixelFormat::BGR: return {3, 0, 1, 2, -1};
    default: return {1, 0, 0, 0, -1};  // not packed RGB
  }
}

OverlayChroma chroma_of(PixelFormat format) {
  switch (format) {
    case PixelFormat::I420: return OverlayChroma::Planar420;
    case PixelFormat::NV12: return OverlayChroma::NV12;
    case PixelFormat::Y444: return OverlayChroma::Planar444;
    default: return OverlayChroma::None;
  }
}

// Calls fn(r0, r1) over row bands of [y0, y1): on this thread for small
// areas, where waking the pool costs more than the work, else on the pool.
void for_row_bands(int y0, int y1, int width, const std::function<void(int, int)>& fn) {
  const int rows = y1 - y0;
  if (static_cast<long long>(rows) * width < 32768) {
    fn(y0, y1);
    return;
  }
  const int bands = std::min(rows, cpu_worker_count() * 4);
  parallel_for(bands, [&](int band, int) {
    fn(y0 + static_cast<int>(static_cast<long long>(rows) * band / bands),
       y0 + static_cast<int>(static_cast<long long>(rows) * (band + 1) / bands));
  });
}

void blend_overlay_cpu(const OverlayJob& j) {
  for_row_bands(j.y0, j.y1, j.x1 - j.x0, [&j](int r0, int r1) {
    for (int fy = r0; fy < r1; fy++)
      for (int fx = j.x0; fx < j.x1; fx++)
        overlay_blend_pixel(j, fx, fy);
  });
  if (j.chroma == OverlayChroma::None)
    return;
  for_row_bands(j.cy0, j.cy1, j.cx1 - j.cx0, [&j](int r0, int r1) {
    for (int cy = r0; cy < r1; cy++)
      for (int cx = j.cx0; cx < j.cx1; cx++)
        overlay_blend_chroma(j, cx, cy);
  });
}

// The job for `overlay` at (x, y) on `frame` (both validated); false when it
// covers no frame pixel.
bool make_overlay_job(const ImageView& frame, const OverlayImage& overlay, int x, int y,
                      const OverlayColorimetry& color, OverlayJob* job) {
  const int W = frame.desc.width, H = frame.desc.height;
  // In 64 bits: x + width may pass INT_MAX.
  const long long x0 = std::max<long long>(x, 0), y0 = std::max<long long>(y, 0);
  const long long x1 = std::min<long long>(static_cast<long long>(x) + overlay.width, W);
  const long long y1 = std::min<long long>(static_cast<long long>(y) + overlay.height, H);
  if (x0 >= x1 || y0 >= y1)
    return false;
  OverlayJob& j = *job;
  j = OverlayJob{};
  j.frame = frame;
  j.ov = overlay.data;
  j.ov_pitch = overlay.pitch;
  j.ox = x;
  j.oy = y;
  j.x0 = static_cast<int>(x0);
  j.y0 = static_cast<int>(y0);
  j.x1 = static_cast<int>(x1);
  j.y1 = static_cast<int>(y1);
  const PixelFormat f = frame.desc.format;
  j.layout = packed_layout(f);
  j.packed = f != PixelFormat::GRAY8 && format_info(f).n_planes == 1;
  j.chroma = chroma_of(f);
  j.k = overlay_yuv_coeffs(color);
  const int shift = j.chroma == OverlayChroma::Planar420 || j.chroma == OverlayChroma::NV12;
  j.cx0 = j.x0 >> shift;
  j.cy0 = j.y0 >> shift;
  j.cx1 = ((j.x1 - 1) >> shift) + 1;
  j.cy1 = ((j.y1 - 1) >> shift) + 1;
  return true;
}

}  // namespace

OverlayYuvCoeffs overlay_yuv_coeffs(const OverlayColorimetry& color) {
  double kr = 0.299, kb = 0.114;
  if (color.matrix == ColorMatrix::BT709)
    kr = 0.2126, kb = 0.0722;
  else if (color.matrix == ColorMatrix::BT2020)
    kr = 0.2627, kb = 0.0593;
  const bool full = color.range == ColorRange::Full;
  const int off_y = full ? 0 : 16, s_y = full ? 255 : 219, s_c = full ? 255 : 224;
  const int one = 1 << kOverlayCoeffBits, half = one / 2;
  OverlayYuvCoeffs k;
  k.y.off = off_y;
  k.y.r = static_cast<int>(std::lround(one * s_y * kr));
  k.y.b = static_cast<int>(std::lround(one * s_y * kb));
  k.y.g = one * s_y - k.y.r - k.y.b;
  k.u.off = 128;
  k.u.b = half * s_c;
  k.u.r = static_cast<int>(std::lround(-half * s_c * kr / (1.0 - kb)));
  k.u.g = -k.u.b - k.u.r;
  k.v.off = 128;
  k.v.r = half * s_c;
  k.v.b = static_cast<int>(std::lround(-half * s_c * kb / (1.0 - kr)));
  k.v.g = -k.v.r - k.v.b;
  return k;
}

Status check_overlay(const ImageDesc& frame, const OverlayImage& overlay,
                     const OverlayColorimetry& color) {
  if (frame.width <= 0 || frame.height <= 0)
    return Status::invalid("overlay: empty frame");
  if (overlay.width <= 0 || overlay.height <= 0)
    return Status::invalid("overlay: empty overlay image (" + std::to_string(overlay.width) +
                           "x" + std::to_string(overlay.height) + ")");
  if (!overlay.data)
    return Status::invalid("overlay: the overlay image has no data");
  const size_t row = static_cast<size_t>(overlay.width) * 4;
  if (overlay.pitch < row)
    return Status::invalid("overlay: overlay pitch " + std::to_string(overlay.pitch) +
                           " is smaller than its row of " + std::to_string(row) + " bytes");
  const int m = static_cast<int>(color.matrix), r = static_cast<int>(color.range);
  if (m < 0 || m > static_cast<int>(ColorMatrix::BT2020))
    return Status::invalid("overlay: unknown colour matrix " + std::to_string(m));
  if (r < 0 || r > static_cast<int>(ColorRange::Full))
    return Status::invalid("overlay: unknown colour range " + std::to_string(r));
  return Status::ok();
}

Status blend_overlay(Backend backend, StreamHandle stream, const ImageView& frame,
                     const OverlayImage& overlay, int x, int y, const OverlayColorimetry& color) {
  CUDAFX_TRY(check_overlay(frame.desc, overlay, color));
  CUDAFX_TRY(validate_view(frame, frame.desc, "overlay frame"));
  // Said even when there is nothing to blend, so a caller learns it at once.
  if (backend == Backend::Cuda && !cuda_built())
    return Status::error(StatusCode::Unsupported, "this build of cudafx has no CUDA support");
  OverlayJob job;
  if (!make_overlay_job(frame, overlay, x, y, color, &job))
    return Status::ok();
  if (backend == Backend::Cuda)
    return blend_overlay_cuda(stream, job);
  blend_overlay_cpu(job);
  return Status::ok();
}

}  // namespace cudafx
