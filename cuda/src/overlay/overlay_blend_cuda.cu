// Overlay blend on the GPU, one launch a job (one overlay or a list of up to
// kMaxOverlayPlacements): a 2D grid over the bounding box of the placed
// rectangles, one thread a frame pixel of plane 0 (blockIdx.z 0; consecutive
// threads on consecutive pixels of a row, so the overlay reads and frame
// writes coalesce), and for YUV frames one thread a chroma sample
// (blockIdx.z 1). Each thread applies the rectangles that hold its pixel or
// sample in list order (overlay_job.hpp's *_all loops, over the per-pixel
// code the CPU runs). The job, rectangles included, is the kernel's
// parameter: no upload, no allocation, no shared memory, nothing
// synchronised.
#include <algorithm>

#include "common/cuda_check.hpp"
#include "overlay/overlay_job.hpp"

namespace cudafx {
namespace {

// Kernel parameters were limited to 4 KB before CUDA 12.1 (and Volta).
static_assert(sizeof(OverlayJob) <= 4096, "the overlay job must fit the kernel parameters");

constexpr int kBlockX = 32, kBlockY = 8;
// Grid rows are capped (gridDim.y <= 65535); threads loop over the rest.
constexpr int kMaxGridY = 4096;

// Frame pixels of plane 0 (blockIdx.z 0) or chroma samples (1) of the
// job's box, a thread each; the grid covers the larger of the two ranges.
__global__ void overlay_kernel(OverlayJob job) {
  const bool chroma = blockIdx.z == 1;
  const int x0 = chroma ? job.cx0 : job.x0, x1 = chroma ? job.cx1 : job.x1;
  const int y0 = chroma ? job.cy0 : job.y0, y1 = chroma ? job.cy1 : job.y1;
  const int x = x0 + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (x >= x1)
    return;
  for (int y = y0 + static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y); y < y1;
       y += gridDim.y * blockDim.y) {
    if (chroma)
      overlay_blend_chroma_all(job, x, y);
    else
      overlay_blend_pixel_all(job, x, y);
  }
}

}  // namespace

Status blend_overlay_cuda(StreamHandle stream, const OverlayJob& job) {
  const bool chroma = job.chroma != OverlayChroma::None;
  // The chroma range is never wider or taller than the pixels' (it is
  // ceil((n + 1) / 2) at most for n pixels), but take the larger anyway.
  const int w = std::max(job.x1 - job.x0, chroma ? job.cx1 - job.cx0 : 0);
  const int h = std::max(job.y1 - job.y0, chroma ? job.cy1 - job.cy0 : 0);
  const dim3 grid((w + kBlockX - 1) / kBlockX, std::min((h + kBlockY - 1) / kBlockY, kMaxGridY),
                  chroma ? 2 : 1);
  overlay_kernel<<<grid, dim3(kBlockX, kBlockY), 0, stream>>>(job);
  return cuda_status(cudaGetLastError(), "overlay_kernel");
}

}  // namespace cudafx
