// CUDA backend of the auto-contrast op: per frame, on the caller's stream and
// without a host round trip,
//   1. a memset of the histograms;
//   2. a histogram kernel over plane 0: at most 256 blocks, rows strided
//      (16-byte loads where rows allow: common/lane_units),
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
#include <string>

#include "autocontrast/autocontrast_lanes.hpp"
#include "common/cuda_check.hpp"
#include "common/lane_units.cuh"
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

// Counts one pixel whose channel bytes r, g, b are given (MODE 0 reads r
// only).
template <int MODE>
__device__ __forceinline__ void count_pixel(unsigned int* h, unsigned r, unsigned g, unsigned b) {
  if (MODE == 0) {
    atomicAdd(&h[r], 1u);
  } else if (MODE == 1) {
    atomicAdd(&h[luma_bt601(r, g, b)], 1u);
  } else {
    atomicAdd(&h[r], 1u);
    atomicAdd(&h[256 + g], 1u);
    atomicAdd(&h[512 + b], 1u);
  }
}

// Byte `i` (0 <= i < C) of a pixel's C bytes, with `i` known only at run
// time: selects, not an indexed (local-memory) array.
template <int C>
__device__ __forceinline__ unsigned pick(const unsigned (&bytes)[C], int i) {
  unsigned v = bytes[0];
#pragma unroll
  for (int c = 1; c < C; c++)
    if (i == c)
      v = bytes[c];
  return v;
}

// MODE 0: byte r of each pixel; 1: the luma of bytes r, g, b; 2: bytes r,
// g, b into histograms 0, 1, 2. C bytes a pixel; kUnits: rows read in
// 16-byte units (common/lane_units.cuh), the rest pixel by pixel.
template <int MODE, int C, bool kUnits>
__global__ void __launch_bounds__(kThreads) histogram(HistArgs a, unsigned long long* out) {
  constexpr int kHists = MODE == 2 ? 3 : 1;
  __shared__ unsigned int h[kHists * 256];
  for (int i = threadIdx.x; i < kHists * 256; i += kThreads)
    h[i] = 0;
  __syncthreads();
  for (int y = blockIdx.y; y < a.height; y += gridDim.y) {
    const uint8_t* row = a.data + static_cast<size_t>(y) * a.pitch;
    int x0 = 0;  // the first pixel after the whole units
    if (kUnits)
      x0 = for_each_unit<C>(row, a.width, threadIdx.x, kThreads, [&](const uint8_t*, auto& q) {
#pragma unroll
        for (int i = 0; i < LaneUnit<C>::kBytes / C; i++) {
          unsigned bytes[C];
#pragma unroll
          for (int c = 0; c < C; c++)
            bytes[c] = unit_byte(q, i * C + c);
          count_pixel<MODE>(h, pick(bytes, a.r), MODE == 0 ? 0 : pick(bytes, a.g),
                            MODE == 0 ? 0 : pick(bytes, a.b));
        }
      });
    for (int x = x0 + threadIdx.x; x < a.width; x += kThreads) {
      const uint8_t* px = row + x * C;
      count_pixel<MODE>(h, px[a.r], MODE == 0 ? 0 : px[a.g], MODE == 0 ? 0 : px[a.b]);
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kHists * 256; i += kThreads)
    if (h[i])
      atomicAdd(&out[i], static_cast<unsigned long long>(h[i]));
}

// The instance for the layout: one byte a pixel (GRAY8, the Y plane) is
// MODE 0 only; RGB layouts have 3 or 4 bytes a pixel.
template <bool kUnits>
Status launch_histogram(int mode, int channels, dim3 grid, cudaStream_t s, const HistArgs& h,
                        unsigned long long* out) {
  if (mode == 0 && channels == 1)
    histogram<0, 1, kUnits><<<grid, kThreads, 0, s>>>(h, out);
  else if (mode == 1 && channels == 3)
    histogram<1, 3, kUnits><<<grid, kThreads, 0, s>>>(h, out);
  else if (mode == 1 && channels == 4)
    histogram<1, 4, kUnits><<<grid, kThreads, 0, s>>>(h, out);
  else if (mode == 2 && channels == 3)
    histogram<2, 3, kUnits><<<grid, kThreads, 0, s>>>(h, out);
  else if (mode == 2 && channels == 4)
    histogram<2, 4, kUnits><<<grid, kThreads, 0, s>>>(h, out);
  else
    return Status::invalid("auto contrast: no histogram kernel for mode " + std::to_string(mode) +
                           " with " + std::to_string(channels) + " bytes a pixel");
  CUDAFX_CUDA_TRY(cudaGetLastError());
  return Status::ok();
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
  const int mode = l.g < 0 ? 0 : l.luma ? 1 : 2;
  if (rows_in_units(p.data, p.pitch))
    CUDAFX_TRY(launch_histogram<true>(mode, l.channels, grid, s, h, out));
  else
    CUDAFX_TRY(launch_histogram<false>(mode, l.channels, grid, s, h, out));
  TableArgs t{dev, l.histograms, static_cast<unsigned long long>(p.width) * p.height,
              params.clip_low, params.clip_high, weight, reset_};
  make_tables<<<1, kThreads, 0, s>>>(t);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  return apply_lane_tables_cuda(p, autocontrast_lane_map(l), &dev->table[0][0], stream);
}

}  // namespace cudafx
