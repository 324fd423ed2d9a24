// Shade on the GPU: one launch, a 2D grid over the clipped rectangle, one
// thread a pixel of plane 0 (consecutive threads on consecutive pixels of a
// row, so the reads and writes coalesce) running shade_math.hpp's per-pixel
// code. The job is the kernel's parameter: no upload, no allocation, no
// shared memory, nothing synchronised.
#include <algorithm>

#include "common/cuda_check.hpp"
#include "shade/shade_math.hpp"

namespace cudafx {
namespace {

constexpr int kBlockX = 32, kBlockY = 8;
// gridDim.y's limit: up to kMaxGridY * kBlockY rows every pixel has a
// thread of its own; the threads of taller rectangles loop over the rest.
constexpr int kMaxGridY = 65535;

__global__ void shade_kernel(ShadeJob job) {
  // Offsets inside the rectangle, unsigned: x0 + dx cannot pass INT_MAX for
  // the threads of the last block that lie past the rectangle's end.
  const unsigned w = static_cast<unsigned>(job.x1 - job.x0);
  const unsigned h = static_cast<unsigned>(job.y1 - job.y0);
  const unsigned dx = blockIdx.x * blockDim.x + threadIdx.x;
  if (dx >= w)
    return;
  for (unsigned dy = blockIdx.y * blockDim.y + threadIdx.y; dy < h; dy += gridDim.y * blockDim.y)
    shade_pixel(job, job.x0 + static_cast<int>(dx), job.y0 + static_cast<int>(dy));
}

}  // namespace

Status shade_rect_cuda(StreamHandle stream, const ShadeJob& job) {
  const int w = job.x1 - job.x0, h = job.y1 - job.y0;
  // In 64 bits: w + kBlockX - 1 may pass INT_MAX.
  const dim3 grid(static_cast<unsigned>((static_cast<long long>(w) + kBlockX - 1) / kBlockX),
                  static_cast<unsigned>(
                      std::min<long long>((static_cast<long long>(h) + kBlockY - 1) / kBlockY,
                                          kMaxGridY)));
  shade_kernel<<<grid, dim3(kBlockX, kBlockY), 0, stream>>>(job);
  return cuda_status(cudaGetLastError(), "shade_kernel");
}

}  // namespace cudafx
