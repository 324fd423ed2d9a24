// CUDA backend of the auto-contrast op: per frame, on the caller's stream and
// without a host round trip,
//   1. a memset of the histograms;
//   2. a histogram kernel over plane 0: at most 256 blocks, rows strided,
//      each block counting into shared memory (32-bit: a block sees at most
//      256 rows of 65536 pixels) and adding its nonzero bins to the 64-bit
//      histograms with atomics (integer counts: exact in any order, so equal
//      to the CPU's);
//   3. a one-block kernel: the levels, their smoothing (kept on the device
//      between frames) and the tables, by autocontrast_math.hpp;
//   4. the tables applied to the stretched bytes in place (common/lane_tables).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "autocontrast/autocontrast_lanes.hpp"
#include "common/cuda_check.hpp"
#include "cudafx/autocontrast.hpp"
#include "cudafx/autocontrast_math.hpp"
#include "cudafx/rgb_luma.hpp"

namespace cudafx {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 256;

// The op's device memory.
struct AutoContrastDevice {
  unsigned long long hist[3][256];
  double levels[3][2];  // kept (low, high) of each histogram
  uint8_t table[kMaxLaneTables][256];
};

struct HistArgs {
  const uint8_t* data;
  size_t pitch;
  int width, height, channels;
  int r, g, b;
};

// MODE 0: byte r of each pixel; 1: the luma of bytes r, g, b; 2: bytes r,
// g, b into histograms 0, 1, 2.
template <int MODE>
__global__ void __launch_bounds__(kThreads) histogram(HistArgs a, unsigned long long* out) {
  constexpr int kHists = MODE == 2 ? 3 : 1;
  __shared__ unsigned int h[kHists * 256];
  for (int i = threadIdx.x; i < kHists * 256; i += kThreads)
    h[i] = 0;
  __syncthreads();
  for (int y = blockIdx.y; y < a.height; y += gridDim.y) {
    const uint8_t* row = a.data + static_cast<size_t>(y) * a.pitch;
    for (int x = threadIdx.x; x < a.width; x += kThreads) {
      const uint8_t* px = row + x * a.channels;
      if (MODE == 0) {
        atomicAdd(&h[px[a.r]], 1u);
      } else if (MODE == 1) {
        atomicAdd(&h[luma_bt601(px[a.r], px[a.g], px[a.b])], 1u);
      } else {
        atomicAdd(&h[px[a.r]], 1u);
        atomicAdd(&h[256 + px[a.g]], 1u);
        atomicAdd(&h[512 + px[a.b]], 1u);
      }
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kHists * 256; i += kThreads)
    if (h[i])
      atomicAdd(&out[i], static_cast<unsigned long long>(h[i]));
}

struct TableArgs {
  AutoContrastDevice* dev;
  int histograms;
  unsigned long long count;
  double clip_low, clip_high, weight;
  int fresh;
};

__global__ void __launch_bounds__(kThreads) make_tables(TableArgs a) {
  if (threadIdx.x < a.histograms) {
    const int i = threadIdx.x;
    double low, high;
    autocontrast_levels(reinterpret_cast<const uint64_t*>(a.dev->hist[i]), a.count, a.clip_low,
                        a.clip_high, &low, &high);
    autocontrast_smooth(low, high, a.weight, a.fresh != 0, a.dev->levels[i]);
  }
  __syncthreads();
  for (int i = 0; i < a.histograms; i++)
    a.dev->table[i][threadIdx.x] = autocontrast_table_value(a.dev->levels[i], threadIdx.x);
}

}  // namespace

Status AutoContrastOp::prepare_cuda() {
  CUDAFX_TRY(device_.allocate(sizeof(AutoContrastDevice)));
  return Status::ok();
}

Status AutoContrastOp::submit_cuda(StreamHandle stream, const ImageView& frame,
                                   const AutoContrastLayout& l, const AutoContrastParams& params,
                                   double weight) {
  cudaStream_t s = stream;
  auto* dev = static_cast<AutoContrastDevice*>(device_.get());
  CUDAFX_CUDA_TRY(cudaMemsetAsync(dev->hist, 0, sizeof(dev->hist), s));
  const PlaneView p = frame.plane(0);
  const HistArgs h{p.data, p.pitch, p.width, p.height, l.channels, l.r, l.g, l.b};
  const dim3 grid(1, std::min(p.height, kMaxBlocks));
  unsigned long long* out = &dev->hist[0][0];
  if (l.g < 0)
    histogram<0><<<grid, kThreads, 0, s>>>(h, out);
  else if (l.luma)
    histogram<1><<<grid, kThreads, 0, s>>>(h, out);
  else
    histogram<2><<<grid, kThreads, 0, s>>>(h, out);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  TableArgs t{dev, l.histograms, static_cast<unsigned long long>(p.width) * p.height,
              params.clip_low, params.clip_high, weight, reset_};
  make_tables<<<1, kThreads, 0, s>>>(t);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  return apply_lane_tables_cuda(p, autocontrast_lane_map(l), &dev->table[0][0], stream);
}

}  // namespace cudafx
