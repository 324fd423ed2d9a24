// CUDA backend of the Gaussian op. Planes in fixed point run the kernel of
// gaussian_fixed_cuda.cu; planes in float one of three kernels, by radius:
//
// - Small radii (both <= 4: 3x3 ... 9x9, the common blurs): one kernel that
//   filters each source row of a tile once into shared memory and slides a
//   register window down the columns (gaussian_small, below).
// - Narrow kernels (the tile and its halo fit 48 KB of shared memory; radius
//   up to 14 for RGBA, more for fewer channels) run fused: a block loads a
//   32x32-pixel tile plus halo with 16-byte loads, filters the rows into a
//   float tile in shared memory, then filters the columns and writes 4-byte
//   words.
// - Wider kernels run as two passes through a float scratch image: a
//   horizontal pass from a shared-memory row tile, then a vertical pass from
//   a shared-memory column tile.
// All compute every value with gaussian_symmetric_sum's sequence of roundings,
// as the CPU does, so they agree with it bit for bit.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "common/cuda_check.hpp"
#include "cudafx/gaussian.hpp"
#include "cudafx/gaussian_math.hpp"
#include "gaussian/gaussian_fixed.hpp"

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

// Shared-memory row layout for the source bytes [gx0, gx1) of a row, relative
// to a block's first byte (a multiple of 16): rows start at a 16-byte aligned
// source offset so that every chunk is one aligned vector load. Returns the
// row pitch; *lead is how far gx0 lies past the aligned start. gx1 > 0.
__host__ __device__ constexpr int span_start(int gx0) {
  return gx0 >= 0 ? gx0 / 16 * 16 : -((-gx0 + 15) / 16) * 16;
}
__host__ __device__ constexpr int span_pitch(int gx0, int gx1) {
  return (gx1 + 15) / 16 * 16 - span_start(gx0);
}
__host__ __device__ inline int span_pitch(int gx0, int gx1, int* lead) {
  *lead = gx0 - span_start(gx0);
  return span_pitch(gx0, gx1);
}

// Copies bytes [g, g + VEC) of source row ys (-1: a constant-border row) to
// shared memory at d; bytes outside the row through the border rule. VEC is
// the width of the aligned loads that the source pointer and pitch allow.
template <int VEC>
__device__ __forceinline__ void load_chunk(const PlaneArgs& a, int ys, int g, uint8_t* d) {
  const int C = a.channels;
  if (ys < 0) {
    for (int i = 0; i < VEC; i++)
      d[i] = 0;
    return;
  }
  const uint8_t* row = a.src + static_cast<size_t>(ys) * a.src_pitch;
  if (g >= 0 && g + VEC <= a.width * C) {
    if constexpr (VEC == 16) {
#if __CUDA_ARCH__ >= 800
      // Asynchronous copy: every chunk of the tile is in flight at once
      // instead of one load-then-store round trip per loop iteration.
      const unsigned sd = static_cast<unsigned>(__cvta_generic_to_shared(d));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sd), "l"(row + g));
#else
      *reinterpret_cast<uint4*>(d) = __ldg(reinterpret_cast<const uint4*>(row + g));
#endif
    } else if constexpr (VEC == 4) {
      *reinterpret_cast<uint32_t*>(d) = __ldg(reinterpret_cast<const uint32_t*>(row + g));
    } else {
      *d = __ldg(row + g);
    }
  } else {
    for (int i = 0; i < VEC; i++) {
      const int gi = g + i;
      const int x = floor_div(gi, C);
      const int xs = border_index(x, a.width, a.border);
      d[i] = xs < 0 ? 0 : __ldg(row + xs * C + (gi - x * C));
    }
  }
}

template <int VEC>
__device__ __forceinline__ void load_wait() {
#if __CUDA_ARCH__ >= 800
  if constexpr (VEC == 16)
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

// Loads `rows` source rows starting at image row `y_first` (rows outside the
// image through the border rule), bytes [a0, a0 + pitch) of each, into `dst`
// rows `pitch` apart. The whole block shares the work, one chunk an item;
// the caller synchronises the block before reading the tile.
template <int VEC>
__device__ __forceinline__ void load_tile(const PlaneArgs& a, int y_first, int rows, int a0,
                                          int pitch, uint8_t* dst) {
  const int chunks = pitch / VEC;
  for (int item = threadIdx.x; item < rows * chunks; item += blockDim.x) {
    const int r = item / chunks, q = item - r * chunks;
    load_chunk<VEC>(a, border_index(y_first + r, a.height, a.border), a0 + q * VEC,
                    dst + r * pitch + q * VEC);
  }
  load_wait<VEC>();
}

// load_tile for a block of THREADS threads and a pitch known at compile
// time: each thread keeps one chunk column and walks down the rows, so an
// item is a border lookup, an address and a copy (the generic loop's split
// of an item into row and chunk cost as much as the copy).
template <int VEC, int PITCH, int THREADS>
__device__ __forceinline__ void load_tile_fixed(const PlaneArgs& a, int y_first, int rows, int a0,
                                                uint8_t* dst) {
  constexpr int kChunks = PITCH / VEC;
  if constexpr (kChunks > THREADS) {
    load_tile<VEC>(a, y_first, rows, a0, PITCH, dst);
  } else {
    constexpr int kStep = THREADS / kChunks;  // rows a pass
    const int q = threadIdx.x % kChunks, r0 = threadIdx.x / kChunks;
    if (r0 < kStep) {
      const int g = a0 + q * VEC;
      for (int r = r0; r < rows; r += kStep)
        load_chunk<VEC>(a, border_index(y_first + r, a.height, a.border), g,
                        dst + r * PITCH + q * VEC);
    }
    load_wait<VEC>();
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

// ---- Small radii (both <= kSmallMaxRadius: 3x3 ... 9x9) ----
//
// A block of 4 warps owns a tile 128 values wide (32 RGBA pixels, 128 GRAY8)
// and 4 * seg rows tall. It loads the tile's source rows and halo into shared
// memory, filters each of those rows horizontally once into a float tile
// beside them (a thread computes 4 consecutive values of a row, one float4),
// synchronises, and then each warp slides down its own seg output rows,
// holding the 2R+1 float4 of its vertical window in registers.
//
// Why this shape: the horizontal filter is two thirds of the instructions and
// the kernel is issue-bound, so each source row is filtered once a block (the
// earlier kernel let every warp filter its own halo rows to save a
// synchronisation: 1.5x the horizontal work at 8 rows a warp). The row loop
// is unrolled by the window length, so the window rotates by renaming
// registers instead of copying 2R float4 a row. R is a template parameter
// (taps beyond the plane's own radius have weight 0, which leaves the sums
// bit-identical).
constexpr int kSmallMaxRadius = 4;
constexpr int kSmallWarps = 4;
constexpr int kSmallThreads = kSmallWarps * 32;
constexpr int kSmallSeg = 8;  // output rows a warp, at most

__host__ __device__ constexpr int small_tile_width(int C) {
  return C == 1 ? 128 : (C == 2 ? 64 : 32);
}

// Integer x (< 2^16) in the low half of a word, or the high half (HI), to
// float without a conversion instruction (those run at a quarter of the
// rate): 2^23 + x assembled in the bits, then 2^23 subtracted exactly.
template <bool HI>
__device__ __forceinline__ float u16_to_float(uint32_t w) {
  return __fsub_rn(__uint_as_float(__byte_perm(w, 0x4B000000u, HI ? 0x7432 : 0x7410)), 8388608.0f);
}

// mul_rn(w, x) for byte I of c, without converting x: the bits 0x4B0000xx
// are the float 2^23 + x, and fma(w, 2^23 + x, -w * 2^23) is exactly w * x
// before its single rounding (w * 2^23 is exact: a power-of-two scaling).
template <int I>
__device__ __forceinline__ float mul_u8(float w, float neg_w_2p23, uint32_t c) {
  return __fmaf_rn(w, __uint_as_float(__byte_perm(c, 0x4B000000u, 0x7440 | I)), neg_w_2p23);
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

// The horizontal sums of four values whose centre bytes start at `off`:
// gaussian_symmetric_sum for each, operation for operation.
template <int C, int R>
__device__ __forceinline__ float4 small_row(const uint8_t* row, int off, const float* wx,
                                            float neg_w0_2p23) {
  const uint32_t c = window4<C>(row, off);
  float4 acc = make_float4(mul_u8<0>(wx[0], neg_w0_2p23, c), mul_u8<1>(wx[0], neg_w0_2p23, c),
                           mul_u8<2>(wx[0], neg_w0_2p23, c), mul_u8<3>(wx[0], neg_w0_2p23, c));
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

// The vertical sum of a window whose centre is slot `cen` of h (slots taken
// modulo the window length), packed as the four rounded bytes of one word.
// Called from fully unrolled loops only, where `cen` is a constant and h
// stays in registers.
template <int R>
__device__ __forceinline__ uint32_t small_column(const float4 (&h)[2 * R + 1], int cen,
                                                 const float* wy) {
  constexpr int W = 2 * R + 1;
  const float4 c = h[cen % W];
  float4 v = make_float4(mul_rn(wy[0], c.x), mul_rn(wy[0], c.y), mul_rn(wy[0], c.z),
                         mul_rn(wy[0], c.w));
#pragma unroll
  for (int k = 1; k <= R; k++) {
    const float4 u = h[(cen - k + W) % W], d = h[(cen + k) % W];
    v.x = fma_rn(wy[k], add_rn(u.x, d.x), v.x);
    v.y = fma_rn(wy[k], add_rn(u.y, d.y), v.y);
    v.z = fma_rn(wy[k], add_rn(u.z, d.z), v.z);
    v.w = fma_rn(wy[k], add_rn(u.w, d.w), v.w);
  }
  // Low bytes of the four rounded floats, packed into one word.
  return __byte_perm(__byte_perm(rounded_bits(v.x), rounded_bits(v.y), 0x0040),
                     __byte_perm(rounded_bits(v.z), rounded_bits(v.w), 0x0040), 0x5410);
}

// Output rows [0, n) of a warp's column, from the float tile (`col` points at
// this thread's float4 in the window's first row, rows WORDS float4 apart),
// written as 4-byte words (FULL) or bytewise at an unaligned or ragged edge.
// The row loop is unrolled by the window length, so that each row's new
// float4 replaces the oldest by renaming, not by copying 2R float4 a row.
template <int R, int WORDS, bool FULL>
__device__ __forceinline__ void small_columns(const float4* col, int n, uint8_t* out,
                                              size_t pitch, int valid_bytes, const float* wy) {
  constexpr int W = 2 * R + 1;
  float4 h[W];
#pragma unroll
  for (int i = 0; i < 2 * R; i++)
    h[i] = col[i * WORDS];
  col += 2 * R * WORDS;
  for (int base = 0; base < n; base += W) {
#pragma unroll
    for (int j = 0; j < W; j++) {
      if (base + j < n) {
        h[(2 * R + j) % W] = *col;
        col += WORDS;
        const uint32_t word = small_column<R>(h, R + j, wy);
        if constexpr (FULL) {
          *reinterpret_cast<uint32_t*>(out) = word;
        } else {
          for (int i = 0; i < 4 && i < valid_bytes; i++)
            out[i] = static_cast<uint8_t>(word >> (8 * i));
        }
        out += pitch;
      }
    }
  }
}

template <int C, int R>
__global__ void __launch_bounds__(kSmallThreads)
    gaussian_small(const __grid_constant__ PlaneArgs a, int lead, int mid_offset, int seg,
                   int vec, int dst_aligned) {
  extern __shared__ __align__(16) uint8_t smem[];
  constexpr int TW = small_tile_width(C);
  constexpr int kWords = TW * C / 4;  // 4-value groups in a tile row (<= 32)
  constexpr int kPitch = span_pitch(-R * C, (TW + R) * C);  // shared bytes a source row
  const int x0 = blockIdx.x * TW, y0 = blockIdx.y * kSmallWarps * seg;
  const int rows = kSmallWarps * seg + 2 * R;  // source rows of the tile
  const int a0 = (x0 - R) * C - lead;
  float4* mid = reinterpret_cast<float4*>(smem + mid_offset);  // rows x kWords
  if (vec == 16)
    load_tile_fixed<16, kPitch, kSmallThreads>(a, y0 - R, rows, a0, smem);
  else if (vec == 4)
    load_tile_fixed<4, kPitch, kSmallThreads>(a, y0 - R, rows, a0, smem);
  else
    load_tile_fixed<1, kPitch, kSmallThreads>(a, y0 - R, rows, a0, smem);
  __syncthreads();

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int o = lane * 4;            // first value of this thread in a row
  const int gb = x0 * C + o;         // its byte in a destination row
  const int row_bytes = a.width * C;
  const bool active = lane < kWords && gb < row_bytes;
  // Taps past a plane's radius are 0 in a.wx/a.wy (the host zeroes them), so
  // the sums over R taps equal those over the plane's own radius.
  if (active) {
    const float neg_w0_2p23 = -a.wx[0] * 8388608.0f;
    const int off = lead + o + R * C;  // centre byte of the first value in a shared row
    for (int r = warp; r < rows; r += kSmallWarps)
      mid[r * kWords + lane] = small_row<C, R>(smem + r * kPitch, off, a.wx, neg_w0_2p23);
  }
  __syncthreads();
  if (!active)
    return;

  const int r0 = warp * seg;  // first output row of this warp (in the tile)
  const int n = min(seg, a.height - (y0 + r0));
  uint8_t* out = a.dst + static_cast<size_t>(y0 + r0) * a.dst_pitch + gb;
  // Window row i of output row 0 is float tile row r0 + i (the tile starts R
  // rows above the first output row).
  const float4* col = mid + r0 * kWords + lane;
  if (dst_aligned && gb + 4 <= row_bytes)
    small_columns<R, kWords, true>(col, n, out, a.dst_pitch, 4, a.wy);
  else
    small_columns<R, kWords, false>(col, n, out, a.dst_pitch, row_bytes - gb, a.wy);
}

struct SmallShape {
  int lead, in_pitch, seg, mid_offset;  // in_pitch: the kernel's kPitch
  size_t shared;
  dim3 grid;
};

SmallShape small_shape(int C, int R, int width, int height) {
  SmallShape s;
  const int tw = small_tile_width(C);
  s.in_pitch = span_pitch(-R * C, (tw + R) * C, &s.lead);
  // Taller tiles amortise the halo rows, more tiles keep the GPU evenly
  // busy. Measured at 2160p on an H100 (5x5): 8 rows a warp is best (6 rows
  // +4 % time, 10 rows +6 %, 12 rows +13 %, 16 rows +30 %: fewer blocks fit
  // an SM), and 8 warps a block gained nothing (+1 % with 4 rows a warp).
  // Small frames go shorter, to spread over every SM.
  const unsigned gx = (width + tw - 1) / tw;
  for (s.seg = kSmallSeg; s.seg > 2; s.seg /= 2) {
    const unsigned gy = (height + kSmallWarps * s.seg - 1) / (kSmallWarps * s.seg);
    if (gx * gy >= 1024)
      break;
  }
  s.grid = dim3(gx, (height + kSmallWarps * s.seg - 1) / (kSmallWarps * s.seg));
  const int rows = kSmallWarps * s.seg + 2 * R;
  // +16: window4 may read one word past a row's last needed byte.
  s.mid_offset = (rows * s.in_pitch + 16 + 15) / 16 * 16;
  const int words = tw * C / 4;
  s.shared = static_cast<size_t>(s.mid_offset) + static_cast<size_t>(rows) * words * sizeof(float4);
  return s;
}

template <int C>
void launch_small_c(int R, const SmallShape& sh, cudaStream_t s, const PlaneArgs& a, int vec,
                    int dst_aligned) {
#define CUDAFX_SMALL(RR)                                                                     \
  gaussian_small<C, RR><<<sh.grid, kSmallThreads, sh.shared, s>>>(                           \
      a, sh.lead, sh.mid_offset, sh.seg, vec, dst_aligned)
  switch (R) {
    case 1: CUDAFX_SMALL(1); break;
    case 2: CUDAFX_SMALL(2); break;
    case 3: CUDAFX_SMALL(3); break;
    default: CUDAFX_SMALL(4); break;
  }
#undef CUDAFX_SMALL
}

void launch_small(const PlaneArgs& a, int vec, int dst_aligned, cudaStream_t s) {
  const int R = std::max(std::max(a.rx, a.ry), 1);
  const SmallShape sh = small_shape(a.channels, R, a.width, a.height);
  switch (a.channels) {
    case 1: launch_small_c<1>(R, sh, s, a, vec, dst_aligned); break;
    case 2: launch_small_c<2>(R, sh, s, a, vec, dst_aligned); break;
    case 3: launch_small_c<3>(R, sh, s, a, vec, dst_aligned); break;
    default: launch_small_c<4>(R, sh, s, a, vec, dst_aligned); break;
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
    if (!p.fixed && !plane_is_fused(p))
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
    if (p.fixed) {
      CUDAFX_TRY(gaussian_fixed_cuda_plane(p, plan.border, sp, dp, stream));
      continue;
    }
    PlaneArgs a{};  // taps past a radius stay 0: the small-radius kernel reads R of them
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

    if (std::max(a.rx, a.ry) <= kSmallMaxRadius) {
      launch_small(a, vec, vec_width(dp.data, dp.pitch) >= 4, s);
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
