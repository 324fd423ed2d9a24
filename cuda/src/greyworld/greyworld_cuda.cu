// CUDA backend of the grey-world op: per frame, on the caller's stream and
// without a host round trip,
//   1. a memset of the sums;
//   2. per plane with balanced channels, a sum kernel: a block a row (rows
//      past the grid's limit strided), each thread summing its pixels'
//      bytes per lane (16-byte loads where rows allow: common/lane_units), the block's lanes reduced in shared memory and added
//      to 64-bit sums with one atomic a lane (integer sums: exact in any
//      order, so equal to the CPU's);
//   3. a one-block kernel: the smoothed means (kept on the device between
//      frames) and the 256-entry table of each channel, by greyworld_math.hpp,
//      as the CPU computes them;
//   4. per plane, the tables applied to the balanced bytes in place
//      (common/lane_tables).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "common/cuda_check.hpp"
#include "common/lane_units.cuh"
#include "cudafx/greyworld.hpp"
#include "cudafx/greyworld_math.hpp"
#include "greyworld/greyworld_lanes.hpp"

namespace cudafx {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxGridY = 65535;

// The op's device memory.
struct GreyWorldDevice {
  unsigned long long lanes[kMaxPlanes][4];  // byte sums per plane and lane
  double means[3];                          // smoothed means
  uint8_t table[kMaxLaneTables][256];
};

struct PlaneArgs {
  uint8_t* data;
  size_t pitch;
  int width, height;
};

template <int C, bool kUnits>
__global__ void __launch_bounds__(kThreads) sum_plane(PlaneArgs p, unsigned long long* lanes) {
  __shared__ unsigned int block_sum[C];
  if (threadIdx.x < C)
    block_sum[threadIdx.x] = 0;
  __syncthreads();
  // A block's rows: at most 2 (65536 rows over 65535 blocks) of at most
  // 65536 * 255 each: fits 32 bits.
  unsigned int acc[C] = {};
  for (int y = blockIdx.y; y < p.height; y += gridDim.y) {
    const uint8_t* row = p.data + static_cast<size_t>(y) * p.pitch;
    int x0 = 0;  // the first pixel after the whole units
    if (kUnits)
      x0 = for_each_unit<C>(row, p.width, threadIdx.x, kThreads, [&](const uint8_t*, auto& q) {
#pragma unroll
        for (int b = 0; b < LaneUnit<C>::kBytes; b++)
          acc[b % C] += unit_byte(q, b);
      });
    for (int x = x0 + threadIdx.x; x < p.width; x += kThreads)
#pragma unroll
      for (int c = 0; c < C; c++)
        acc[c] += row[x * C + c];
  }
#pragma unroll
  for (int c = 0; c < C; c++) {
    unsigned int v = acc[c];
    for (int d = 16; d > 0; d /= 2)
      v += __shfl_down_sync(0xffffffffu, v, d);
    if (threadIdx.x % 32 == 0)
      atomicAdd(&block_sum[c], v);
  }
  __syncthreads();
  if (threadIdx.x < C)
    atomicAdd(&lanes[threadIdx.x], static_cast<unsigned long long>(block_sum[threadIdx.x]));
}

template <bool kUnits>
void launch_sum_plane(int channels, dim3 grid, cudaStream_t s, const PlaneArgs& a,
                      unsigned long long* lanes) {
  switch (channels) {
    case 1: sum_plane<1, kUnits><<<grid, kThreads, 0, s>>>(a, lanes); break;
    case 2: sum_plane<2, kUnits><<<grid, kThreads, 0, s>>>(a, lanes); break;
    case 3: sum_plane<3, kUnits><<<grid, kThreads, 0, s>>>(a, lanes); break;
    default: sum_plane<4, kUnits><<<grid, kThreads, 0, s>>>(a, lanes); break;
  }
}

struct TableArgs {
  GreyWorldDevice* dev;
  int count;
  int rgb;
  int fresh;
  double weight;
  int plane[3], offset[3];
  unsigned long long pixels[3];
};

__global__ void __launch_bounds__(kThreads) make_tables(TableArgs a) {
  if (threadIdx.x == 0) {
    uint64_t sums[3], counts[3];
    for (int i = 0; i < a.count; i++) {
      sums[i] = a.dev->lanes[a.plane[i]][a.offset[i]];
      counts[i] = a.pixels[i];
    }
    greyworld_smooth(sums, counts, a.count, a.weight, a.fresh != 0, a.dev->means);
  }
  __syncthreads();
  const double means[3] = {a.dev->means[0], a.dev->means[1], a.dev->means[2]};
  for (int i = 0; i < a.count; i++)
    a.dev->table[i][threadIdx.x] = greyworld_table_value(a.rgb != 0, means, i, threadIdx.x);
}

}  // namespace

Status GreyWorldOp::prepare_cuda() {
  CUDAFX_TRY(device_.allocate(sizeof(GreyWorldDevice)));
  return Status::ok();
}

Status GreyWorldOp::submit_cuda(StreamHandle stream, const ImageView& frame, double weight) {
  cudaStream_t s = stream;
  auto* dev = static_cast<GreyWorldDevice*>(device_.get());
  CUDAFX_CUDA_TRY(cudaMemsetAsync(dev->lanes, 0, sizeof(dev->lanes), s));

  TableArgs t{};
  t.dev = dev;
  t.count = layout_.count;
  t.rgb = layout_.rgb;
  t.fresh = reset_;
  t.weight = weight;
  for (int i = 0; i < layout_.count; i++) {
    const GreyWorldChannel& c = layout_.ch[i];
    const PlaneView v = frame.plane(c.plane);
    t.plane[i] = c.plane;
    t.offset[i] = c.offset;
    t.pixels[i] = static_cast<unsigned long long>(v.width) * v.height;
  }
  // Sums of every plane with balanced channels: a block a row (rows past
  // the grid's limit strided), the kernel instance for its bytes a pixel.
  for (int p = 0; p < kMaxPlanes; p++) {
    LaneMap map;
    if (!greyworld_lane_map(layout_, p, &map))
      continue;
    const PlaneView v = frame.plane(p);
    const PlaneArgs a{v.data, v.pitch, v.width, v.height};
    const dim3 grid(1, std::min(v.height, kMaxGridY));
    if (rows_in_units(v.data, v.pitch))
      launch_sum_plane<true>(map.channels, grid, s, a, dev->lanes[p]);
    else
      launch_sum_plane<false>(map.channels, grid, s, a, dev->lanes[p]);
    CUDAFX_CUDA_TRY(cudaGetLastError());
  }
  make_tables<<<1, kThreads, 0, s>>>(t);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  for (int p = 0; p < kMaxPlanes; p++) {
    LaneMap map;
    if (greyworld_lane_map(layout_, p, &map))
      CUDAFX_TRY(apply_lane_tables_cuda(frame.plane(p), map, &dev->table[0][0], stream));
  }
  return Status::ok();
}

}  // namespace cudafx
