// CUDA half of lane_tables.hpp.
#include <cuda_runtime.h>

#include <algorithm>

#include "common/cuda_check.hpp"
#include "common/lane_tables.hpp"

namespace cudafx {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxGridY = 65535;

struct LanePlane {
  uint8_t* data;
  size_t pitch;
  int width, height;
  int table[4];
};

template <int C>
__global__ void __launch_bounds__(kThreads) apply_tables(LanePlane p, const uint8_t* tables) {
  __shared__ uint8_t t[kMaxLaneTables * 256];
  for (int i = threadIdx.x; i < kMaxLaneTables * 256; i += kThreads)
    t[i] = tables[i];
  __syncthreads();
  for (int y = blockIdx.y; y < p.height; y += gridDim.y) {
    uint8_t* row = p.data + static_cast<size_t>(y) * p.pitch;
    for (int x = threadIdx.x; x < p.width; x += kThreads)
#pragma unroll
      for (int c = 0; c < C; c++)
        if (p.table[c] >= 0)
          row[x * C + c] = t[p.table[c] * 256 + row[x * C + c]];
  }
}

}  // namespace

Status apply_lane_tables_cuda(const PlaneView& plane, const LaneMap& map, const uint8_t* tables,
                              StreamHandle stream) {
  const LanePlane p{plane.data, plane.pitch, plane.width, plane.height,
                    {map.table[0], map.table[1], map.table[2], map.table[3]}};
  const dim3 grid(1, std::min(plane.height, kMaxGridY));
  cudaStream_t s = stream;
  switch (map.channels) {
    case 1: apply_tables<1><<<grid, kThreads, 0, s>>>(p, tables); break;
    case 2: apply_tables<2><<<grid, kThreads, 0, s>>>(p, tables); break;
    case 3: apply_tables<3><<<grid, kThreads, 0, s>>>(p, tables); break;
    default: apply_tables<4><<<grid, kThreads, 0, s>>>(p, tables); break;
  }
  CUDAFX_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

}  // namespace cudafx
