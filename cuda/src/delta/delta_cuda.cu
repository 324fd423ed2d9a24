// CUDA kernels of the delta codec: residuals with the reference update and
// tile flags, and the reconstruction checksum. Integer arithmetic only, so
// the results equal the CPU's bit for bit.
#include <cuda_runtime.h>

#include <algorithm>

#include "common/cuda_check.hpp"
#include "cudafx/delta.hpp"
#include "cudafx/delta_math.hpp"

namespace cudafx {
namespace {

// One block a tile: 16 rows x 16 threads of 4 bytes.
__global__ void delta_residual_kernel(const uint8_t* __restrict__ cur, size_t cur_pitch,
                                      uint8_t* __restrict__ ref, size_t ref_pitch,
                                      uint8_t* __restrict__ residual, int row_bytes, int height,
                                      int tiles_x, uint8_t* __restrict__ changed, int threshold) {
  const int y = blockIdx.y * kDeltaTileH + threadIdx.y;
  const int x0 = blockIdx.x * kDeltaTileW + threadIdx.x * 4;
  int any = 0;
  if (y < height) {
    const uint8_t* c = cur + static_cast<size_t>(y) * cur_pitch;
    uint8_t* r = ref + static_cast<size_t>(y) * ref_pitch;
    uint8_t* res = residual + static_cast<size_t>(y) * row_bytes;
    for (int i = 0; i < 4; i++) {
      const int x = x0 + i;
      if (x >= row_bytes)
        break;
      const int q = delta_residual(c[x], r[x], threshold);
      res[x] = static_cast<uint8_t>(q);
      if (q != 0)
        r[x] = static_cast<uint8_t>(r[x] + q);
      any |= q != 0;
    }
  }
  any = __syncthreads_or(any);
  if (threadIdx.x == 0 && threadIdx.y == 0)
    changed[blockIdx.y * tiles_x + blockIdx.x] = any ? 1 : 0;
}

__global__ void delta_checksum_kernel(const uint8_t* __restrict__ img, size_t pitch,
                                      int row_bytes, int height, unsigned long long pos_base,
                                      unsigned long long* sum) {
  const long long words_per_row = (row_bytes + 7) / 8;
  const long long total = words_per_row * height;
  unsigned long long acc = 0;
  for (long long idx = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long y = idx / words_per_row, w = idx - y * words_per_row;
    const uint8_t* p = img + y * pitch + w * 8;
    const int n = min(8, row_bytes - static_cast<int>(w * 8));
    unsigned long long v = 0;
    for (int i = 0; i < n; i++)
      v |= static_cast<unsigned long long>(p[i]) << (8 * i);
    const unsigned long long pos = pos_base + static_cast<unsigned long long>(idx);
    const unsigned long long m = (v ^ (pos * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull;
    acc += m ^ (m >> 31);
  }
  for (int off = 16; off > 0; off /= 2)
    acc += __shfl_down_sync(0xffffffffu, acc, off);
  if ((threadIdx.x & 31) == 0)
    atomicAdd(sum, acc);
}

// One block a tile, as delta_residual_kernel: adds the tile's residuals,
// stored row by row at `offsets[tile]` of the payload, to the reference.
__global__ void delta_apply_kernel(const uint8_t* __restrict__ raw,
                                   const uint32_t* __restrict__ offsets, uint8_t* __restrict__ ref,
                                   size_t ref_pitch, int row_bytes, int height, int tiles_x) {
  const uint32_t off = offsets[blockIdx.y * tiles_x + blockIdx.x];
  if (off == kDeltaNoTile)
    return;
  const int tx0 = blockIdx.x * kDeltaTileW, ty0 = blockIdx.y * kDeltaTileH;
  const int tile_bytes = min(kDeltaTileW, row_bytes - tx0);
  const int y = ty0 + threadIdx.y;
  if (y >= height)
    return;
  const uint8_t* res = raw + off + static_cast<size_t>(threadIdx.y) * tile_bytes;
  uint8_t* r = ref + static_cast<size_t>(y) * ref_pitch + tx0;
  for (int i = 0; i < 4; i++) {
    const int x = threadIdx.x * 4 + i;
    if (x < tile_bytes)
      r[x] = static_cast<uint8_t>(r[x] + res[x]);
  }
}

}  // namespace

Status delta_apply_cuda(const DeltaLayout& layout, const uint8_t* raw_dev, bool keyframe,
                        const uint32_t* tile_offsets_dev, const ImageView& ref,
                        StreamHandle stream) {
  if (keyframe)  // the payload is the frame, planes and rows tight
    return copy_image_async(ref, packed_view(layout.desc, const_cast<uint8_t*>(raw_dev)), stream);
  size_t tile_off = 0;
  for (int i = 0; i < layout.n_planes; i++) {
    const DeltaPlaneLayout& p = layout.planes[i];
    const dim3 grid(p.tiles_x, p.tiles_y), block(kDeltaTileW / 4, kDeltaTileH);
    delta_apply_kernel<<<grid, block, 0, stream>>>(raw_dev, tile_offsets_dev + tile_off,
                                                   ref.data[i], ref.pitch[i], p.row_bytes,
                                                   p.height, p.tiles_x);
    CUDAFX_CUDA_TRY(cudaGetLastError());
    tile_off += p.tile_count();
  }
  return Status::ok();
}

Status delta_residual_cuda(const DeltaLayout& layout, const ImageView& cur, const ImageView& ref,
                           int threshold, uint8_t* residual, uint8_t* changed,
                           StreamHandle stream) {
  size_t frame_off = 0, tile_off = 0;
  for (int i = 0; i < layout.n_planes; i++) {
    const DeltaPlaneLayout& p = layout.planes[i];
    const dim3 grid(p.tiles_x, p.tiles_y), block(kDeltaTileW / 4, kDeltaTileH);
    delta_residual_kernel<<<grid, block, 0, stream>>>(cur.data[i], cur.pitch[i], ref.data[i],
                                                      ref.pitch[i], residual + frame_off,
                                                      p.row_bytes, p.height, p.tiles_x,
                                                      changed + tile_off, threshold);
    CUDAFX_CUDA_TRY(cudaGetLastError());
    frame_off += static_cast<size_t>(p.row_bytes) * p.height;
    tile_off += p.tile_count();
  }
  return Status::ok();
}

Status delta_checksum_cuda(const DeltaLayout& layout, const ImageView& img, uint64_t* sum,
                           StreamHandle stream) {
  CUDAFX_CUDA_TRY(cudaMemsetAsync(sum, 0, sizeof(uint64_t), stream));
  unsigned long long pos = 0;
  for (int i = 0; i < layout.n_planes; i++) {
    const DeltaPlaneLayout& p = layout.planes[i];
    const long long words = static_cast<long long>((p.row_bytes + 7) / 8) * p.height;
    const int blocks = static_cast<int>(std::min<long long>((words + 255) / 256, 1024));
    delta_checksum_kernel<<<blocks, 256, 0, stream>>>(
        img.data[i], img.pitch[i], p.row_bytes, p.height, pos,
        reinterpret_cast<unsigned long long*>(sum));
    CUDAFX_CUDA_TRY(cudaGetLastError());
    pos += static_cast<unsigned long long>(words);
  }
  return Status::ok();
}

}  // namespace cudafx
