// CUDA backend of the Gaussian op.
//
// Narrow kernels (the tile and its halo fit 48 KB of shared memory; radius up
// to 14 for RGBA, more for fewer channels) run fused: a block loads a
// 32x32-pixel tile plus halo with 16-byte loads, filters the rows into a float
// tile in shared memory, then filters the columns and writes 4-byte words.
// Wider kernels run as two passes through a float scratch image: a horizontal
// pass from a shared-memory row tile, then a vertical pass from a
// shared-memory column tile. Both paths compute every value with
// gaussian_symmetric_sum, as the CPU does, so all three agree bit for bit.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cuda_check.hpp"
#include "cudafx/gaussian.hpp"
#include "cudafx/gaussian_math.hpp"

namespace cudafx {
namespace {

constexpr int kThreads = 256;
constexpr int kTileW = 32;   // fused: output pixels per block row
constexpr int kTileH = 32;   // fused: output rows per block
constexpr int kRowTileW = 64, kRowTileH = 16;   // two-pass horizontal
constexpr int kColTileW = 32, kColTileH = 64;   // two-pass vertical (in values)
constexpr size_t kSharedLimit = 48 * 1024;

struct PlaneArgs {
  const uint8_t* src;
  uint8_t* dst;
  float* mid;            // two-pass scratch, mid_pitch floats a row
  size_t src_pitch, dst_pitch, mid_pitch;
  int width, height, channels;
  int rx, ry;
  BorderMode border;
  float wx[kGaussianMaxRadius + 1];
  float wy[kGaussianMaxRadius + 1];
};

__device__ __forceinline__ int floor_div(int a, int b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// Shared-memory row layout for the source bytes [gx0, gx1) of a row, relative
// to a block's first byte (a multiple of 16): rows start at a 16-byte aligned
// source offset so that every chunk is one aligned vector load. Returns the
// row pitch; *lead is how far gx0 lies past the aligned start. gx1 > 0.
__host__ __device__ inline int span_pitch(int gx0, int gx1, int* lead) {
  const int a0 = gx0 >= 0 ? gx0 / 16 * 16 : -((-gx0 + 15) / 16) * 16;
  const int a1 = (gx1 + 15) / 16 * 16;
  *lead = gx0 - a0;
  return a1 - a0;
}

// Loads `rows` source rows starting at image row `y_first` (rows outside the
// image through the border rule), bytes [a0, a0 + pitch) of each (columns
// outside the row through the border rule too), into `dst` rows `pitch`
// apart. VEC is the width of the aligned loads that the source pointer and
// pitch allow. The whole block shares the work, one chunk an item.
template <int VEC>
__device__ __forceinline__ void load_tile(const PlaneArgs& a, int y_first, int rows, int a0,
                                          int pitch, uint8_t* dst) {
  const int C = a.channels;
  const int row_bytes = a.width * C;
  const int chunks = pitch / VEC;
  for (int item = threadIdx.x; item < rows * chunks; item += blockDim.x) {
    const int r = item / chunks, q = item - r * chunks;
    uint8_t* d = dst + r * pitch + q * VEC;
    const int ys = border_index(y_first + r, a.height, a.border);
    const int g = a0 + q * VEC;
    if (ys < 0) {  // Constant border row
      for (int i = 0; i < VEC; i++)
        d[i] = 0;
      continue;
    }
    const uint8_t* row = a.src + static_cast<size_t>(ys) * a.src_pitch;
    if (g >= 0 && g + VEC <= row_bytes) {
      if constexpr (VEC == 16)
        *reinterpret_cast<uint4*>(d) = __ldg(reinterpret_cast<const uint4*>(row + g));
      else if constexpr (VEC == 4)
        *reinterpret_cast<uint32_t*>(d) = __ldg(reinterpret_cast<const uint32_t*>(row + g));
      else
        *d = __ldg(row + g);
    } else {
      for (int i = 0; i < VEC; i++) {
        const int gi = g + i;
        const int x = floor_div(gi, C);
        const int xs = border_index(x, a.width, a.border);
        d[i] = xs < 0 ? 0 : __ldg(row + xs * C + (gi - x * C));
      }
    }
  }
}

// Horizontal sum for output value `o` of a span whose centre byte for o is
// in[o + off].
__device__ __forceinline__ float row_value(const PlaneArgs& a, const uint8_t* in, int idx) {
  const int C = a.channels;
  return gaussian_symmetric_sum(a.wx, a.rx, static_cast<float>(in[idx]), [&](int k) {
    return static_cast<float>(in[idx - k * C] + in[idx + k * C]);
  });
}

// Vertical sum for a column of floats at `centre` (rows `stride` apart).
__device__ __forceinline__ float col_value(const PlaneArgs& a, const float* centre, int stride) {
  return gaussian_symmetric_sum(a.wy, a.ry, centre[0], [&](int k) {
    return add_rn(centre[-k * stride], centre[k * stride]);
  });
}

// col_value for four adjacent columns at once, with float4 shared-memory
// reads; per component exactly gaussian_symmetric_sum's sequence.
__device__ __forceinline__ float4 col_value4(const PlaneArgs& a, const float* centre, int stride) {
  const float4 c = *reinterpret_cast<const float4*>(centre);
  const float w0 = a.wy[0];
  float4 acc = make_float4(mul_rn(w0, c.x), mul_rn(w0, c.y), mul_rn(w0, c.z), mul_rn(w0, c.w));
  for (int k = 1; k <= a.ry; k++) {
    const float wk = a.wy[k];
    const float4 u = *reinterpret_cast<const float4*>(centre - k * stride);
    const float4 d = *reinterpret_cast<const float4*>(centre + k * stride);
    acc.x = add_rn(acc.x, mul_rn(wk, add_rn(u.x, d.x)));
    acc.y = add_rn(acc.y, mul_rn(wk, add_rn(u.y, d.y)));
    acc.z = add_rn(acc.z, mul_rn(wk, add_rn(u.z, d.z)));
    acc.w = add_rn(acc.w, mul_rn(wk, add_rn(u.w, d.w)));
  }
  return acc;
}

__device__ __forceinline__ void store4(const PlaneArgs& a, int y, int gb, const uint8_t v[4],
                                       bool aligned) {
  uint8_t* out = a.dst + static_cast<size_t>(y) * a.dst_pitch + gb;
  const int row_bytes = a.width * a.channels;
  if (aligned && gb + 4 <= row_bytes) {
    *reinterpret_cast<uint32_t*>(out) =
        v[0] | (v[1] << 8) | (v[2] << 16) | (static_cast<uint32_t>(v[3]) << 24);
  } else {
    for (int i = 0; i < 4 && gb + i < row_bytes; i++)
      out[i] = v[i];
  }
}

template <int VEC>
__global__ void __launch_bounds__(kThreads) gaussian_fused(const __grid_constant__ PlaneArgs a,
                                                          int lead, int in_pitch, int dst_aligned) {
  extern __shared__ __align__(16) uint8_t smem[];
  const int C = a.channels;
  const int rows = kTileH + 2 * a.ry;
  const int tile_vals = kTileW * C;  // output values a tile row
  uint8_t* in_s = smem;
  float* mid_s = reinterpret_cast<float*>(smem + rows * in_pitch);
  const int x0 = blockIdx.x * kTileW, y0 = blockIdx.y * kTileH;
  const int a0 = (x0 - a.rx) * C - lead;

  load_tile<VEC>(a, y0 - a.ry, rows, a0, in_pitch, in_s);
  __syncthreads();

  // Rows: 4 consecutive values an item, stored as one float4.
  const int quads = tile_vals / 4;
  for (int item = threadIdx.x; item < rows * quads; item += kThreads) {
    const int r = item / quads, o = (item - r * quads) * 4;
    const uint8_t* in = in_s + r * in_pitch;
    const int centre = lead + o + a.rx * C;
    float4 v;
    v.x = row_value(a, in, centre);
    v.y = row_value(a, in, centre + 1);
    v.z = row_value(a, in, centre + 2);
    v.w = row_value(a, in, centre + 3);
    reinterpret_cast<float4*>(mid_s + r * tile_vals)[o / 4] = v;
  }
  __syncthreads();

  // Columns: 4 consecutive values an item, written as one 4-byte word.
  for (int item = threadIdx.x; item < kTileH * quads; item += kThreads) {
    const int r = item / quads, o = (item - r * quads) * 4;
    const int y = y0 + r;
    const int gb = x0 * C + o;
    if (y >= a.height || gb >= a.width * C)
      continue;
    const float4 s = col_value4(a, mid_s + (r + a.ry) * tile_vals + o, tile_vals);
    const uint8_t v[4] = {round_to_u8(s.x), round_to_u8(s.y), round_to_u8(s.z), round_to_u8(s.w)};
    store4(a, y, gb, v, dst_aligned);
  }
}

// Two-pass, horizontal: source rows -> float scratch.
template <int VEC>
__global__ void __launch_bounds__(kThreads) gaussian_rows(const __grid_constant__ PlaneArgs a,
                                                         int lead, int in_pitch) {
  extern __shared__ __align__(16) uint8_t smem[];
  const int C = a.channels;
  const int x0 = blockIdx.x * kRowTileW, y0 = blockIdx.y * kRowTileH;
  const int a0 = (x0 - a.rx) * C - lead;
  // Rows past the bottom are loaded (replicated) but never stored.
  load_tile<VEC>(a, y0, kRowTileH, a0, in_pitch, smem);
  __syncthreads();
  const int tile_vals = kRowTileW * C;
  const int row_vals = a.width * C;
  for (int item = threadIdx.x; item < kRowTileH * tile_vals; item += kThreads) {
    const int r = item / tile_vals, o = item - r * tile_vals;
    const int y = y0 + r, gv = x0 * C + o;
    if (y >= a.height || gv >= row_vals)
      continue;
    a.mid[static_cast<size_t>(y) * a.mid_pitch + gv] =
        row_value(a, smem + r * in_pitch, lead + o + a.rx * C);
  }
}

// Two-pass, vertical: float scratch -> destination bytes.
__global__ void __launch_bounds__(kThreads) gaussian_cols(const __grid_constant__ PlaneArgs a) {
  extern __shared__ __align__(16) uint8_t smem[];
  float* col_s = reinterpret_cast<float*>(smem);
  const int rows = kColTileH + 2 * a.ry;
  const int v0 = blockIdx.x * kColTileW, y0 = blockIdx.y * kColTileH;
  const int row_vals = a.width * a.channels;
  const int lane = threadIdx.x % kColTileW, ty = threadIdx.x / kColTileW;
  const int ty_n = kThreads / kColTileW;
  const int v = v0 + lane;
  for (int r = ty; r < rows; r += ty_n) {
    const int ys = border_index(y0 - a.ry + r, a.height, a.border);
    col_s[r * kColTileW + lane] =
        (ys < 0 || v >= row_vals) ? 0.0f : a.mid[static_cast<size_t>(ys) * a.mid_pitch + v];
  }
  __syncthreads();
  if (v >= row_vals)
    return;
  for (int r = ty; r < kColTileH && y0 + r < a.height; r += ty_n) {
    const float s = col_value(a, col_s + (r + a.ry) * kColTileW + lane, kColTileW);
    a.dst[static_cast<size_t>(y0 + r) * a.dst_pitch + v] = round_to_u8(s);
  }
}

int vec_width(const void* p, size_t pitch) {
  const uintptr_t u = reinterpret_cast<uintptr_t>(p);
  if (u % 16 == 0 && pitch % 16 == 0)
    return 16;
  if (u % 4 == 0 && pitch % 4 == 0)
    return 4;
  return 1;
}

struct FusedShape {
  int lead, in_pitch;
  size_t shared;
};

FusedShape fused_shape(int C, int rx, int ry) {
  FusedShape s;
  // Every block starts at x0 = 32k, and 32*C bytes is a multiple of 16, so
  // the lead of the span is the same for all blocks.
  s.in_pitch = span_pitch(-rx * C, (kTileW + rx) * C, &s.lead);
  const int rows = kTileH + 2 * ry;
  s.shared = static_cast<size_t>(rows) * s.in_pitch +
             static_cast<size_t>(rows) * kTileW * C * sizeof(float);
  return s;
}

bool plane_is_fused(const GaussianPlanePlan& p) {
  return fused_shape(p.layout.channels, p.x.radius, p.y.radius).shared <= kSharedLimit;
}

size_t mid_pitch_floats(const GaussianPlanePlan& p) {
  return (static_cast<size_t>(p.width) * p.layout.channels + 3) / 4 * 4;
}

}  // namespace

size_t gaussian_cuda_scratch_bytes(const GaussianPlan& plan) {
  size_t most = 0;
  for (int i = 0; i < plan.n_planes; i++) {
    const GaussianPlanePlan& p = plan.planes[i];
    if (!plane_is_fused(p))
      most = std::max(most, mid_pitch_floats(p) * p.height * sizeof(float));
  }
  return most;
}

Status gaussian_cuda(const GaussianPlan& plan, const ImageView& src, const ImageView& dst,
                     void* scratch, size_t scratch_bytes, StreamHandle stream) {
  CUDAFX_TRY(validate_view(src, plan.desc, "gaussian source"));
  CUDAFX_TRY(validate_view(dst, plan.desc, "gaussian destination"));
  if (scratch_bytes < gaussian_cuda_scratch_bytes(plan))
    return Status::invalid("gaussian: device scratch smaller than the plan needs");
  cudaStream_t s = stream;
  for (int i = 0; i < plan.n_planes; i++) {
    const GaussianPlanePlan& p = plan.planes[i];
    const PlaneView sp = src.plane(i), dp = dst.plane(i);
    PlaneArgs a;
    a.src = sp.data;
    a.dst = dp.data;
    a.mid = static_cast<float*>(scratch);
    a.src_pitch = sp.pitch;
    a.dst_pitch = dp.pitch;
    a.mid_pitch = mid_pitch_floats(p);
    a.width = p.width;
    a.height = p.height;
    a.channels = p.layout.channels;
    a.rx = p.x.radius;
    a.ry = p.y.radius;
    a.border = plan.border;
    std::copy(p.x.w.begin(), p.x.w.end(), a.wx);
    std::copy(p.y.w.begin(), p.y.w.end(), a.wy);
    const int C = a.channels;
    const int vec = vec_width(sp.data, sp.pitch);

    if (plane_is_fused(p)) {
      const FusedShape f = fused_shape(C, a.rx, a.ry);
      const dim3 grid((p.width + kTileW - 1) / kTileW, (p.height + kTileH - 1) / kTileH);
      const int dst_aligned = vec_width(dp.data, dp.pitch) >= 4;
      auto k = vec == 16 ? gaussian_fused<16> : (vec == 4 ? gaussian_fused<4> : gaussian_fused<1>);
      k<<<grid, kThreads, f.shared, s>>>(a, f.lead, f.in_pitch, dst_aligned);
    } else {
      int lead = 0;
      const int in_pitch = span_pitch(-a.rx * C, (kRowTileW + a.rx) * C, &lead);
      const size_t shared = static_cast<size_t>(kRowTileH) * in_pitch;
      const dim3 grid_r((p.width + kRowTileW - 1) / kRowTileW,
                        (p.height + kRowTileH - 1) / kRowTileH);
      auto kr = vec == 16 ? gaussian_rows<16> : (vec == 4 ? gaussian_rows<4> : gaussian_rows<1>);
      kr<<<grid_r, kThreads, shared, s>>>(a, lead, in_pitch);
      const int vals = p.width * C;
      const dim3 grid_c((vals + kColTileW - 1) / kColTileW,
                        (p.height + kColTileH - 1) / kColTileH);
      const size_t shared_c = static_cast<size_t>(kColTileH + 2 * a.ry) * kColTileW * sizeof(float);
      gaussian_cols<<<grid_c, kThreads, shared_c, s>>>(a);
    }
    CUDAFX_CUDA_TRY(cudaGetLastError());
  }
  return Status::ok();
}

}  // namespace cudafx
