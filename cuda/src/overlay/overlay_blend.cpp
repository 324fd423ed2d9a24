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

// Each rect in order over its own pixels, then its own chroma samples, a
// band of rows at a time: every pixel and sample sees the rects that cover
// it in the order the GPU's loop applies them (overlay_job.hpp), at a cost
// of the rects' areas rather than count tests a pixel of their box.
void blend_overlay_cpu(const OverlayJob& j) {
  for_row_bands(j.y0, j.y1, j.x1 - j.x0, [&j](int r0, int r1) {
    for (int i = 0; i < j.count; i++) {
      const OverlayRect& r = j.rects[i];
      for (int fy = std::max(r0, r.y0); fy < std::min(r1, r.y1); fy++)
        for (int fx = r.x0; fx < r.x1; fx++)
          overlay_blend_pixel(j, r, fx, fy);
    }
  });
  if (j.chroma == OverlayChroma::None)
    return;
  for_row_bands(j.cy0, j.cy1, j.cx1 - j.cx0, [&j](int r0, int r1) {
    for (int i = 0; i < j.count; i++) {
      const OverlayRect& r = j.rects[i];
      const OverlayChromaRect c = overlay_chroma_rect(j, r);
      for (int cy = std::max(r0, c.cy0); cy < std::min(r1, c.cy1); cy++)
        for (int cx = c.cx0; cx < c.cx1; cx++)
          overlay_blend_chroma(j, r, cx, cy);
    }
  });
}

// A job on `frame` (validated) with no rects yet; overlay rows `pitch` apart.
void start_job(const ImageView& frame, const OverlayColorimetry& color, size_t pitch,
               OverlayJob* job) {
  OverlayJob& j = *job;
  j = OverlayJob{};
  j.frame = frame;
  const PixelFormat f = frame.desc.format;
  j.layout = packed_layout(f);
  j.packed = f != PixelFormat::GRAY8 && format_info(f).n_planes == 1;
  j.chroma = chroma_of(f);
  j.chroma_shift = j.chroma == OverlayChroma::Planar420 || j.chroma == OverlayChroma::NV12;
  j.k = overlay_yuv_coeffs(color);
  j.pitch = pitch;
}

// Adds the w x h overlay at `src` (w, h > 0), its top-left pixel on frame
// pixel (x, y), clipped to the frame; nothing when it covers no frame pixel
// (a single blend_overlay does nothing then either).
void add_rect(OverlayJob* job, const uint8_t* src, int w, int h, int x, int y) {
  OverlayJob& j = *job;
  const int W = j.frame.desc.width, H = j.frame.desc.height;
  // In 64 bits: x + w may pass INT_MAX.
  const long long x0 = std::max<long long>(x, 0), y0 = std::max<long long>(y, 0);
  const long long x1 = std::min<long long>(static_cast<long long>(x) + w, W);
  const long long y1 = std::min<long long>(static_cast<long long>(y) + h, H);
  if (x0 >= x1 || y0 >= y1)
    return;
  OverlayRect& r = j.rects[j.count];
  r.src = src + static_cast<size_t>(y0 - y) * j.pitch + static_cast<size_t>(x0 - x) * 4;
  r.x0 = static_cast<int>(x0);
  r.y0 = static_cast<int>(y0);
  r.x1 = static_cast<int>(x1);
  r.y1 = static_cast<int>(y1);
  if (j.count == 0) {
    j.x0 = r.x0, j.y0 = r.y0, j.x1 = r.x1, j.y1 = r.y1;
  } else {
    j.x0 = std::min(j.x0, r.x0), j.y0 = std::min(j.y0, r.y0);
    j.x1 = std::max(j.x1, r.x1), j.y1 = std::max(j.y1, r.y1);
  }
  j.count++;
  const int s = j.chroma_shift;
  j.cx0 = j.x0 >> s;
  j.cy0 = j.y0 >> s;
  j.cx1 = ((j.x1 - 1) >> s) + 1;
  j.cy1 = ((j.y1 - 1) >> s) + 1;
}

// The checks both entry points make on the frame and the overlay or atlas.
Status check_frame_and_overlay(const ImageView& frame, const OverlayImage& overlay,
                               const OverlayColorimetry& color) {
  CUDAFX_TRY(check_overlay(frame.desc, overlay, color));
  return validate_view(frame, frame.desc, "overlay frame");
}

// Said even when there is nothing to blend, so a caller learns it at once.
Status check_backend(Backend backend) {
  if (backend == Backend::Cuda && !cuda_built())
    return Status::error(StatusCode::Unsupported, "this build of cudafx has no CUDA support");
  return Status::ok();
}

Status run_job(Backend backend, StreamHandle stream, const OverlayJob& job) {
  if (job.count == 0)
    return Status::ok();
  if (backend == Backend::Cuda)
    return blend_overlay_cuda(stream, job);
  blend_overlay_cpu(job);
  return Status::ok();
}

std::string placement_text(int i, const OverlayPlacement& p) {
  return "overlay list: placement " + std::to_string(i) + " (" + std::to_string(p.width) + "x" +
         std::to_string(p.height) + " at " + std::to_string(p.src_x) + "," +
         std::to_string(p.src_y) + " of the atlas)";
}

Status check_placements(const OverlayImage& atlas, const OverlayPlacement* placements,
                        int count) {
  if (count < 0 || count > kMaxOverlayPlacements)
    return Status::invalid("overlay list: " + std::to_string(count) +
                           " placements, not in 0.." + std::to_string(kMaxOverlayPlacements));
  if (count > 0 && !placements)
    return Status::invalid("overlay list: no placements array for a count of " +
                           std::to_string(count));
  for (int i = 0; i < count; i++) {
    const OverlayPlacement& p = placements[i];
    if (p.width <= 0 || p.height <= 0)
      return Status::invalid(placement_text(i, p) + " is empty");
    // In 64 bits: src_x + width may pass INT_MAX.
    if (p.src_x < 0 || p.src_y < 0 ||
        static_cast<long long>(p.src_x) + p.width > atlas.width ||
        static_cast<long long>(p.src_y) + p.height > atlas.height)
      return Status::invalid(placement_text(i, p) + " is not inside the " +
                             std::to_string(atlas.width) + "x" + std::to_string(atlas.height) +
                             " atlas");
  }
  return Status::ok();
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
  CUDAFX_TRY(check_frame_and_overlay(frame, overlay, color));
  CUDAFX_TRY(check_backend(backend));
  OverlayJob job;
  start_job(frame, color, overlay.pitch, &job);
  add_rect(&job, overlay.data, overlay.width, overlay.height, x, y);
  return run_job(backend, stream, job);
}

Status blend_overlay_list(Backend backend, StreamHandle stream, const ImageView& frame,
                          const OverlayImage& atlas, const OverlayPlacement* placements,
                          int count, const OverlayColorimetry& color) {
  CUDAFX_TRY(check_frame_and_overlay(frame, atlas, color));
  CUDAFX_TRY(check_placements(atlas, placements, count));
  CUDAFX_TRY(check_backend(backend));
  OverlayJob job;
  start_job(frame, color, atlas.pitch, &job);
  for (int i = 0; i < count; i++) {
    const OverlayPlacement& p = placements[i];
    add_rect(&job,
             atlas.data + static_cast<size_t>(p.src_y) * atlas.pitch +
                 static_cast<size_t>(p.src_x) * 4,
             p.width, p.height, p.x, p.y);
  }
  return run_job(backend, stream, job);
}

}  // namespace cudafx
