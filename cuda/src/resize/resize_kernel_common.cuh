// What the resize kernels share (resize_cuda.cu, resize_periodic.cuh): the
// per-plane launch arguments, a thread's run of output pixels and rows, and
// the stores and integer dot products every kernel uses.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/pack_bytes.cuh"
#include "cudafx/resize.hpp"

namespace cudafx {
namespace resize_kernels {

constexpr int kBlockX = 32, kBlockY = 4;  // a block: 4 warps, one per row strip

struct PlaneArgs {
  const uint8_t* src;
  uint8_t* dst;
  size_t src_pitch, dst_pitch;
  int src_w, src_h, dst_w, dst_h;
  const ResizeTap* xt;
  const ResizeTap* yt;
  int seg;          // output rows a thread
  int dst_aligned;  // dst pointer and pitch multiples of 16
  // A periodic plane (ResizeAxis::period, resize_periodic.cuh): with fixed
  // weights, phase j's x weights as the pairs dp2a takes (taps 0-1, 2-3) and
  // its y weights; otherwise each sample's on its window.
  uint32_t period_xw[kResizeMaxPeriod][2];
  int32_t period_yw[kResizeMaxPeriod][kResizeMaxTaps];
  const ResizeTap* period_xt;
  const ResizeTap* period_yt;
};

// Pixels a thread produces in a row.
// Nearest: 16 bytes of 4- and 2-byte pixels, 16 pixels of 1- and 3-byte
// ones. (8 RGBA pixels a thread measured 60 % slower at 2160p on an H200:
// fewer threads hide the gathers' latency worse.)
__host__ __device__ constexpr int nearest_px(int C) { return C == 4 ? 4 : (C == 2 ? 8 : 16); }
__host__ __device__ constexpr int filter_px(int C) { return C == 1 ? 8 : 4; }

// Packs the low bytes of four words.
__device__ __forceinline__ uint32_t pack4(uint32_t b0, uint32_t b1, uint32_t b2, uint32_t b3) {
  return __byte_perm(__byte_perm(b0, b1, 0x0040), __byte_perm(b2, b3, 0x0040), 0x5410);
}

// Four vertical sums (resize_math.hpp: sum of weight(k) * value(k, q) over
// the T rows k, for values q = 0..3), each rounded as resize_finish, packed
// into a word: saturated where the weights may overshoot (bicubic), plainly
// where they cannot (non-negative weights summing to one).
template <int T, bool SATURATE, class Weight, class Value>
__device__ __forceinline__ uint32_t vertical_word(Weight weight, Value value) {
  int32_t r[4];
#pragma unroll
  for (int q = 0; q < 4; q++) {
    int32_t v = 1 << 21;
#pragma unroll
    for (int k = 0; k < T; k++)
      v += weight(k) * value(k, q);
    r[q] = v >> 22;
  }
  return SATURATE ? pack4_saturated(r[0], r[1], r[2], r[3]) : pack4(r[0], r[1], r[2], r[3]);
}

// Stores the first `n` of the B bytes in `w` at `out`: whole vectors when the
// run is complete and aligned (the common case), bytes at a ragged edge.
// Vector stores are streaming (evict-first): the frame is written once and
// not read back here, and keeping it out of L2's way made the 2160p
// upscales 5-11 % faster on an H200.
template <int B>
__device__ __forceinline__ void store_run(uint8_t* out, const uint32_t (&w)[B / 4], int n,
                                          bool aligned) {
  if (aligned && n == B) {
    if constexpr (B % 16 == 0) {
#pragma unroll
      for (int i = 0; i < B / 16; i++)
        __stcs(reinterpret_cast<uint4*>(out) + i,
               make_uint4(w[4 * i], w[4 * i + 1], w[4 * i + 2], w[4 * i + 3]));
    } else if constexpr (B % 8 == 0) {
#pragma unroll
      for (int i = 0; i < B / 8; i++)
        __stcs(reinterpret_cast<uint2*>(out) + i, make_uint2(w[2 * i], w[2 * i + 1]));
    } else {
#pragma unroll
      for (int i = 0; i < B / 4; i++)
        __stcs(reinterpret_cast<unsigned int*>(out) + i, w[i]);
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < B; i++)
    if (i < n)
      out[i] = static_cast<uint8_t>(w[i / 4] >> (8 * (i % 4)));
}

struct ThreadRun {
  int x0, y0, y1;
};

__device__ __forceinline__ bool thread_run(const PlaneArgs& a, int px, ThreadRun* r) {
  r->x0 = (blockIdx.x * kBlockX + threadIdx.x) * px;
  r->y0 = (blockIdx.y * kBlockY + threadIdx.y) * a.seg;
  r->y1 = min(r->y0 + a.seg, a.dst_h);
  return r->x0 < a.dst_w && r->y0 < r->y1;
}

// c + lo16(w) * byte0(b) + hi16(w) * byte1(b): two taps of one channel in one
// instruction (weights signed 16-bit, bytes unsigned), exact in int32.
__device__ __forceinline__ int32_t dot2(uint32_t w, uint32_t b, int32_t c) {
  int32_t d;
  asm("dp2a.lo.s32.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(w), "r"(b), "r"(c));
  return d;
}

}  // namespace resize_kernels
}  // namespace cudafx
