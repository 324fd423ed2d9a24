// The reference encoder's motion search (delta_motion.hpp) on a CUDA
// device: a warp a tile (kWarpsPerBlock tiles a block), lane l taking the
// tile's byte columns l and l + 32 and keeping them in registers. Each
// candidate's sum of absolute differences is two column sums and a warp
// sum, the same in every lane, so the warp walks the candidates in step and
// picks the same vector as the CPU (integer sums, the same order, strict
// improvement), with no barrier between candidates. Runs before the tile
// coder, which codes the tiles it gives a vector as moved (and clears the
// vector of a tile that spatial coding wins).
#include <cuda_runtime.h>

#include "common/cuda_check.hpp"
#include "delta/delta_tiles_frame.cuh"

namespace cudafx {
namespace delta_tiles_kernels {
namespace {

constexpr int kWarpsPerBlock = 4;
constexpr int kSearchThreads = 32 * kWarpsPerBlock;
static_assert(kDeltaTileW == 64, "two byte columns a lane");

// One lane's two columns of a tile: the source bytes, and where the moved
// reference is read.
struct LaneColumns {
  int cv[2][kDeltaTileH];
  int col[2];
  bool valid[2];
};

// The lane's part of the sum of |source - reference moved by (dx, dy)| over
// the tile, rows clamped per row only where the moved tile crosses the
// plane's top or bottom.
__device__ __forceinline__ int lane_sad(const LaneColumns& lc, const TileSite& s, int dx, int dy) {
  const int c = s.p.pixel_bytes;
  const size_t pp = s.p.prev_pitch;
  const bool rows_inside = s.y0 + dy >= 0 && s.y0 + s.h - 1 + dy <= s.p.height - 1;
  int sad = 0;
#pragma unroll
  for (int j = 0; j < 2; j++) {
    if (!lc.valid[j])
      continue;
    const uint8_t* base = s.p.prev + delta_moved_column(lc.col[j], dx, c, s.p.row_bytes);
    if (rows_inside) {
      const uint8_t* r = base + static_cast<size_t>(s.y0 + dy) * pp;
#pragma unroll
      for (int y = 0; y < kDeltaTileH; y++, r += pp)
        if (y < s.h)
          sad += abs(lc.cv[j][y] - *r);
    } else {
#pragma unroll
      for (int y = 0; y < kDeltaTileH; y++)
        if (y < s.h)
          sad += abs(lc.cv[j][y] - base[delta_moved_row(s.y0 + y, dy, s.p.height) * pp]);
    }
  }
  return sad;
}

template <bool kLossless>
__global__ void __launch_bounds__(kSearchThreads)
    motion_search_kernel(const __grid_constant__ TileFrame f, unsigned tiles,
                         const DeltaVector* __restrict__ previous,
                         DeltaVector* __restrict__ vectors) {
  __shared__ uint32_t words[kCostWords + (kLossless ? 0 : kQuantWords)];
  load_encoder_tables<kLossless>(f, words, 0, kSearchThreads);
  __syncthreads();  // the tables; from here on each warp is on its own
  const unsigned tile = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
  if (tile >= tiles)
    return;
  const uint8_t* const cost = reinterpret_cast<const uint8_t*>(words);
  const EncoderMath<kLossless> q(f.bound, reinterpret_cast<const int8_t*>(words + kCostWords));
  const TileSite s = find_tile(f, tile);
  int plane = 0;
#pragma unroll
  for (int i = 1; i < kMaxPlanes; i++)
    if (i < f.n_planes && tile >= f.plane[i].first_tile)
      plane = i;
  const int lane = threadIdx.x % 32;
  const size_t pp = s.p.prev_pitch;

  // The lane's columns of the source, and the plain temporal cost.
  LaneColumns lc;
  int t_cost = 0;
  bool any = false;
#pragma unroll
  for (int j = 0; j < 2; j++) {
    const int x = lane + 32 * j;
    lc.valid[j] = x < s.w;
    lc.col[j] = s.x0 + x;
#pragma unroll
    for (int y = 0; y < kDeltaTileH; y++) {
      lc.cv[j][y] = 0;
      if (lc.valid[j] && y < s.h) {
        lc.cv[j][y] = s.p.cur[(s.y0 + y) * s.p.cur_pitch + lc.col[j]];
        const int m =
            delta_fold(q.quantise(lc.cv[j][y] - s.p.prev[(s.y0 + y) * pp + lc.col[j]]));
        t_cost += cost[m];
        any |= m != 0;
      }
    }
  }
  const DeltaVector none;
  if (!__any_sync(0xffffffffu, any)) {  // skipped
    if (lane == 0)
      vectors[tile] = none;
    return;
  }
  const int t_total = warp_sum(t_cost);

  int best = warp_sum(lane_sad(lc, s, 0, 0)), bx = 0, by = 0;
  auto consider = [&](int dx, int dy) {  // uniform over the warp
    if (!delta_search_candidate(dx, dy))
      return;
    const int sad = warp_sum(lane_sad(lc, s, dx, dy));
    if (sad < best) {
      best = sad;
      bx = dx;
      by = dy;
    }
  };
  const DeltaVector own = previous[tile];
  int dx = 0, dy = 0;
  for (int k = 0; k < kDeltaSearchStage1; k++) {
    delta_search_stage1(k, own, f.global[plane], &dx, &dy);
    consider(dx, dy);
  }
  const int cx = bx, cy = by;
  for (int k = 0; k < kDeltaSearchStage2; k++) {
    delta_search_stage2(k, cx, cy, &dx, &dy);
    consider(dx, dy);
  }
  if (bx == 0 && by == 0) {
    if (lane == 0)
      vectors[tile] = none;
    return;
  }
  // The moved coding's cost: kept only when below the plain one.
  int m_cost = 0;
#pragma unroll
  for (int j = 0; j < 2; j++) {
    if (!lc.valid[j])
      continue;
    const int mc = delta_moved_column(lc.col[j], bx, s.p.pixel_bytes, s.p.row_bytes);
#pragma unroll
    for (int y = 0; y < kDeltaTileH; y++)
      if (y < s.h)
        m_cost += cost[delta_fold(q.quantise(
            lc.cv[j][y] - s.p.prev[delta_moved_row(s.y0 + y, by, s.p.height) * pp + mc]))];
  }
  const int m_total = warp_sum(m_cost);
  if (lane == 0) {
    DeltaVector v;
    if (m_total < t_total) {
      v.dx = static_cast<int8_t>(bx);
      v.dy = static_cast<int8_t>(by);
    }
    vectors[tile] = v;
  }
}

}  // namespace

Status launch_motion_search(const TileFrame& f, unsigned tiles, const DeltaVector* previous,
                            DeltaVector* vectors, cudaStream_t stream) {
  const unsigned blocks = (tiles + kWarpsPerBlock - 1) / kWarpsPerBlock;
  if (f.bound == 0)
    motion_search_kernel<true><<<blocks, kSearchThreads, 0, stream>>>(f, tiles, previous, vectors);
  else
    motion_search_kernel<false><<<blocks, kSearchThreads, 0, stream>>>(f, tiles, previous,
                                                                        vectors);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

}  // namespace delta_tiles_kernels
}  // namespace cudafx
