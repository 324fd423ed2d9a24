// What the prediction stage's kernels share (delta_tiles_cuda.cu: coding
// and decoding tiles; delta_motion_cuda.cu: the motion search): the frame
// as the kernels see it, one block of kThreads threads a tile, a byte
// column a thread, and the per-byte math of delta_predict_math.hpp.
#pragma once

#include <cuda_runtime.h>

#include "cudafx/delta_tiles.hpp"

namespace cudafx {
namespace delta_tiles_kernels {

constexpr int kThreads = kDeltaTileW;  // a byte column each
constexpr int kTileBytes = kDeltaTileW * kDeltaTileH;
constexpr int kWarps = kThreads / 32;
static_assert(kThreads == 4 * kDeltaTileH && 32 % kDeltaTileH == 0,
              "the block holds 4 channel rows (c <= 4) of kDeltaTileH rows, a warp whole "
              "segments of them");
// Rows a thread loads before it uses them (loads in flight at once).
constexpr int kBatch = 8;
static_assert(kDeltaTileH % kBatch == 0, "whole batches of rows");

// One plane as the kernels see it.
struct TilePlane {
  const uint8_t* cur;  // the encoder's source
  uint8_t* ref;
  const uint8_t* prev;  // the reference before the frame: moved tiles read it
  size_t cur_pitch, ref_pitch, prev_pitch;
  size_t sym_offset;  // DeltaLayout::plane_offset
  int row_bytes, height, pixel_bytes, tiles_x;
  unsigned first_tile;  // DeltaLayout::first_tile
};

// Quantised errors k (0 or NearLossless's: all in -128..127 as its range is
// <= 256) and symbol costs (<= 72), a byte each, four to a word so that the
// block copies them to shared memory a word a thread.
constexpr int kErrors = 511;  // -255..255
constexpr int kQuantWords = (kErrors + 3) / 4;
constexpr int kCostWords = 256 / 4;
static_assert(kQuantWords <= 2 * kThreads && kCostWords == kThreads, "one copy step each");

struct TileFrame {
  TilePlane plane[kMaxPlanes];
  int n_planes;
  int bound;      // the encoder's error bound
  int quantiser;  // the decoder's
  // The encoder's: DeltaEncoderQuantiser(bound).quantise(e - 255), int8,
  // and delta_symbol_cost(m).
  uint32_t quantise[kQuantWords];
  uint32_t cost[kCostWords];
  DeltaVector global[kMaxPlanes];  // the motion search's global candidates
};

// The block's tile (number blockIdx.x among all planes'): its plane, its
// corner and its clipped size.
struct TileSite {
  TilePlane p;
  int x0, y0, w, h;
};

__device__ __forceinline__ TileSite find_tile(const TileFrame& f, unsigned tile = blockIdx.x) {
  TileSite s;
  s.p = f.plane[0];
#pragma unroll
  for (int i = 1; i < kMaxPlanes; i++)  // constant indices: no copy of `f` to local memory
    if (i < f.n_planes && tile >= f.plane[i].first_tile)
      s.p = f.plane[i];
  const int local = static_cast<int>(tile - s.p.first_tile);
  const int ty = local / s.p.tiles_x, tx = local - ty * s.p.tiles_x;
  s.x0 = tx * kDeltaTileW;
  s.y0 = ty * kDeltaTileH;
  s.w = min(kDeltaTileW, s.p.row_bytes - s.x0);
  s.h = min(kDeltaTileH, s.p.height - s.y0);
  return s;
}

// The sum of v over the block, in every thread (`scratch`: kWarps ints).
// Has a barrier: every thread calls it.
__device__ __forceinline__ int block_sum(int v, int* scratch) {
  for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
  if (threadIdx.x % 32 == 0)
    scratch[threadIdx.x / 32] = v;
  __syncthreads();
  int sum = 0;
  for (int i = 0; i < kWarps; i++) sum += scratch[i];
  return sum;
}

// The per-byte math of a call. Lossless (error bound and quantiser 0): the
// quantisers of 0 as constants, so that NearLossless's divisions by its
// step (1) fold away. Otherwise the encoder quantises through its table
// (TileFrame::quantise, in shared memory).
template <bool kLossless>
struct EncoderMath {
  DeltaEncoderQuantiser dq;
  NearLossless nl;  // the reconstruction's: dq's
  const int8_t* table;
  __device__ __forceinline__ EncoderMath(int bound, const int8_t* t)
      : dq(kLossless ? 0 : bound), nl(dq.nl), table(t) {}
  __device__ __forceinline__ int quantise(int err) const {
    return kLossless ? dq.quantise(err) : table[err + 255];
  }
};

template <bool kLossless>
struct DecoderMath {
  NearLossless nl;
  __device__ __forceinline__ explicit DecoderMath(int quantiser)
      : nl(kLossless ? 0 : quantiser) {}
};

// The sum of v over the warp, in every lane.
__device__ __forceinline__ int warp_sum(int v) {
#if __CUDA_ARCH__ >= 800
  return static_cast<int>(__reduce_add_sync(0xffffffffu, static_cast<unsigned>(v)));
#else
  for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
#endif
}

// The encoder's tables (TileFrame::cost, ::quantise) copied to shared
// memory `words` by a block of `threads` threads (the cost table at word
// `cost_word`, the quantiser's after it unless lossless). The caller
// synchronises before use.
template <bool kLossless>
__device__ __forceinline__ void load_encoder_tables(const TileFrame& f, uint32_t* words,
                                                    int cost_word, int threads = kThreads) {
  for (int i = threadIdx.x; i < kCostWords; i += threads) words[cost_word + i] = f.cost[i];
  if (!kLossless) {
    for (int i = threadIdx.x; i < kQuantWords; i += threads)
      words[cost_word + kCostWords + i] = f.quantise[i];
  }
}

// Launches the motion search (delta_motion_cuda.cu) over `tiles` tiles:
// one vector a tile into `vectors`, from f's planes' `prev`.
Status launch_motion_search(const TileFrame& f, unsigned tiles, const DeltaVector* previous,
                            DeltaVector* vectors, cudaStream_t stream);

}  // namespace delta_tiles_kernels
}  // namespace cudafx
