// The reference encoder's motion search (delta_motion.hpp) on a CUDA
// device: one block a tile, a byte column a thread, as the tile coder
// (delta_tiles_frame.cuh). A thread keeps its column of the source in
// registers; each candidate's sum of absolute differences is a column sum
// and a block sum, the same in every thread, so the block walks the
// candidates in step and picks the same vector as the CPU (integer sums,
// the same order, strict improvement). Runs before the tile coder, which
// codes the tiles it gives a vector as moved.
#include <cuda_runtime.h>

#include "common/cuda_check.hpp"
#include "delta/delta_tiles_frame.cuh"

namespace cudafx {
namespace delta_tiles_kernels {
namespace {

template <bool kLossless>
__global__ void __launch_bounds__(kThreads)
    motion_search_kernel(const __grid_constant__ TileFrame f,
                         const DeltaVector* __restrict__ previous,
                         DeltaVector* __restrict__ vectors) {
  constexpr int kCostWord = 0;
  __shared__ uint32_t words[kCostWords + (kLossless ? 0 : kQuantWords)];
  __shared__ int sum_scratch[2 * kWarps];
  BlockSums sums{sum_scratch, 0};
  load_encoder_tables<kLossless>(f, words, kCostWord);
  const uint8_t* const cost = reinterpret_cast<const uint8_t*>(words + kCostWord);
  const EncoderMath<kLossless> q(f.bound,
                                 reinterpret_cast<const int8_t*>(words + kCostWord + kCostWords));
  const TileSite s = find_tile(f);
  int plane = 0;
#pragma unroll
  for (int i = 1; i < kMaxPlanes; i++)
    if (i < f.n_planes && blockIdx.x >= f.plane[i].first_tile)
      plane = i;
  const int x = threadIdx.x, c = s.p.pixel_bytes;
  const bool column = x < s.w;
  const int col = s.x0 + (column ? x : 0);
  const size_t pp = s.p.prev_pitch;
  const uint8_t* const prev = s.p.prev;
  __syncthreads();  // the tables

  // The column of the source, and its plain temporal cost.
  int cv[kDeltaTileH];
  int t_cost = 0;
  bool any = false;
#pragma unroll
  for (int y = 0; y < kDeltaTileH; y++) {
    cv[y] = 0;
    if (column && y < s.h) {
      cv[y] = s.p.cur[(s.y0 + y) * s.p.cur_pitch + col];
      const int m = delta_fold(q.quantise(cv[y] - prev[(s.y0 + y) * pp + col]));
      t_cost += cost[m];
      any |= m != 0;
    }
  }
  DeltaVector none;
  if (!__syncthreads_or(any)) {  // skipped
    if (threadIdx.x == 0)
      vectors[blockIdx.x] = none;
    return;
  }
  const int t_total = sums(t_cost);

  auto column_sad = [&](int dx, int dy) {
    if (!column)
      return 0;
    const int mc = delta_moved_column(col, dx, c, s.p.row_bytes);
    int sad = 0;
#pragma unroll
    for (int y = 0; y < kDeltaTileH; y++)
      if (y < s.h)
        sad += abs(cv[y] - prev[delta_moved_row(s.y0 + y, dy, s.p.height) * pp + mc]);
    return sad;
  };
  int best = sums(column_sad(0, 0)), bx = 0, by = 0;
  auto consider = [&](int dx, int dy) {  // uniform over the block
    if (!delta_search_candidate(dx, dy))
      return;
    const int sad = sums(column_sad(dx, dy));
    if (sad < best) {
      best = sad;
      bx = dx;
      by = dy;
    }
  };
  const DeltaVector own = previous[blockIdx.x];
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
    if (threadIdx.x == 0)
      vectors[blockIdx.x] = none;
    return;
  }
  // The moved coding's cost: kept only when below the plain one.
  int m_cost = 0;
  if (column) {
    const int mc = delta_moved_column(col, bx, c, s.p.row_bytes);
#pragma unroll
    for (int y = 0; y < kDeltaTileH; y++)
      if (y < s.h)
        m_cost += cost[delta_fold(
            q.quantise(cv[y] - prev[delta_moved_row(s.y0 + y, by, s.p.height) * pp + mc]))];
  }
  const int m_total = sums(m_cost);
  if (threadIdx.x == 0) {
    DeltaVector v;
    if (m_total < t_total) {
      v.dx = static_cast<int8_t>(bx);
      v.dy = static_cast<int8_t>(by);
    }
    vectors[blockIdx.x] = v;
  }
}

}  // namespace

Status launch_motion_search(const TileFrame& f, unsigned tiles, const DeltaVector* previous,
                            DeltaVector* vectors, cudaStream_t stream) {
  if (f.bound == 0)
    motion_search_kernel<true><<<tiles, kThreads, 0, stream>>>(f, previous, vectors);
  else
    motion_search_kernel<false><<<tiles, kThreads, 0, stream>>>(f, previous, vectors);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

}  // namespace delta_tiles_kernels
}  // namespace cudafx
