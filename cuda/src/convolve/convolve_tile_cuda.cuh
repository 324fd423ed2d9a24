// The tiled 2D convolution kernel of the CUDA backend (convolve_cuda.cu
// launches it). A block of 32 x 8 threads makes a tile of 128 bytes x 32
// rows of a plane's row bytes: it loads the source bytes the tile reads
// (the border rule applied once a pixel, at the load) and the taps into
// shared memory, then each thread makes 4 consecutive bytes of 4
// consecutive rows. Source row r of the thread's window feeds output row
// q through kernel row r - q, so every source word is read and unpacked
// once a thread for all four rows. Each output value gets its taps in
// row-major order from the first (the float path's fma order, convolve.hpp).
//
// Arithmetics:
//  - Packed: integer taps with 255 * sum|t| <= 65535. Bytes 0 and 2 of a
//    word (and 1 and 3) share a 32-bit accumulator as two 16-bit halves
//    that start at B = 255 * sum|negative taps|: each half's running sum
//    stays within [B - 255 sum|t<0|, B + 255 sum|t>0|] = [0, 255 sum|t|],
//    so no half borrows from or carries into the other, in any order; one
//    IMAD a tap serves two bytes. Each half minus B is the exact sum.
//  - Exact float: other integer taps with 255 * sum|t| < 2^24: every
//    partial sum is an integer below 2^24, exact in float, and fma runs at
//    twice the rate of a 32-bit integer multiply-add; the sum converted
//    back is the exact integer sum.
//  - Int: the rest (sum|t| <= 2^23), a 32-bit sum a byte.
//  - Float: fma_rn(w, v, acc), as the CPU backend.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "convolve/convolve_plane_args.hpp"
#include "cudafx/border.hpp"
#include "cudafx/convolve_math.hpp"
#include "cudafx/hd.hpp"

namespace cudafx {
namespace convolve_tile {

constexpr int kThreadsX = 32, kThreadsY = 8;
constexpr int kBytesX = 4;                       // a thread's bytes of a row
constexpr int kRowsY = 4;                        // a thread's rows
constexpr int kTileBytes = kThreadsX * kBytesX;  // 128
constexpr int kTileRows = kThreadsY * kRowsY;    // 32

enum class Arith { Packed, ExactFloat, Int, Float };

struct Args : ConvolvePlaneArgs {
  ConvolveDivision division;  // integer paths: s -> byte
  int bias;                   // packed: B
  float foffset;
  const void* taps;  // device: kw * kh ints, or floats (Float, ExactFloat)
  int row_stride;    // shared bytes a tile row (a multiple of 4)
};

// Shared bytes the kernel needs: the source tile, then the taps.
inline size_t shared_bytes(int kw, int kh, int channels, int* row_stride) {
  // + 4: the funnel shift of the last word reads one word past it
  *row_stride = (kTileBytes + (kw - 1) * channels + 3) / 4 * 4 + 4;
  return static_cast<size_t>(*row_stride) * (kTileRows + kh - 1) + 4 * kw * kh;
}

// The 4 source bytes of a row starting at byte `at` of the shared row.
template <int C>
__device__ __forceinline__ uint32_t word_at(const uint8_t* row, int at) {
  if (C == 4)  // at is a multiple of 4
    return *reinterpret_cast<const uint32_t*>(row + at);
  const uint32_t* w = reinterpret_cast<const uint32_t*>(row + (at & ~3));
  return __funnelshift_r(w[0], w[1], 8 * (at & 3));
}

// A source word unpacked once for every row it feeds: packed, bytes 0+2
// and 1+3 in 16-bit halves; else four values (float: 2^23 + byte built
// with one byte permute, minus 2^23: exact, and cheaper than a convert).
template <Arith A>
struct Unpacked {
  using V = std::conditional_t<A == Arith::Float || A == Arith::ExactFloat, float, int>;
  V v[4];
  Unpacked() = default;
  __device__ __forceinline__ explicit Unpacked(uint32_t w) {
    if constexpr (A == Arith::Packed) {
      v[0] = static_cast<int>(w & 0x00ff00ffu);
      v[1] = static_cast<int>((w >> 8) & 0x00ff00ffu);
    } else if constexpr (A == Arith::Int) {
#pragma unroll
      for (int c = 0; c < 4; c++)
        v[c] = static_cast<int>((w >> (8 * c)) & 0xffu);
    } else {
#pragma unroll
      for (int c = 0; c < 4; c++)
        v[c] = __uint_as_float(__byte_perm(w, 0x4b000000u, 0x7440u + c)) - 8388608.0f;
    }
  }
};

// One source word's contribution to an output row through tap t.
template <Arith A, class T>
__device__ __forceinline__ void accumulate(T t, const Unpacked<A>& u, int (&ia)[4], float (&fa)[4]) {
  if constexpr (A == Arith::Packed) {
    ia[0] += t * u.v[0];
    ia[1] += t * u.v[1];
  } else if constexpr (A == Arith::Int) {
#pragma unroll
    for (int c = 0; c < 4; c++)
      ia[c] += t * u.v[c];
  } else {
#pragma unroll
    for (int c = 0; c < 4; c++)
      fa[c] = fma_rn(t, u.v[c], fa[c]);
  }
}

// K > 0: a K x K kernel, K known here: the taps live in registers and every
// loop unrolls (no index arithmetic, no per-tap predicates). K = 0: any
// kw x kh, taps read from shared memory.
template <int C, Arith A, int K>
__global__ void __launch_bounds__(kThreadsX* kThreadsY) tile_kernel(const __grid_constant__ Args a) {
  extern __shared__ __align__(16) uint8_t smem[];
  const int rows = kTileRows + a.kh - 1;
  const int n_taps = a.kw * a.kh;
  uint8_t* tile = smem;
  int* itaps = reinterpret_cast<int*>(smem + static_cast<size_t>(a.row_stride) * rows);
  float* ftaps = reinterpret_cast<float*>(itaps);
  const int tid = threadIdx.y * kThreadsX + threadIdx.x;
  const int row_values = a.width * C;
  const int k0 = blockIdx.x * kTileBytes;  // the tile's first byte of a row
  const int y0 = blockIdx.y * kTileRows;
  for (int i = tid; i < n_taps; i += kThreadsX * kThreadsY) {
    if (A == Arith::Float || A == Arith::ExactFloat)
      ftaps[i] = static_cast<const float*>(a.taps)[i];
    else
      itaps[i] = static_cast<const int*>(a.taps)[i];
  }
  // The source bytes: shared byte b of tile row rr is byte m = k0 - ax*C +
  // b of source row y0 - ay + rr, i.e. pixel floor(m / C), byte m mod C,
  // the pixel and the row through the border rule (-1: a zero byte).
  const int span = kTileBytes + (a.kw - 1) * C;
  const int m0 = k0 - a.ax * C;
  // A tile whose bytes all lie inside the row (most of them) copies them
  // as they are, in words where the source is aligned; the others resolve
  // every byte's pixel through the border rule.
  const bool inside = m0 >= 0 && m0 + span <= row_values;
  for (int rr = threadIdx.y; rr < rows; rr += kThreadsY) {
    const int ys = border_index(y0 - a.ay + rr, a.height, a.border);
    const uint8_t* srow = a.src + static_cast<size_t>(ys < 0 ? 0 : ys) * a.src_pitch;
    uint8_t* trow = tile + rr * a.row_stride;
    if (ys < 0) {  // a constant border's row
      for (int b = 4 * threadIdx.x; b < a.row_stride; b += 4 * kThreadsX)
        *reinterpret_cast<uint32_t*>(trow + b) = 0u;
    } else if (inside && (reinterpret_cast<uintptr_t>(srow + m0) & 3u) == 0) {
      const uint8_t* from = srow + m0;
      for (int b = 4 * threadIdx.x; b < a.row_stride; b += 4 * kThreadsX) {
        uint32_t v = 0;
        if (b + 4 <= span) {
          v = __ldg(reinterpret_cast<const uint32_t*>(from + b));
        } else {
          for (int c = 0; c < 4; c++)  // the row's tail and the padding
            v |= b + c < span ? static_cast<uint32_t>(__ldg(from + b + c)) << (8 * c) : 0u;
        }
        *reinterpret_cast<uint32_t*>(trow + b) = v;
      }
    } else if (inside) {
      for (int b = threadIdx.x; b < a.row_stride; b += kThreadsX)
        trow[b] = b < span ? __ldg(srow + m0 + b) : 0;
    } else {
      for (int b = threadIdx.x; b < a.row_stride; b += kThreadsX) {
        if (b >= span) {  // the padding the last funnel shift reads
          trow[b] = 0;
          continue;
        }
        const int m = m0 + b;
        const int px = floor_div(m, C), c = m - px * C;
        const int xs = border_index(px, a.width, a.border);
        trow[b] = xs < 0 ? 0 : __ldg(srow + xs * C + c);
      }
    }
  }
  __syncthreads();
  const int kb = threadIdx.x * kBytesX;  // the thread's first byte in the tile
  const int r0 = threadIdx.y * kRowsY;   // its first row in the tile
  // Accumulators: packed, two a row (bytes 0+2, 1+3); else four a row.
  int ia[kRowsY][4];
  float fa[kRowsY][4];
#pragma unroll
  for (int q = 0; q < kRowsY; q++)
#pragma unroll
    for (int c = 0; c < 4; c++) {
      ia[q][c] = A == Arith::Packed ? (a.bias | a.bias << 16) : 0;
      fa[q][c] = 0.0f;
    }
  constexpr bool kFloatTaps = A == Arith::Float || A == Arith::ExactFloat;
  using Tap = std::conditional_t<kFloatTaps, float, int>;
  const Tap* taps = kFloatTaps ? reinterpret_cast<const Tap*>(ftaps)
                               : reinterpret_cast<const Tap*>(itaps);
  if constexpr (K > 0) {
    Tap t[K][K];
#pragma unroll
    for (int i = 0; i < K; i++)
#pragma unroll
      for (int j = 0; j < K; j++)
        t[i][j] = taps[i * K + j];
#pragma unroll
    for (int r = 0; r < kRowsY + K - 1; r++) {
      const uint8_t* trow = tile + (r0 + r) * a.row_stride;
      Unpacked<A> w[K];
#pragma unroll
      for (int j = 0; j < K; j++)
        w[j] = Unpacked<A>(word_at<C>(trow, kb + j * C));
#pragma unroll
      for (int q = 0; q < kRowsY; q++) {
        if (r - q >= 0 && r - q < K) {
#pragma unroll
          for (int j = 0; j < K; j++)
            accumulate<A>(t[r - q][j], w[j], ia[q], fa[q]);
        }
      }
    }
  } else {
    for (int r = 0; r < kRowsY + a.kh - 1; r++) {
      const uint8_t* trow = tile + (r0 + r) * a.row_stride;
      for (int j = 0; j < a.kw; j++) {
        const Unpacked<A> w(word_at<C>(trow, kb + j * C));
#pragma unroll
        for (int q = 0; q < kRowsY; q++) {
          const int i = r - q;
          if (i >= 0 && i < a.kh)
            accumulate<A>(taps[i * a.kw + j], w, ia[q], fa[q]);
        }
      }
    }
  }
  // The bytes out; a byte of an unfiltered lane keeps the source byte (the
  // tile holds it at row r0 + q + ay, byte kb + c + ax*C). A whole word in
  // one store where the row allows it.
#pragma unroll
  for (int q = 0; q < kRowsY; q++) {
    const int y = y0 + r0 + q;
    if (y >= a.height)
      break;
    uint8_t* out = a.dst + static_cast<size_t>(y) * a.dst_pitch + k0 + kb;
    const uint8_t* centre = tile + (r0 + q + a.ay) * a.row_stride + kb + a.ax * C;
    const int n = min(4, row_values - (k0 + kb));
    if (n <= 0)
      break;
    uint32_t word = 0;
#pragma unroll
    for (int c = 0; c < 4; c++) {
      const int k = k0 + kb + c;
      uint8_t v;
      if (!((a.lanes >> (k % C)) & 1u)) {
        v = centre[c];
      } else if (A == Arith::Packed) {
        const int half = c & 1 ? ia[q][1] : ia[q][0];
        v = a.division.small(((c & 2 ? half >> 16 : half) & 0xffff) - a.bias);
      } else if (A == Arith::Int) {
        v = a.division(ia[q][c]);
      } else if (A == Arith::ExactFloat) {
        v = a.division.small(static_cast<int>(fa[q][c]));
      } else {
        v = convolve_float_result(fa[q][c], a.foffset);
      }
      word |= static_cast<uint32_t>(v) << (8 * c);
    }
    if (n == 4 && (reinterpret_cast<uintptr_t>(out) & 3u) == 0) {
      *reinterpret_cast<uint32_t*>(out) = word;
    } else {
      for (int c = 0; c < n; c++)
        out[c] = static_cast<uint8_t>(word >> (8 * c));
    }
  }
}

}  // namespace convolve_tile
}  // namespace cudafx
