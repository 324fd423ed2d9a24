// Shade: validation, clipping, the job, and the CPU backend.
#include <algorithm>
#include <string>

#include "cudafx/parallel.hpp"
#include "cudafx/shade.hpp"
#include "shade/shade_math.hpp"

namespace cudafx {
namespace {

// Where a pixel's shaded bytes sit in plane 0: the colour bytes of packed
// RGB (alpha and padding kept), the luma byte otherwise. False for a value
// that is no PixelFormat.
bool shaded_bytes(PixelFormat format, ShadeJob* j) {
  switch (format) {
    case PixelFormat::RGBA:
    case PixelFormat::BGRA:
    case PixelFormat::RGBx:
    case PixelFormat::BGRx: j->channels = 4, j->first = 0, j->count = 3; return true;
    case PixelFormat::ARGB:
    case PixelFormat::ABGR: j->channels = 4, j->first = 1, j->count = 3; return true;
    case PixelFormat::RGB:
    case PixelFormat::BGR: j->channels = 3, j->first = 0, j->count = 3; return true;
    case PixelFormat::GRAY8:
    case PixelFormat::I420:
    case PixelFormat::NV12:
    case PixelFormat::Y444: j->channels = 1, j->first = 0, j->count = 1; return true;
  }
  return false;
}

// The job's rectangle: [x, x + w) x [y, y + h) clipped to the frame, in 64
// bits (x + w may pass INT_MAX). False when it holds no frame pixel.
bool clip_to_frame(const ImageDesc& d, int x, int y, int w, int h, ShadeJob* j) {
  const long long x0 = std::max<long long>(x, 0), y0 = std::max<long long>(y, 0);
  const long long x1 = std::min<long long>(static_cast<long long>(x) + w, d.width);
  const long long y1 = std::min<long long>(static_cast<long long>(y) + h, d.height);
  if (x0 >= x1 || y0 >= y1)
    return false;
  j->x0 = static_cast<int>(x0), j->y0 = static_cast<int>(y0);
  j->x1 = static_cast<int>(x1), j->y1 = static_cast<int>(y1);
  return true;
}

void shade_rows(const ShadeJob& j, int r0, int r1) {
  for (int fy = r0; fy < r1; fy++)
    for (int fx = j.x0; fx < j.x1; fx++)
      shade_pixel(j, fx, fy);
}

// Small rectangles on this thread (waking the pool costs more than the
// work), larger ones in bands of rows on the pool.
void shade_rect_cpu(const ShadeJob& j) {
  const int rows = j.y1 - j.y0;
  if (static_cast<long long>(rows) * (j.x1 - j.x0) < 32768) {
    shade_rows(j, j.y0, j.y1);
    return;
  }
  const int bands = std::min(rows, cpu_worker_count() * 4);
  parallel_for(bands, [&j, rows, bands](int band, int) {
    shade_rows(j, j.y0 + static_cast<int>(static_cast<long long>(rows) * band / bands),
               j.y0 + static_cast<int>(static_cast<long long>(rows) * (band + 1) / bands));
  });
}

}  // namespace

Status shade_rect(Backend backend, StreamHandle stream, const ImageView& frame, int x, int y,
                  int width, int height, int value) {
  ShadeJob job{};
  if (!shaded_bytes(frame.desc.format, &job))
    return Status::invalid("shade frame: unknown pixel format " +
                           std::to_string(static_cast<int>(frame.desc.format)));
  CUDAFX_TRY(validate_view(frame, frame.desc, "shade frame"));
  if (value < 0 || value > 255)
    return Status::invalid("shade: value " + std::to_string(value) + " is not in 0..255");
  if (backend == Backend::Cuda && !cuda_built())
    return Status::error(StatusCode::Unsupported, "this build of cudafx has no CUDA support");
  // Value 0 would write every byte back as it was.
  if (value == 0 || !clip_to_frame(frame.desc, x, y, width, height, &job))
    return Status::ok();
  job.plane = frame.data[0];
  job.pitch = frame.pitch[0];
  job.value = value;
  if (backend == Backend::Cuda)
    return shade_rect_cuda(stream, job);
  shade_rect_cpu(job);
  return Status::ok();
}

}  // namespace cudafx
