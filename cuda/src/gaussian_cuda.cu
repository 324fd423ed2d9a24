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
// pitch allow. The whole block shares the work, one chunk an item; the
// caller synchronises the block before reading the tile.
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
      if constexpr (VEC == 16) {
#if __CUDA_ARCH__ >= 800
        // Asynchronous copy: every chunk of the tile is in flight at once
        // instead of one load-then-store round trip per loop iteration.
        const unsigned sd = static_cast<unsigned>(__cvta_generic_to_shared(d));
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sd), "l"(row + g));
#else
        *reinterpret_cast<uint4*>(d) = __ldg(reinterpret_cast<const uint4*>(row + g));
#endif
      } else if constexpr (VEC == 4)
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
#if __CUDA_ARCH__ >= 800
  if constexpr (VEC == 16)
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
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
    acc.x = fma_rn(wk, add_rn(u.x, d.x), acc.x);
    acc.y = fma_rn(wk, add_rn(u.y, d.y), acc.y);
    acc.z = fma_rn(wk, add_rn(u.z, d.z), acc.z);
    acc.w = fma_rn(wk, add_rn(u.w, d.w), acc.w);
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

// ---- Strip kernel: small radii (both <= kStripMaxRadius) ----
//
// A block loads a tile of 8 * seg rows (plus halo) into shared memory once;
// each warp then slides down its own seg rows, one thread per 4 output values
// of a row: it filters each source row horizontally into registers and keeps
// the last 2R+1 of them there, so the vertical pass needs no shared memory
// and the block synchronises once. R is a template parameter (taps beyond
// the plane's own radius have weight 0, which leaves sums bit-identical), so
// the window lives in registers.
constexpr int kStripMaxRadius = 4;
constexpr int kStripWarps = 4;  // a block: 4 warps, each sliding down its own rows
constexpr int kStripThreads = kStripWarps * 32;

__host__ __device__ constexpr int strip_width(int C) { return C == 1 ? 128 : (C == 2 ? 64 : 32); }

// Integer x (< 2^16) in the low half of a word, or the high half (HI), to
// float without a conversion instruction (those run at a quarter of the
// rate): 2^23 + x assembled in the bits, then 2^23 subtracted exactly.
template <bool HI>
__device__ __forceinline__ float u16_to_float(uint32_t w) {
  return __fsub_rn(__uint_as_float(__byte_perm(w, 0x4B000000u, HI ? 0x7432 : 0x7410)), 8388608.0f);
}
// Byte i of w to float, likewise.
template <int I>
__device__ __forceinline__ float u8_to_float(uint32_t w) {
  return __fsub_rn(__uint_as_float(__byte_perm(w, 0x4B000000u, 0x7440 | I)), 8388608.0f);
}

// Four consecutive bytes of shared memory starting at byte `off` (any
// alignment), as one word.
template <int C>
__device__ __forceinline__ uint32_t window4(const uint8_t* row, int off) {
  const uint32_t* w = reinterpret_cast<const uint32_t*>(row);
  if constexpr (C == 4) {
    return w[off >> 2];  // every offset is a multiple of 4 for 4-byte pixels
  } else {
    return __funnelshift_r(w[off >> 2], w[(off >> 2) + 1], (off & 3) * 8);
  }
}

// The horizontal sums of four values whose centre bytes start at `off`.
template <int C, int R>
__device__ __forceinline__ float4 strip_row(const uint8_t* row, int off, const float* wx) {
  const uint32_t c = window4<C>(row, off);
  float4 acc = make_float4(mul_rn(wx[0], u8_to_float<0>(c)), mul_rn(wx[0], u8_to_float<1>(c)),
                           mul_rn(wx[0], u8_to_float<2>(c)), mul_rn(wx[0], u8_to_float<3>(c)));
#pragma unroll
  for (int k = 1; k <= R; k++) {
    const uint32_t l = window4<C>(row, off - k * C), r = window4<C>(row, off + k * C);
    // Byte pairs as 16-bit lanes: the sums (<= 510) cannot carry across.
    const uint32_t lo = __byte_perm(l, 0, 0x4140) + __byte_perm(r, 0, 0x4140);
    const uint32_t hi = __byte_perm(l, 0, 0x4342) + __byte_perm(r, 0, 0x4342);
    const float wk = wx[k];
    acc.x = fma_rn(wk, u16_to_float<false>(lo), acc.x);
    acc.y = fma_rn(wk, u16_to_float<true>(lo), acc.y);
    acc.z = fma_rn(wk, u16_to_float<false>(hi), acc.z);
    acc.w = fma_rn(wk, u16_to_float<true>(hi), acc.w);
  }
  return acc;
}

template <int C, int R>
__global__ void __launch_bounds__(kStripThreads) gaussian_strip(const __grid_constant__ PlaneArgs a,
                                                          int lead, int in_pitch, int seg, int vec,
                                                          int dst_aligned) {
  extern __shared__ __align__(16) uint8_t smem[];
  constexpr int TW = strip_width(C);
  constexpr int kWords = TW * C / 4;  // 4-value groups in a tile row (<= 32)
  const int x0 = blockIdx.x * TW, y0 = blockIdx.y * kStripWarps * seg;
  const int rows = kStripWarps * seg + 2 * R;
  const int a0 = (x0 - R) * C - lead;
  if (vec == 16)
    load_tile<16>(a, y0 - R, rows, a0, in_pitch, smem);
  else if (vec == 4)
    load_tile<4>(a, y0 - R, rows, a0, in_pitch, smem);
  else
    load_tile<1>(a, y0 - R, rows, a0, in_pitch, smem);
  __syncthreads();

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane >= kWords)
    return;
  // Taps padded with zeros up to R on both axes.
  float wx[R + 1], wy[R + 1];
#pragma unroll
  for (int k = 0; k <= R; k++) {
    wx[k] = k <= a.rx ? a.wx[k] : 0.0f;
    wy[k] = k <= a.ry ? a.wy[k] : 0.0f;
  }
  const int o = lane * 4;                 // first value of this thread in a row
  const int off = lead + o + R * C;       // its centre byte in a shared row
  const int gb = x0 * C + o;              // its byte in a destination row
  const int row_bytes = a.width * C;
  if (gb >= row_bytes)
    return;
  const int r0 = warp * seg;              // first output row of this warp (tile)
  const int n = min(seg, a.height - (y0 + r0));
  const bool full_word = dst_aligned && gb + 4 <= row_bytes;
  uint8_t* out = a.dst + static_cast<size_t>(y0 + r0) * a.dst_pitch + gb;
  const uint8_t* in = smem + r0 * in_pitch;
  float4 h[2 * R + 1];
#pragma unroll
  for (int i = 0; i < 2 * R; i++, in += in_pitch)
    h[i] = strip_row<C, R>(in, off, wx);
  for (int r = 0; r < n; r++, in += in_pitch, out += a.dst_pitch) {
    h[2 * R] = strip_row<C, R>(in, off, wx);
    float4 v = make_float4(mul_rn(wy[0], h[R].x), mul_rn(wy[0], h[R].y),
                           mul_rn(wy[0], h[R].z), mul_rn(wy[0], h[R].w));
#pragma unroll
    for (int k = 1; k <= R; k++) {
      v.x = fma_rn(wy[k], add_rn(h[R - k].x, h[R + k].x), v.x);
      v.y = fma_rn(wy[k], add_rn(h[R - k].y, h[R + k].y), v.y);
      v.z = fma_rn(wy[k], add_rn(h[R - k].z, h[R + k].z), v.z);
      v.w = fma_rn(wy[k], add_rn(h[R - k].w, h[R + k].w), v.w);
    }
    // Low bytes of the four rounded floats, packed into one word.
    const uint32_t word = __byte_perm(__byte_perm(rounded_bits(v.x), rounded_bits(v.y), 0x0040),
                                      __byte_perm(rounded_bits(v.z), rounded_bits(v.w), 0x0040),
                                      0x5410);
    if (full_word) {
      *reinterpret_cast<uint32_t*>(out) = word;
    } else {
      for (int i = 0; i < 4 && gb + i < row_bytes; i++)
        out[i] = static_cast<uint8_t>(word >> (8 * i));
    }
#pragma unroll
    for (int i = 0; i < 2 * R; i++)
      h[i] = h[i + 1];
  }
}

struct StripShape {
  int lead, in_pitch, seg;
  size_t shared;
  dim3 grid;
};

StripShape strip_shape(int C, int R, int width, int height) {
  StripShape s;
  const int tw = strip_width(C);
  s.in_pitch = span_pitch(-R * C, (tw + R) * C, &s.lead);
  // Taller tiles amortise the halo rows, more tiles keep the GPU evenly
  // busy. Measured at 2160p on an H200 (5x5): 4 warps a block with 8 rows a
  // warp is best; 16 rows +10% time, 4 rows +13%; 8 warps a block +4%,
  // 2 warps +9%. Small frames go shorter to spread over every SM.
  const unsigned gx = (width + tw - 1) / tw;
  for (s.seg = 8; s.seg > 2; s.seg /= 2) {
    const unsigned gy = (height + kStripWarps * s.seg - 1) / (kStripWarps * s.seg);
    if (gx * gy >= 1024)
      break;
  }
  s.grid = dim3(gx, (height + kStripWarps * s.seg - 1) / (kStripWarps * s.seg));
  // +16: window4 may read one word past a row's last needed byte.
  s.shared = static_cast<size_t>(kStripWarps * s.seg + 2 * R) * s.in_pitch + 16;
  return s;
}

template <int C>
void launch_strip_c(int R, const StripShape& sh, cudaStream_t s, const PlaneArgs& a, int vec,
                    int dst_aligned) {
  switch (R) {
    case 1: gaussian_strip<C, 1><<<sh.grid, kStripThreads, sh.shared, s>>>(a, sh.lead, sh.in_pitch, sh.seg, vec, dst_aligned); break;
    case 2: gaussian_strip<C, 2><<<sh.grid, kStripThreads, sh.shared, s>>>(a, sh.lead, sh.in_pitch, sh.seg, vec, dst_aligned); break;
    case 3: gaussian_strip<C, 3><<<sh.grid, kStripThreads, sh.shared, s>>>(a, sh.lead, sh.in_pitch, sh.seg, vec, dst_aligned); break;
    default: gaussian_strip<C, 4><<<sh.grid, kStripThreads, sh.shared, s>>>(a, sh.lead, sh.in_pitch, sh.seg, vec, dst_aligned); break;
  }
}

void launch_strip(const PlaneArgs& a, int vec, int dst_aligned, cudaStream_t s) {
  const int R = std::max(std::max(a.rx, a.ry), 1);
  const StripShape sh = strip_shape(a.channels, R, a.width, a.height);
  switch (a.channels) {
    case 1: launch_strip_c<1>(R, sh, s, a, vec, dst_aligned); break;
    case 2: launch_strip_c<2>(R, sh, s, a, vec, dst_aligned); break;
    case 3: launch_strip_c<3>(R, sh, s, a, vec, dst_aligned); break;
    default: launch_strip_c<4>(R, sh, s, a, vec, dst_aligned); break;
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

    if (std::max(a.rx, a.ry) <= kStripMaxRadius) {
      launch_strip(a, vec, vec_width(dp.data, dp.pitch) >= 4, s);
    } else if (plane_is_fused(p)) {
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
