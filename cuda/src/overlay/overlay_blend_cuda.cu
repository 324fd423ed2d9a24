// Overlay blend on the GPU: a 2D grid over the covered part of the frame only,
// one thread a frame pixel of plane 0 (consecutive threads on consecutive
// pixels of a row, so the overlay reads and frame writes coalesce), then, for
// YUV frames, one thread a chroma sample. The per-pixel code is the CPU's
// (overlay_job.hpp); no shared memory, no allocation, nothing synchronised.
#include <algorithm>

#include "common/cuda_check.hpp"
#include "overlay/overlay_job.hpp"

namespace cudafx {
namespace {

constexpr int kBlockX = 32, kBlockY = 8;
// Grid rows are capped (gridDim.y <= 65535); threads loop over the rest.
constexpr int kMaxGridY = 4096;

// Frame pixels of plane 0 (kChroma false) or chroma samples (true) of the
// job's covered range, a thread each.
template <bool kChroma>
__global__ void overlay_kernel(OverlayJob job) {
  const int x0 = kChroma ? job.cx0 : job.x0, x1 = kChroma ? job.cx1 : job.x1;
  const int y0 = kChroma ? job.cy0 : job.y0, y1 = kChroma ? job.cy1 : job.y1;
  const int x = x0 + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (x >= x1)
    return;
  for (int y = y0 + static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y); y < y1;
       y += gridDim.y * blockDim.y) {
    if (kChroma)
      overlay_blend_chroma(job, x, y);
    else
      overlay_blend_pixel(job, x, y);
  }
}

dim3 grid_over(int width, int height) {
  return dim3((width + kBlockX - 1) / kBlockX,
              std::min((height + kBlockY - 1) / kBlockY, kMaxGridY));
}

}  // namespace

Status blend_overlay_cuda(StreamHandle stream, const OverlayJob& job) {
  const dim3 block(kBlockX, kBlockY);
  overlay_kernel<false><<<grid_over(job.x1 - job.x0, job.y1 - job.y0), block, 0, stream>>>(job);
  CUDAFX_TRY(cuda_status(cudaGetLastError(), "overlay_kernel (pixels)"));
  if (job.chroma == OverlayChroma::None)
    return Status::ok();
  overlay_kernel<true><<<grid_over(job.cx1 - job.cx0, job.cy1 - job.cy0), block, 0, stream>>>(job);
  return cuda_status(cudaGetLastError(), "overlay_kernel (chroma)");
}

}  // namespace cudafx
