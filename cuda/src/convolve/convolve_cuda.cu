// CUDA backend of the convolution op: on the integer tensor cores
// (convolve_mma_cuda.cuh) where a plane has 4-byte pixels, the taps are
// integers within -128..127, the kernel at most 17 wide and the device
// sm_80 or newer; else the tiled 2D kernel (convolve_tile_cuda.cuh) for
// every kernel but large separable ones, which run as a row pass into a
// 32-bit scratch image (ints, or floats for float kernels) and a column pass
// from it (one thread a value, taps through the read-only cache). Unfiltered planes are copied.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "common/cuda_check.hpp"
#include "cudafx/convolve.hpp"
#include "cudafx/convolve_math.hpp"
#include "convolve/convolve_mma_cuda.cuh"
#include "convolve/convolve_tile_cuda.cuh"

namespace cudafx {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxTaps = kConvolveMaxSize * kConvolveMaxSize;

struct Args : ConvolvePlaneArgs {
  int channels;               // bytes a pixel
  ConvolveDivision division;  // the plan's integer rounding (idivisor, ioffset)
  float foffset;              // the float rounding's offset
  const void* row_taps;       // device: the row taps (kw), int or float
  const void* col_taps;       // device: the column taps (kh), int or float
  void* mid;                  // width * channels values a row, int or float
  const int* itaps;           // device: every tap (the tiled kernel's)
};

// One multiply-add of the two passes: exact ints, or one float rounding.
__device__ __forceinline__ int pass_mac(int acc, int w, int v) { return acc + w * v; }
__device__ __forceinline__ float pass_mac(float acc, float w, float v) {
  return __fmaf_rn(w, v, acc);
}
__device__ __forceinline__ uint8_t pass_result(const Args& a, int s) { return a.division(s); }
__device__ __forceinline__ uint8_t pass_result(const Args& a, float s) {
  return convolve_float_result(s, a.foffset);
}

__device__ __forceinline__ uint8_t byte_at(const Args& a, int ys, int x, int c) {
  if (ys < 0)
    return 0;
  const int xs = border_index(x, a.width, a.border);
  return xs < 0 ? 0 : __ldg(a.src + static_cast<size_t>(ys) * a.src_pitch + xs * a.channels + c);
}

// Separable, row pass: mid = sum of row taps x source bytes, in tap order
// (Acc: int, exact; float, one rounding a tap as on the CPU).
template <class Acc>
__global__ void __launch_bounds__(kThreads) convolve_rows(const __grid_constant__ Args a) {
  const int k = blockIdx.x * kThreads + threadIdx.x;
  const int row_values = a.width * a.channels;
  if (k >= row_values)
    return;
  const int x = k / a.channels, c = k - x * a.channels;
  const Acc* taps = static_cast<const Acc*>(a.row_taps);
  Acc* mid = static_cast<Acc*>(a.mid);
  for (int y = blockIdx.y; y < a.height; y += gridDim.y) {
    Acc s = 0;
    for (int j = 0; j < a.kw; j++)
      s = pass_mac(s, __ldg(taps + j), static_cast<Acc>(byte_at(a, y, x + j - a.ax, c)));
    mid[static_cast<size_t>(y) * row_values + k] = s;
  }
}

// Separable, column pass: the sum of column taps x row sums, in tap order.
// A row outside the frame under the constant border is a row of zeros,
// whose terms add nothing (nor in float: the sum is never -0).
template <class Acc>
__global__ void __launch_bounds__(kThreads) convolve_cols(const __grid_constant__ Args a) {
  const int k = blockIdx.x * kThreads + threadIdx.x;
  const int row_values = a.width * a.channels;
  if (k >= row_values)
    return;
  const int c = k % a.channels;
  const Acc* taps = static_cast<const Acc*>(a.col_taps);
  const Acc* mid = static_cast<const Acc*>(a.mid);
  for (int y = blockIdx.y; y < a.height; y += gridDim.y) {
    uint8_t* out = a.dst + static_cast<size_t>(y) * a.dst_pitch + k;
    if (!((a.lanes >> c) & 1)) {
      *out = __ldg(a.src + static_cast<size_t>(y) * a.src_pitch + k);
      continue;
    }
    Acc s = 0;
    for (int i = 0; i < a.kh; i++) {
      const int ys = border_index(y + i - a.ay, a.height, a.border);
      if (ys >= 0)
        s = pass_mac(s, __ldg(taps + i), mid[static_cast<size_t>(ys) * row_values + k]);
    }
    *out = pass_result(a, s);
  }
}

// Separable kernels larger than 11x11 run as two passes (their cost grows
// with kw + kh, the tile's with kw * kh); everything else tiled.
bool two_passes(const ConvolvePlan& plan) {
  return plan.separable && plan.params.width * plan.params.height > kConvolveTwoPassArea;
}

template <int C, convolve_tile::Arith A>
void launch_tile_k(const convolve_tile::Args& a, size_t shared, dim3 grid, cudaStream_t s) {
  using convolve_tile::tile_kernel;
  const dim3 block(convolve_tile::kThreadsX, convolve_tile::kThreadsY);
  // Square 3x3, 5x5 and 7x7 kernels: their own instantiation (taps in
  // registers, loops unrolled); every other size: the general one.
  const int k = a.kw == a.kh ? a.kw : 0;
  switch (k) {
    case 3: tile_kernel<C, A, 3><<<grid, block, shared, s>>>(a); break;
    case 5: tile_kernel<C, A, 5><<<grid, block, shared, s>>>(a); break;
    case 7: tile_kernel<C, A, 7><<<grid, block, shared, s>>>(a); break;
    default: tile_kernel<C, A, 0><<<grid, block, shared, s>>>(a); break;
  }
}

template <int C>
void launch_tile_c(const convolve_tile::Args& a, convolve_tile::Arith arith, size_t shared,
                   dim3 grid, cudaStream_t s) {
  using convolve_tile::Arith;
  switch (arith) {
    case Arith::Packed: launch_tile_k<C, Arith::Packed>(a, shared, grid, s); break;
    case Arith::ExactFloat: launch_tile_k<C, Arith::ExactFloat>(a, shared, grid, s); break;
    case Arith::Int: launch_tile_k<C, Arith::Int>(a, shared, grid, s); break;
    case Arith::Float: launch_tile_k<C, Arith::Float>(a, shared, grid, s); break;
  }
}

// The tiled kernel over one plane (a: the plane's arguments).
Status launch_tile(const ConvolvePlan& plan, const Args& p, convolve_tile::Arith arith, int bias,
                   const void* taps, cudaStream_t s) {
  convolve_tile::Args a{};
  static_cast<ConvolvePlaneArgs&>(a) = p;
  a.division = ConvolveDivision(plan.idivisor, plan.ioffset);
  a.bias = bias;
  a.foffset = plan.foffset;
  a.taps = taps;
  const size_t shared = convolve_tile::shared_bytes(a.kw, a.kh, p.channels, &a.row_stride);
  const long long row_values = static_cast<long long>(a.width) * p.channels;
  const long long tiles_y = (a.height + convolve_tile::kTileRows - 1) / convolve_tile::kTileRows;
  if (tiles_y > 65535)
    return Status::invalid("convolution: planes taller than 2 097 120 rows are not supported");
  const dim3 grid(static_cast<unsigned>((row_values + convolve_tile::kTileBytes - 1) /
                                        convolve_tile::kTileBytes),
                  static_cast<unsigned>(tiles_y));
  switch (p.channels) {
    case 1: launch_tile_c<1>(a, arith, shared, grid, s); return Status::ok();
    case 2: launch_tile_c<2>(a, arith, shared, grid, s); return Status::ok();
    case 3: launch_tile_c<3>(a, arith, shared, grid, s); return Status::ok();
    case 4: launch_tile_c<4>(a, arith, shared, grid, s); return Status::ok();
  }
  return Status::invalid("convolution: planes of 1 to 4 bytes a pixel only");
}

// Whether the tensor-core kernel takes plane `plane` (its filtered bytes
// those of an RGB format with alpha or padding last or first) on the
// current device (for images whose rows are 4-byte aligned).
bool mma_kernel_applies(const ConvolvePlan& plan, int plane) {
  const int channels = format_info(plan.desc.format).planes[plane].channels;
  if (!plan.integer || channels != 4 || (plan.lanes[plane] != 0x7u && plan.lanes[plane] != 0xeu) ||
      convolve_mma::stage_shift(plan.ax) + plan.params.width > convolve_mma::kMaxWidth ||
      !ConvolveMagicDivision::applies(plan.idivisor))
    return false;
  long long magnitude = 0;
  for (int t : plan.itaps) {
    if (t < -convolve_mma::kMaxTap - 1 || t > convolve_mma::kMaxTap)
      return false;
    magnitude += t < 0 ? -static_cast<long long>(t) : t;
  }
  if (255 * magnitude > ConvolveMagicDivision::kMaxSum)
    return false;
  // The code the device runs must hold the kernel's body: SASS or PTX of
  // sm_80 and up (a build for older targets JIT-compiled for this device
  // has an empty one: the device's own capability does not say).
  cudaFuncAttributes attrs{};
  if (cudaFuncGetAttributes(&attrs, convolve_mma::mma_kernel<0x7u, 3>) != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky
    return false;
  }
  return attrs.binaryVersion >= 80 && attrs.ptxVersion >= 80;
}

bool mma_applies(const ConvolvePlan& plan, int plane, const Args& p) {
  return ((reinterpret_cast<uintptr_t>(p.src) | reinterpret_cast<uintptr_t>(p.dst) | p.src_pitch |
           p.dst_pitch) & 3u) == 0 &&
         mma_kernel_applies(plan, plane);
}

// Persistent blocks: as many as the device holds at once, at most `units`.
template <class K>
Status launch_persistent(K kernel, const convolve_mma::Args& a, size_t shared, long long units,
                         cudaStream_t s) {
  CUDAFX_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(shared)));
  int device = 0, sms = 0, per_sm = 0;
  CUDAFX_CUDA_TRY(cudaGetDevice(&device));
  CUDAFX_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDAFX_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel,
                                                                convolve_mma::kThreads, shared));
  const long long blocks = std::min<long long>(units, static_cast<long long>(sms) * std::max(per_sm, 1));
  kernel<<<static_cast<unsigned>(std::max<long long>(blocks, 1)), convolve_mma::kThreads, shared, s>>>(a);
  return Status::ok();
}

Status launch_mma(const ConvolvePlan& plan, const Args& p, const uint2* fragments,
                  cudaStream_t s) {
  convolve_mma::Args a{};
  static_cast<ConvolvePlaneArgs&>(a) = p;
  a.division = ConvolveMagicDivision(plan.idivisor, plan.ioffset);
  a.fragments = fragments;
  a.o = convolve_mma::stage_shift(a.ax);
  using namespace convolve_mma;
  const long long tiles = ((a.width + kTilePx - 1LL) / kTilePx) *
                          ((a.height + kTileRows - 1LL) / kTileRows);
  if (tiles > (1LL << 30))
    return Status::invalid("convolution: planes of more than 2^30 tiles are not supported");
  const size_t shared = shared_bytes(a.kh);
  constexpr int kShort = steps_for(kShortKernel), kLong = steps_for(kConvolveMaxSize);
  static_assert(kShort == 3, "mma_kernel_applies asks mma_kernel<0x7u, 3> for its code");
  if (a.kh <= kShortKernel)
    return a.lanes == 0x7u ? launch_persistent(mma_kernel<0x7u, kShort>, a, shared, tiles, s)
                           : launch_persistent(mma_kernel<0xeu, kShort>, a, shared, tiles, s);
  return a.lanes == 0x7u ? launch_persistent(mma_kernel<0x7u, kLong>, a, shared, tiles, s)
                         : launch_persistent(mma_kernel<0xeu, kLong>, a, shared, tiles, s);
}

// Device scratch: the taps (ints or floats), the column taps, the
// tensor-core kernel's B fragments, then the separable pass's rows for the
// largest plane.
constexpr size_t kFragmentBytes = kConvolveMaxSize * 2 * 32 * sizeof(uint2);
constexpr size_t kFragmentOffset =
    (2 * kMaxTaps * sizeof(int) + kConvolveMaxSize * sizeof(int) + 15) / 16 * 16;
constexpr size_t kTapBytes = kFragmentOffset + kFragmentBytes;

}  // namespace

bool convolve_cuda_tensor_cores(const ConvolvePlan& plan, int plane) {
  const FormatInfo& fi = format_info(plan.desc.format);
  return plane >= 0 && plane < fi.n_planes && plan.filtered[plane] &&
         mma_kernel_applies(plan, plane);
}

size_t convolve_cuda_scratch_bytes(const ConvolvePlan& plan) {
  size_t mid = 0;
  if (two_passes(plan)) {
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
  uint2* dev_fragments = reinterpret_cast<uint2*>(base + kFragmentOffset);
  // The taps: queued copies from the plan (pageable host memory: the
  // runtime stages them before returning, so the plan may change after).
  const int n = plan.params.width * plan.params.height;
  const bool two_pass = two_passes(plan);
  convolve_tile::Arith tile_arith = convolve_tile::Arith::Float;
  int tile_bias = 0;
  if (plan.integer) {
    long long magnitude = 0, negative = 0;
    for (int t : plan.itaps) {
      magnitude += t < 0 ? -static_cast<long long>(t) : t;
      negative += t < 0 ? -static_cast<long long>(t) : 0;
    }
    tile_arith = 255 * magnitude <= 65535       ? convolve_tile::Arith::Packed
                 : 255 * magnitude < (1 << 24) ? convolve_tile::Arith::ExactFloat
                                               : convolve_tile::Arith::Int;
    tile_bias = static_cast<int>(255 * negative);
  }
  // The tensor-core kernel's B fragments, where a plane may take it.
  const FormatInfo& planes_info = format_info(plan.desc.format);
  bool any_mma = false;
  for (int i = 0; i < planes_info.n_planes; i++)
    any_mma |= plan.filtered[i] && mma_kernel_applies(plan, i);
  if (any_mma) {
    const std::vector<uint32_t> fragments = convolve_mma::mma_fragments(
        plan.itaps, plan.params.width, plan.params.height, convolve_mma::stage_shift(plan.ax));
    CUDAFX_CUDA_TRY(cudaMemcpyAsync(dev_fragments, fragments.data(),
                                    fragments.size() * sizeof(uint32_t), cudaMemcpyHostToDevice, s));
  }
  if (two_pass && plan.integer) {
    CUDAFX_CUDA_TRY(cudaMemcpyAsync(dev_itaps, plan.row.data(), plan.row.size() * sizeof(int),
                                    cudaMemcpyHostToDevice, s));
    CUDAFX_CUDA_TRY(cudaMemcpyAsync(dev_col, plan.col.data(), plan.col.size() * sizeof(int),
                                    cudaMemcpyHostToDevice, s));
  } else if (two_pass) {  // float factors: the row's at dev_ftaps, the column's after them
    CUDAFX_CUDA_TRY(cudaMemcpyAsync(dev_ftaps, plan.frow.data(), plan.frow.size() * sizeof(float),
                                    cudaMemcpyHostToDevice, s));
    CUDAFX_CUDA_TRY(cudaMemcpyAsync(dev_ftaps + kConvolveMaxSize, plan.fcol.data(),
                                    plan.fcol.size() * sizeof(float), cudaMemcpyHostToDevice, s));
  } else if (tile_arith == convolve_tile::Arith::ExactFloat) {
    float exact[kMaxTaps];  // |t| < 2^24: exact; on the stack, no allocation a frame
    std::copy(plan.itaps.begin(), plan.itaps.end(), exact);
    CUDAFX_CUDA_TRY(cudaMemcpyAsync(dev_ftaps, exact, n * sizeof(float),
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
                                        sp.height, cudaMemcpyDefault, s));  // device or mapped host memory
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
    a.division = ConvolveDivision(plan.idivisor, plan.ioffset);
    a.foffset = plan.foffset;
    a.itaps = dev_itaps;
    a.row_taps = plan.integer ? static_cast<const void*>(dev_itaps) : dev_ftaps;
    a.col_taps =
        plan.integer ? static_cast<const void*>(dev_col) : dev_ftaps + kConvolveMaxSize;
    a.mid = dev_mid;
    const int row_values = a.width * a.channels;
    if (mma_applies(plan, i, a)) {
      CUDAFX_TRY(launch_mma(plan, a, dev_fragments, s));
    } else if (two_pass) {
      const dim3 grid((row_values + kThreads - 1) / kThreads, std::min(a.height, 65535));
      if (plan.integer) {
        convolve_rows<int><<<grid, kThreads, 0, s>>>(a);
        convolve_cols<int><<<grid, kThreads, 0, s>>>(a);
      } else {
        convolve_rows<float><<<grid, kThreads, 0, s>>>(a);
        convolve_cols<float><<<grid, kThreads, 0, s>>>(a);
      }
    } else {
      const bool float_taps = tile_arith == convolve_tile::Arith::Float ||
                              tile_arith == convolve_tile::Arith::ExactFloat;
      CUDAFX_TRY(launch_tile(plan, a, tile_arith, tile_bias,
                             float_taps ? static_cast<const void*>(dev_ftaps) : dev_itaps, s));
    }
    CUDAFX_CUDA_TRY(cudaGetLastError());
  }
  return Status::ok();
}

}  // namespace cudafx
