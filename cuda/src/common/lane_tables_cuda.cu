// CUDA half of lane_tables.hpp.
#include <cuda_runtime.h>

#include <algorithm>

#include "common/cuda_check.hpp"
#include "common/lane_tables.hpp"
#include "common/lane_units.cuh"

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

template <int C, bool kUnits>
__global__ void __launch_bounds__(kThreads) apply_tables(LanePlane p, const uint8_t* tables) {
  __shared__ uint8_t t[kMaxLaneTables * 256];
  for (int i = threadIdx.x; i < kMaxLaneTables * 256; i += kThreads)
    t[i] = tables[i];
  __syncthreads();
  for (int y = blockIdx.y; y < p.height; y += gridDim.y) {
    uint8_t* row = p.data + static_cast<size_t>(y) * p.pitch;
    int x0 = 0;  // the first pixel after the whole units
    if (kUnits)
      x0 = for_each_unit<C>(row, p.width, threadIdx.x, kThreads, [&](uint8_t* at, auto& q) {
#pragma unroll
        for (int b = 0; b < LaneUnit<C>::kBytes; b++) {
          const int table = p.table[b % C];
          if (table >= 0)
            set_unit_byte(q, b, t[table * 256 + unit_byte(q, b)]);
        }
        uint4* v = reinterpret_cast<uint4*>(at);
#pragma unroll
        for (int k = 0; k < LaneUnit<C>::kVectors; k++)
          v[k] = q[k];
      });
    for (int x = x0 + threadIdx.x; x < p.width; x += kThreads)
#pragma unroll
      for (int c = 0; c < C; c++)
        if (p.table[c] >= 0)
          row[x * C + c] = t[p.table[c] * 256 + row[x * C + c]];
  }
}

template <bool kUnits>
void launch_apply_tables(int channels, dim3 grid, cudaStream_t s, const LanePlane& p,
                         const uint8_t* tables) {
  switch (channels) {
    case 1: apply_tables<1, kUnits><<<grid, kThreads, 0, s>>>(p, tables); break;
    case 2: apply_tables<2, kUnits><<<grid, kThreads, 0, s>>>(p, tables); break;
    case 3: apply_tables<3, kUnits><<<grid, kThreads, 0, s>>>(p, tables); break;
    default: apply_tables<4, kUnits><<<grid, kThreads, 0, s>>>(p, tables); break;
  }
}

}  // namespace

Status apply_lane_tables_cuda(const PlaneView& plane, const LaneMap& map, const uint8_t* tables,
                              StreamHandle stream) {
  const LanePlane p{plane.data, plane.pitch, plane.width, plane.height,
                    {map.table[0], map.table[1], map.table[2], map.table[3]}};
  const dim3 grid(1, std::min(plane.height, kMaxGridY));
  cudaStream_t s = stream;
  if (rows_in_units(plane.data, plane.pitch))
    launch_apply_tables<true>(map.channels, grid, s, p, tables);
  else
    launch_apply_tables<false>(map.channels, grid, s, p, tables);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

}  // namespace cudafx
