// The convolution on the integer tensor cores (sm_80 and up): 4-byte pixels
// (RGBA and the like), integer taps within -128..127, kernels up to 17 - o
// wide (o below; any height up to 31), divisors within 2^24.
// convolve_cuda.cu launches it where it applies;
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
// next 8 from the same A. The staged pixels start o = (-ax) mod 4 before
// the tile's first source pixel, so that every source row is read in
// aligned 16-byte pieces (whole sectors): B is shifted by o, t[dy][k - n -
// e - o], and the taps reach pixel x0 + o + 15 + kw - 1 <= x0 + 31 for
// o + kw <= 17. So a warp makes 16 x 16 pixels: per kernel row and filtered
// channel one A (ldmatrix from a channel plane in shared memory) and two
// MMAs. The B fragments, as every lane holds them, are made once on the
// host (mma_fragments) and read through the read-only cache.
//
// A block of 4 x 2 warps makes tiles of 64 pixels x 32 rows, persistent
// (as many blocks as the device holds, walking the tiles). It stages the
// source pixels a tile reads (the border rule applied once a pixel) in the
// three filtered bytes' planes, 80 bytes a row (the last warp's A reads
// pixels 48..79; 80 = 5 x 16 bytes: ldmatrix's eight row addresses fall in
// distinct banks), two buffers used in turn, while its threads hold the
// next tile's source in registers. The bytes out come from the exact sums
// through ConvolveMagicDivision (a multiply-add, a multiply-high, a shift)
// and cvt.pack.sat; the unfiltered byte is read from the source.
//
// Measured on an H100 (2160p RGBA, bench_filters' kernel): a 5x5 0.048 ms,
// a 15x15 0.076 ms. Tried and dropped: every warp staging its own 32 x 20
// pixels with no block barrier (0.070 ms: the halo read 2.5 times), a
// fourth staged plane for the unfiltered byte, four blocks an SM with
// spills (both no faster).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "common/pack_bytes.cuh"
#include "convolve/convolve_plane_args.hpp"
#include "cudafx/border.hpp"
#include "cudafx/convolve_math.hpp"

namespace cudafx {
namespace convolve_mma {

constexpr int kWarpsX = 4, kWarpsY = 2;
constexpr int kThreads = 32 * kWarpsX * kWarpsY;
constexpr int kTilePx = 16 * kWarpsX;     // 64 pixels
constexpr int kTileRows = 16 * kWarpsY;   // 32 rows
constexpr int kStagePx = kTilePx + 16;    // 80: a staged plane row, bytes
constexpr int kMaxWidth = 17;             // o + kernel columns
constexpr int kMaxTap = 127;              // |tap|: s8

// How far before the tile's first source pixel staging starts: that pixel
// is x_block - ax, x_block a multiple of 64.
inline int stage_shift(int ax) { return ((-ax) % 4 + 4) % 4; }

// The B fragments of every kernel row: [dy][e][lane] as uint2; lane (g =
// lane / 4, q = lane % 4) holds B[k][g] for k = 4q .. 4q+3 (.x) and 16 + 4q
// .. 4q+3 (.y), bytes in k order.
inline std::vector<uint32_t> mma_fragments(const std::vector<int>& taps, int kw, int kh, int o) {
  std::vector<uint32_t> out(static_cast<size_t>(kh) * 2 * 32 * 2);
  for (int dy = 0; dy < kh; dy++)
    for (int eg = 0; eg < 2; eg++)
      for (int lane = 0; lane < 32; lane++)
        for (int h = 0; h < 2; h++) {
          uint32_t w = 0;
          for (int b = 0; b < 4; b++) {
            const int j = 16 * h + 4 * (lane & 3) + b - (lane >> 2) - 8 * eg - o;
            const int t = j >= 0 && j < kw ? taps[dy * kw + j] : 0;
            w |= (static_cast<uint32_t>(t) & 0xffu) << (8 * b);
          }
          out[((dy * 2 + eg) * 32 + lane) * 2 + h] = w;
        }
  return out;
}

// The plane's pitches multiples of 4, src and dst 4-byte aligned.
struct Args : ConvolvePlaneArgs {
  ConvolveMagicDivision division;
  const uint2* fragments;  // device: mma_fragments
  int o;                   // stage_shift(ax)
};

// Two staging buffers of three channel planes (the filtered ones: the
// fourth byte is copied from the source in the epilogue): the next tile is
// written into one while the other's tile may still be read.
constexpr int kPlanes = 3;
inline size_t shared_bytes(int kh) {
  return static_cast<size_t>(2) * kPlanes * (kTileRows + kh - 1) * kStagePx;
}

// The staged plane of filtered byte c (its rank among kLanes' bits).
template <unsigned kLanes>
__host__ __device__ constexpr int plane_of(int c) {
  int n = 0;
  for (int i = 0; i < c; i++)
    n += (kLanes >> i) & 1u;
  return n;
}

// The quads a thread stages a tile: 3 up to kernels 7 tall, else 5.
constexpr int kShortKernel = 7;
constexpr int steps_for(int kh) { return ((kTileRows + kh - 1) * (kStagePx / 4) + kThreads - 1) / kThreads; }
static_assert(steps_for(kShortKernel) == 3 && steps_for(31) == 5, "staging steps");

// Byte c of each of the four pixels w0..w3, as one word (pixel order).
__device__ __forceinline__ uint32_t channel_word(uint32_t w0, uint32_t w1, uint32_t w2,
                                                 uint32_t w3, int c) {
  const uint32_t lo = __byte_perm(w0, w1, c | (c + 4) << 4);
  const uint32_t hi = __byte_perm(w2, w3, c | (c + 4) << 4);
  return __byte_perm(lo, hi, 0x5410);
}

// One staged source quad (four pixels, the border rule applied), or zeros.
__device__ __forceinline__ void fetch_quad(const Args& a, int x_first, int y_first, int rr, int p,
                                           uint32_t (&w)[4]) {
  w[0] = w[1] = w[2] = w[3] = 0u;
  const int ys = border_index(y_first + rr, a.height, a.border);
  if (ys < 0)
    return;
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

// kLanes: the filtered bytes of a pixel (0x7: RGBA, BGRA, RGBx, BGRx; 0xe:
// ARGB, ABGR); kSteps: steps_for the kernel's height or more. Persistent
// blocks walk the tiles; each thread fetches its quads of the next tile into
// registers while the tile before is computed, so the source's latency
// hides behind the tensor cores and the epilogue, and writes them into the
// staging buffer the tile before did not use: one barrier a tile.
template <unsigned kLanes, int kSteps>
__global__ void __launch_bounds__(kThreads, kSteps <= 3 ? 4 : 3) mma_kernel(const __grid_constant__ Args a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  extern __shared__ __align__(16) uint8_t smem[];
  const int rows = kTileRows + a.kh - 1;
  const size_t plane_bytes = static_cast<size_t>(rows) * kStagePx;
  const int tid = threadIdx.x;
  const int lane = tid & 31, warp = tid >> 5;
  const int tiles_x = (a.width + kTilePx - 1) / kTilePx;
  const int n_tiles = tiles_x * ((a.height + kTileRows - 1) / kTileRows);

  // The source: staged pixel p of staged row rr is pixel x_block - ax - o +
  // p of row y_block - ay + rr, through the border rule; four pixels (a
  // quad) a thread a step.
  constexpr int kQuads = kStagePx / 4;
  constexpr int kMaxSteps = kSteps;
  const int quads = rows * kQuads;
  uint32_t held[kMaxSteps][4];
  auto fetch = [&](int tile) {
    const int x_first = (tile % tiles_x) * kTilePx - a.ax - a.o;
    const int y_first = (tile / tiles_x) * kTileRows - a.ay;
#pragma unroll
    for (int k = 0; k < kMaxSteps; k++) {
      const int i = tid + k * kThreads;
      if (i < quads) {
        const int rr = i / kQuads;
        fetch_quad(a, x_first, y_first, rr, 4 * (i - rr * kQuads), held[k]);
      }
    }
  };

  const int wx = warp % kWarpsX, wy = warp / kWarpsX;
  const int x0 = 16 * wx, y0 = 16 * wy;  // the warp's first pixel and row in the tile
  // ldmatrix.x4: lane l gives row (l & 7) + 8 * ((l >> 3) & 1) of A and its
  // byte (l >> 4) * 16: matrices 0..3 are A's fragments a0..a3.
  const int a_row = (lane & 7) + 8 * ((lane >> 3) & 1), a_byte = (lane >> 4) * 16;
  const int g = lane >> 2, q = lane & 3;

  int tile = blockIdx.x;
  if (tile < n_tiles)
    fetch(tile);
  for (int turn = 0; tile < n_tiles; tile += gridDim.x, turn ^= 1) {
    // this tile's buffer; filtered byte c at planes + plane_of(c) *
    // plane_bytes. Its last readers (two tiles ago) passed the barrier of
    // the tile before.
    uint8_t* planes = smem + turn * kPlanes * plane_bytes;
    const uint32_t a_base = static_cast<uint32_t>(__cvta_generic_to_shared(planes)) +
                            (y0 + a_row) * kStagePx + x0 + a_byte;
#pragma unroll
    for (int k = 0; k < kMaxSteps; k++) {
      const int i = tid + k * kThreads;
      if (i < quads) {
        const int rr = i / kQuads, p = 4 * (i - rr * kQuads);
#pragma unroll
        for (int c = 0; c < 4; c++)
          if ((kLanes >> c) & 1u)
            *reinterpret_cast<uint32_t*>(planes + plane_of<kLanes>(c) * plane_bytes +
                                         rr * kStagePx + p) =
                channel_word(held[k][0], held[k][1], held[k][2], held[k][3], c);
      }
    }
    __syncthreads();  // this tile staged
    if (tile + static_cast<int>(gridDim.x) < n_tiles)
      fetch(tile + gridDim.x);  // in flight while this tile is computed

    int acc[4][2][4];
#pragma unroll
    for (int c = 0; c < 4; c++)
#pragma unroll
      for (int e = 0; e < 2; e++)
#pragma unroll
        for (int r = 0; r < 4; r++)
          acc[c][e][r] = 0;
#pragma unroll 5
    for (int dy = 0; dy < a.kh; dy++) {
      const uint2 b0 = __ldg(a.fragments + (2 * dy) * 32 + lane);
      const uint2 b1 = __ldg(a.fragments + (2 * dy + 1) * 32 + lane);
#pragma unroll
      for (int c = 0; c < 4; c++) {
        if (!((kLanes >> c) & 1u))
          continue;  // copied, not filtered
        uint32_t f[4];
        const uint32_t at =
            a_base + static_cast<uint32_t>(plane_of<kLanes>(c) * plane_bytes + dy * kStagePx);
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

    // Out: lane (g, q) holds, for group e and half h, pixels x0 + 8e + 2q
    // and + 1 of row y0 + g + 8h (accumulators 2h and 2h + 1), every
    // filtered byte; the unfiltered byte is the source pixel's.
    const int x_block = (tile % tiles_x) * kTilePx, y_block = (tile / tiles_x) * kTileRows;
#pragma unroll
    for (int e = 0; e < 2; e++)
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const int yt = y0 + g + 8 * h, y = y_block + yt;
        const int xt = x0 + 8 * e + 2 * q, x = x_block + xt;
        if (y >= a.height || x >= a.width)
          continue;
        const uint32_t* in =
            reinterpret_cast<const uint32_t*>(a.src + static_cast<size_t>(y) * a.src_pitch) + x;
        constexpr uint32_t kKeep = ~((kLanes & 1u ? 0xffu : 0u) | (kLanes & 2u ? 0xff00u : 0u) |
                                     (kLanes & 4u ? 0xff0000u : 0u) |
                                     (kLanes & 8u ? 0xff000000u : 0u));
        uint32_t word[2];
#pragma unroll
        for (int k = 0; k < 2; k++) {
          int r[4];
#pragma unroll
          for (int c = 0; c < 4; c++)
            r[c] = (kLanes >> c) & 1u ? a.division.quotient(acc[c][e][2 * h + k]) : 0;
          const uint32_t kept = k == 0 || x + 1 < a.width ? __ldg(in + k) & kKeep : 0u;
          word[k] = (pack4_saturated(r[0], r[1], r[2], r[3]) & ~kKeep) | kept;
        }
        uint32_t* out =
            reinterpret_cast<uint32_t*>(a.dst + static_cast<size_t>(y) * a.dst_pitch) + x;
        if (x + 1 < a.width && (reinterpret_cast<uintptr_t>(out) & 7u) == 0) {
          __stcs(reinterpret_cast<uint2*>(out), make_uint2(word[0], word[1]));  // not read back
        } else {
          out[0] = word[0];
          if (x + 1 < a.width)
            out[1] = word[1];
        }
      }
  }
#endif
}

}  // namespace convolve_mma
}  // namespace cudafx
