// CUDA backend of the convolution op. A first, plain version: one thread an
// output value, taps from shared memory, source bytes through the read-only
// cache with the border rule per tap; the separable integer path as a row
// pass into a 32-bit scratch image and a column pass from it. Unfiltered
// planes are copied. (Shared-memory source tiles, several values a thread
// and dp4a for integer taps are the next steps: issue #17's targets.)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "common/cuda_check.hpp"
#include "cudafx/convolve.hpp"
#include "cudafx/convolve_math.hpp"

namespace cudafx {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxTaps = kConvolveMaxSize * kConvolveMaxSize;

struct Args {
  const uint8_t* src;
  uint8_t* dst;
  size_t src_pitch, dst_pitch;
  int width, height, channels;  // pixels, bytes a pixel
  unsigned lanes;
  int kw, kh, ax, ay;
  BorderMode border;
  int integer, idivisor, ioffset;
  float foffset;
  const int* itaps;      // device: kw * kh (or the row taps, separable)
  const float* ftaps;    // device: kw * kh
  const int* col;        // separable: kh
  int* mid;              // separable: width * channels ints a row
};

__device__ __forceinline__ uint8_t byte_at(const Args& a, int ys, int x, int c) {
  if (ys < 0)
    return 0;
  const int xs = border_index(x, a.width, a.border);
  return xs < 0 ? 0 : __ldg(a.src + static_cast<size_t>(ys) * a.src_pitch + xs * a.channels + c);
}

// 2D, integer or float: value k of row y.
__global__ void __launch_bounds__(kThreads) convolve_2d(const __grid_constant__ Args a) {
  __shared__ int itaps[kMaxTaps];
  __shared__ float ftaps[kMaxTaps];
  const int n = a.kw * a.kh;
  for (int i = threadIdx.x; i < n; i += kThreads) {
    if (a.integer)
      itaps[i] = a.itaps[i];
    else
      ftaps[i] = a.ftaps[i];
  }
  __syncthreads();
  const int k = blockIdx.x * kThreads + threadIdx.x;
  const int row_values = a.width * a.channels;
  if (k >= row_values)
    return;
  const int x = k / a.channels, c = k - x * a.channels;
  // Rows past the grid's limit (65535) strided.
  for (int y = blockIdx.y; y < a.height; y += gridDim.y) {
    uint8_t* out = a.dst + static_cast<size_t>(y) * a.dst_pitch + k;
    if (!((a.lanes >> c) & 1)) {
      *out = __ldg(a.src + static_cast<size_t>(y) * a.src_pitch + k);
      continue;
    }
    int is = 0;
    float fs = 0.0f;
    for (int i = 0; i < a.kh; i++) {
      const int ys = border_index(y + i - a.ay, a.height, a.border);
      for (int j = 0; j < a.kw; j++) {
        const int v = byte_at(a, ys, x + j - a.ax, c);
        if (a.integer)
          is += itaps[i * a.kw + j] * v;
        else
          fs = fma_rn(ftaps[i * a.kw + j], static_cast<float>(v), fs);
      }
    }
    *out = a.integer ? convolve_integer_result(is, a.idivisor, a.ioffset)
                     : convolve_float_result(fs, a.foffset);
  }
}

// Separable, row pass: mid = sum of row taps x source bytes.
__global__ void __launch_bounds__(kThreads) convolve_rows(const __grid_constant__ Args a) {
  const int k = blockIdx.x * kThreads + threadIdx.x;
  const int row_values = a.width * a.channels;
  if (k >= row_values)
    return;
  const int x = k / a.channels, c = k - x * a.channels;
  for (int y = blockIdx.y; y < a.height; y += gridDim.y) {
    int s = 0;
    for (int j = 0; j < a.kw; j++)
      s += __ldg(a.itaps + j) * byte_at(a, y, x + j - a.ax, c);
    a.mid[static_cast<size_t>(y) * row_values + k] = s;
  }
}

// Separable, column pass: the exact sum of column taps x row sums.
__global__ void __launch_bounds__(kThreads) convolve_cols(const __grid_constant__ Args a) {
  const int k = blockIdx.x * kThreads + threadIdx.x;
  const int row_values = a.width * a.channels;
  if (k >= row_values)
    return;
  const int c = k % a.channels;
  for (int y = blockIdx.y; y < a.height; y += gridDim.y) {
    uint8_t* out = a.dst + static_cast<size_t>(y) * a.dst_pitch + k;
    if (!((a.lanes >> c) & 1)) {
      *out = __ldg(a.src + static_cast<size_t>(y) * a.src_pitch + k);
      continue;
    }
    int s = 0;
    for (int i = 0; i < a.kh; i++) {
      const int ys = border_index(y + i - a.ay, a.height, a.border);
      if (ys >= 0)
        s += __ldg(a.col + i) * a.mid[static_cast<size_t>(ys) * row_values + k];
    }
    *out = convolve_integer_result(s, a.idivisor, a.ioffset);
  }
}

// Device scratch: the taps (ints or floats), the column taps, then the
// separable pass's rows for the largest plane.
constexpr size_t kTapBytes = 2 * kMaxTaps * sizeof(int) + kConvolveMaxSize * sizeof(int);

}  // namespace

size_t convolve_cuda_scratch_bytes(const ConvolvePlan& plan) {
  size_t mid = 0;
  if (plan.separable) {
    const FormatInfo& fi = format_info(plan.desc.format);
    for (int i = 0; i < fi.n_planes; i++)
      mid = std::max(mid, static_cast<size_t>(plane_width(fi, i, plan.desc.width)) *
                              fi.planes[i].channels * plane_height(fi, i, plan.desc.height) *
                              sizeof(int));
  }
  return kTapBytes + mid;
}

Status convolve_cuda(const ConvolvePlan& plan, const ImageView& src, const ImageView& dst,
                     void* scratch, size_t scratch_bytes, StreamHandle stream) {
  CUDAFX_TRY(validate_view(src, plan.desc, "convolution source"));
  CUDAFX_TRY(validate_view(dst, plan.desc, "convolution destination"));
  if (scratch_bytes < convolve_cuda_scratch_bytes(plan))
    return Status::invalid("convolution: device scratch smaller than the plan needs");
  cudaStream_t s = stream;
  auto* base = static_cast<uint8_t*>(scratch);
  int* dev_itaps = reinterpret_cast<int*>(base);
  float* dev_ftaps = reinterpret_cast<float*>(base + kMaxTaps * sizeof(int));
  int* dev_col = reinterpret_cast<int*>(base + 2 * kMaxTaps * sizeof(int));
  int* dev_mid = reinterpret_cast<int*>(base + kTapBytes);
  // The taps: queued copies from the plan (pageable host memory: the
  // runtime stages them before returning, so the plan may change after).
  const int n = plan.params.width * plan.params.height;
  if (plan.separable) {
    CUDAFX_CUDA_TRY(cudaMemcpyAsync(dev_itaps, plan.row.data(), plan.row.size() * sizeof(int),
                                    cudaMemcpyHostToDevice, s));
    CUDAFX_CUDA_TRY(cudaMemcpyAsync(dev_col, plan.col.data(), plan.col.size() * sizeof(int),
                                    cudaMemcpyHostToDevice, s));
  } else if (plan.integer) {
    CUDAFX_CUDA_TRY(cudaMemcpyAsync(dev_itaps, plan.itaps.data(), n * sizeof(int),
                                    cudaMemcpyHostToDevice, s));
  } else {
    CUDAFX_CUDA_TRY(cudaMemcpyAsync(dev_ftaps, plan.ftaps.data(), n * sizeof(float),
                                    cudaMemcpyHostToDevice, s));
  }
  const FormatInfo& fi = format_info(plan.desc.format);
  for (int i = 0; i < fi.n_planes; i++) {
    const PlaneView sp = src.plane(i), dp = dst.plane(i);
    if (!plan.filtered[i]) {
      CUDAFX_CUDA_TRY(cudaMemcpy2DAsync(dp.data, dp.pitch, sp.data, sp.pitch, sp.row_bytes(),
                                        sp.height, cudaMemcpyDeviceToDevice, s));
      continue;
    }
    Args a{};
    a.src = sp.data;
    a.dst = dp.data;
    a.src_pitch = sp.pitch;
    a.dst_pitch = dp.pitch;
    a.width = sp.width;
    a.height = sp.height;
    a.channels = fi.planes[i].channels;
    a.lanes = plan.lanes[i];
    a.kw = plan.params.width;
    a.kh = plan.params.height;
    a.ax = plan.ax;
    a.ay = plan.ay;
    a.border = plan.params.border;
    a.integer = plan.integer;
    a.idivisor = plan.idivisor;
    a.ioffset = plan.ioffset;
    a.foffset = plan.foffset;
    a.itaps = dev_itaps;
    a.ftaps = dev_ftaps;
    a.col = dev_col;
    a.mid = dev_mid;
    const int row_values = a.width * a.channels;
    const dim3 grid((row_values + kThreads - 1) / kThreads, std::min(a.height, 65535));
    if (plan.separable) {
      convolve_rows<<<grid, kThreads, 0, s>>>(a);
      convolve_cols<<<grid, kThreads, 0, s>>>(a);
    } else {
      convolve_2d<<<grid, kThreads, 0, s>>>(a);
    }
    CUDAFX_CUDA_TRY(cudaGetLastError());
  }
  return Status::ok();
}

}  // namespace cudafx
