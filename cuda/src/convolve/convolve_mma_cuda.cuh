// The convolution on the integer tensor cores (sm_80 and up): 4-byte pixels
// (RGBA and the like), integer taps within -128..127, kernels up to 17
// wide (any height up to 31). convolve_cuda.cu launches it where it applies;
// the result is the exact integer sum of every output byte, so the bytes are
// the CPU backend's (convolve.hpp's integer rule).
//
// Why the tensor cores: a k x k kernel costs k * k multiply-adds a byte
// (15x15 on 2160p RGBA: 7.5 G), more than the CUDA cores issue in the time
// NPP takes (issue #17: 0.22 ms at the FP32 FMA peak against a 0.147 ms
// target). mma.sync m16n8k32 (u8 x s8 -> s32) does 4 096 a warp instruction.
//
// The product as a matrix one: for kernel row dy and one channel, 8
// consecutive output pixels of 16 rows are
//   D[m][n] += sum_k A[m][k] * B[k][n],
//   A[m][k] = channel byte of source pixel x0 + k of row y0 + m + dy (32 px),
//   B[k][n] = t[dy][k - n - e] where 0 <= k - n - e < kw, else 0,
// a band (Toeplitz) matrix; e = 0 gives outputs x0 .. x0+7 and e = 8 the
// next 8 from the same A (their taps reach pixel x0 + 15 + kw - 1 <= x0 + 31
// for kw <= 17). So a warp makes 16 x 16 pixels: per kernel row and channel
// one A (ldmatrix from a channel plane in shared memory) and two MMAs.
//
// A block of 4 x 2 warps makes 64 pixels x 32 rows. It stages the source
// pixels the tile reads (the border rule applied once a pixel) in four
// channel planes of 80 bytes a row (the last warp's A reads pixels 48..79;
// 80 = 5 x 16 bytes: ldmatrix's eight row addresses fall in distinct banks),
// and each kernel row's two B fragments as every lane holds them.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cudafx/border.hpp"
#include "cudafx/convolve_math.hpp"

namespace cudafx {
namespace convolve_mma {

constexpr int kWarpsX = 4, kWarpsY = 2;
constexpr int kThreads = 32 * kWarpsX * kWarpsY;
constexpr int kTilePx = 16 * kWarpsX;     // 64 pixels
constexpr int kTileRows = 16 * kWarpsY;   // 32 rows
constexpr int kStagePx = kTilePx + 16;    // 80: a staged plane row, bytes
constexpr int kMaxWidth = 17;             // kernel columns
constexpr int kMaxTap = 127;              // |tap|: s8

struct Args {
  const uint8_t* src;
  uint8_t* dst;
  size_t src_pitch, dst_pitch;  // multiples of 4; src and dst 4-byte aligned
  int width, height;            // pixels
  unsigned lanes;               // bit c: byte c of a pixel is filtered
  int kw, kh, ax, ay;
  BorderMode border;
  ConvolveDivision division;
  const int* taps;  // device: kw * kh, each within -128..127
};

inline size_t shared_bytes(int kh) {
  return static_cast<size_t>(4) * (kTileRows + kh - 1) * kStagePx +
         static_cast<size_t>(kh) * 2 * 32 * sizeof(uint2);
}

// Byte c of each of the four pixels w0..w3, as one word (pixel order).
__device__ __forceinline__ uint32_t channel_word(uint32_t w0, uint32_t w1, uint32_t w2,
                                                 uint32_t w3, int c) {
  const uint32_t lo = __byte_perm(w0, w1, c | (c + 4) << 4);
  const uint32_t hi = __byte_perm(w2, w3, c | (c + 4) << 4);
  return __byte_perm(lo, hi, 0x5410);
}

template <bool kSmallSums>
__global__ void __launch_bounds__(kThreads) mma_kernel(const __grid_constant__ Args a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  extern __shared__ __align__(16) uint8_t smem[];
  const int rows = kTileRows + a.kh - 1;
  const size_t plane_bytes = static_cast<size_t>(rows) * kStagePx;
  uint8_t* planes = smem;  // channel c: planes + c * plane_bytes
  uint2* bfrag = reinterpret_cast<uint2*>(smem + 4 * plane_bytes);
  const int tid = threadIdx.x;
  const int lane = tid & 31, warp = tid >> 5;
  const int x_block = blockIdx.x * kTilePx, y_block = blockIdx.y * kTileRows;

  // B fragments: for kernel row dy and group e (0: outputs 0..7, 1: 8..15),
  // lane (g = lane / 4, q = lane % 4) holds B[k][g] for k = 4q .. 4q+3
  // (.x) and 16 + 4q .. 4q+3 (.y).
  for (int i = tid; i < a.kh * 2 * 32; i += kThreads) {
    const int l = i & 31, dy = i >> 6, e = 8 * ((i >> 5) & 1);
    const int g = l >> 2, q = l & 3;
    uint32_t half[2];
    for (int h = 0; h < 2; h++) {
      uint32_t w = 0;
      for (int b = 0; b < 4; b++) {
        const int j = 16 * h + 4 * q + b - g - e;
        const int t = j >= 0 && j < a.kw ? __ldg(a.taps + dy * a.kw + j) : 0;
        w |= (static_cast<uint32_t>(t) & 0xffu) << (8 * b);
      }
      half[h] = w;
    }
    bfrag[i] = make_uint2(half[0], half[1]);
  }

  // The source: staged pixel p of staged row rr is pixel x_block - ax + p
  // of row y_block - ay + rr, through the border rule; four pixels a step.
  const int x_first = x_block - a.ax;
  constexpr int kQuads = kStagePx / 4;
  for (int i = tid; i < rows * kQuads; i += kThreads) {
    const int rr = i / kQuads, p = 4 * (i - rr * kQuads);
    const int ys = border_index(y_block - a.ay + rr, a.height, a.border);
    uint32_t w[4] = {0u, 0u, 0u, 0u};
    if (ys >= 0) {
      const uint32_t* srow =
          reinterpret_cast<const uint32_t*>(a.src + static_cast<size_t>(ys) * a.src_pitch);
      const int x = x_first + p;
      if (x >= 0 && x + 4 <= a.width) {
        if ((reinterpret_cast<uintptr_t>(srow + x) & 15u) == 0) {
          const uint4 v = __ldg(reinterpret_cast<const uint4*>(srow + x));
          w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
        } else {
#pragma unroll
          for (int k = 0; k < 4; k++)
            w[k] = __ldg(srow + x + k);
        }
      } else {
#pragma unroll
        for (int k = 0; k < 4; k++) {
          const int xs = border_index(x + k, a.width, a.border);
          w[k] = xs < 0 ? 0u : __ldg(srow + xs);
        }
      }
    }
#pragma unroll
    for (int c = 0; c < 4; c++)
      *reinterpret_cast<uint32_t*>(planes + c * plane_bytes + rr * kStagePx + p) =
          channel_word(w[0], w[1], w[2], w[3], c);
  }
  __syncthreads();

  const int wx = warp % kWarpsX, wy = warp / kWarpsX;
  const int x0 = 16 * wx, y0 = 16 * wy;  // the warp's first pixel and row in the tile
  // ldmatrix.x4: lane l gives row (l & 7) + 8 * ((l >> 3) & 1) of A and its
  // byte (l >> 4) * 16: matrices 0..3 are A's fragments a0..a3.
  const int a_row = (lane & 7) + 8 * ((lane >> 3) & 1), a_byte = (lane >> 4) * 16;
  const uint32_t a_base = static_cast<uint32_t>(__cvta_generic_to_shared(planes)) +
                          (y0 + a_row) * kStagePx + x0 + a_byte;
  int acc[4][2][4];
#pragma unroll
  for (int c = 0; c < 4; c++)
#pragma unroll
    for (int e = 0; e < 2; e++)
#pragma unroll
      for (int r = 0; r < 4; r++)
        acc[c][e][r] = 0;
  for (int dy = 0; dy < a.kh; dy++) {
    const uint2 b0 = bfrag[(2 * dy) * 32 + lane], b1 = bfrag[(2 * dy + 1) * 32 + lane];
#pragma unroll
    for (int c = 0; c < 4; c++) {
      uint32_t f[4];
      const uint32_t at = a_base + static_cast<uint32_t>(c * plane_bytes + dy * kStagePx);
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                   : "=r"(f[0]), "=r"(f[1]), "=r"(f[2]), "=r"(f[3])
                   : "r"(at));
      asm volatile(
          "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
          "{%8, %9}, {%0, %1, %2, %3};\n"
          : "+r"(acc[c][0][0]), "+r"(acc[c][0][1]), "+r"(acc[c][0][2]), "+r"(acc[c][0][3])
          : "r"(f[0]), "r"(f[1]), "r"(f[2]), "r"(f[3]), "r"(b0.x), "r"(b0.y));
      asm volatile(
          "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
          "{%8, %9}, {%0, %1, %2, %3};\n"
          : "+r"(acc[c][1][0]), "+r"(acc[c][1][1]), "+r"(acc[c][1][2]), "+r"(acc[c][1][3])
          : "r"(f[0]), "r"(f[1]), "r"(f[2]), "r"(f[3]), "r"(b1.x), "r"(b1.y));
    }
  }

  // Out: lane (g, q) holds, for group e and half h, pixels x0 + 8e + 2q and
  // + 1 of row y0 + g + 8h (accumulators 2h and 2h + 1), every channel. An
  // unfiltered byte keeps the source's (staged at row + ay, pixel + ax).
  const int g = lane >> 2, q = lane & 3;
#pragma unroll
  for (int e = 0; e < 2; e++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int yt = y0 + g + 8 * h, y = y_block + yt;
      const int xt = x0 + 8 * e + 2 * q, x = x_block + xt;
      if (y >= a.height || x >= a.width)
        continue;
      uint32_t word[2];
#pragma unroll
      for (int k = 0; k < 2; k++) {
        uint32_t v = 0;
#pragma unroll
        for (int c = 0; c < 4; c++) {
          uint32_t b;
          if ((a.lanes >> c) & 1u)
            b = kSmallSums ? a.division.small(acc[c][e][2 * h + k])
                           : a.division(acc[c][e][2 * h + k]);
          else
            b = planes[c * plane_bytes + (yt + a.ay) * kStagePx + xt + k + a.ax];
          v |= b << (8 * c);
        }
        word[k] = v;
      }
      uint32_t* out = reinterpret_cast<uint32_t*>(a.dst + static_cast<size_t>(y) * a.dst_pitch) + x;
      if (x + 1 < a.width && (reinterpret_cast<uintptr_t>(out) & 7u) == 0) {
        *reinterpret_cast<uint2*>(out) = make_uint2(word[0], word[1]);
      } else {
        out[0] = word[0];
        if (x + 1 < a.width)
          out[1] = word[1];
      }
    }
#endif
}

}  // namespace convolve_mma
}  // namespace cudafx
