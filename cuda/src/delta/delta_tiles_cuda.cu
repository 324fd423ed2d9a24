// The prediction stage of format 4 on a CUDA device (delta_tiles.hpp): one
// block of 64 threads a tile, all planes' tiles in one launch (a small chroma
// plane would not fill the device on its own). Integer arithmetic only, the
// per-byte math of delta_predict_math.hpp, so the results equal the CPU's
// bit for bit.
//
// Temporal coding, costs, staging and stores are per byte: thread t takes
// byte column t of the tile, so a warp reads and writes whole rows.
//
// Spatial coding is a wavefront: a byte's prediction needs the
// reconstruction of its left (x - c), above and upper-left neighbours. The
// bytes of one residue j = x mod c of one row (a channel row) depend only
// on each other and on the same channel row of the row above, so thread
// (j, y) = (t / 16, t % 16) codes channel row j of row y in order, keeping
// its left neighbour in a register. It codes its element k at step k + y,
// one step after the thread of row y - 1 coded the same element, and takes
// `above` from that thread with a shuffle inside its 16-lane segment; the
// upper-left byte is the `above` of its own previous step. A keyframe's
// predictors 5-7 also read the upper-right byte (x + c, y - 1): with them a
// row codes element k at step k + 2y, two steps after the row above coded
// it, so that the shuffle brings the upper right and the two steps before
// brought the above and the upper left (ceil(w/c) + 2(h - 1) steps instead
// of ceil(w/c) + h - 1: 46 against 31 on a 64 x 16 RGBA tile, 94 against 79
// on a plane of one byte a pixel; only keyframes pay it). The 16 rows of a
// channel row's chain lie in one warp, so no step needs a barrier, and the
// c <= 4 channel rows of a tile fit the block's 64 threads. The wavefront
// works on the tile in shared memory (rows kDeltaTileW bytes apart), staged
// and stored by columns.
//
// The kernels are bound by instructions issued, not by memory, so the
// symbol costs and (above error bound 0) the encoder's quantiser are looked
// up in tables, made on the host by the same functions: a shared load each
// in place of a loop or an integer division per byte.
#include <cuda_runtime.h>

#include "common/cuda_check.hpp"
#include "cudafx/delta_tiles.hpp"
#include "delta/delta_tiles_frame.cuh"

namespace cudafx {
namespace {

using namespace delta_tiles_kernels;

// A block's tiles in shared memory, rows kDeltaTileW bytes apart, at fixed
// places of one buffer (one base address for the wavefront's loads and
// stores): the wavefront's input (the encoder's source, the decoder's
// symbols), its reconstruction, and the encoder's spatial symbols.
constexpr int kIn = 0, kRec = kTileBytes, kSym = 2 * kTileBytes;

// The spatial coding of a tile of w bytes x h rows, c bytes a pixel, in
// shared memory `tiles`, with spatial predictor kPredictor: the encoder
// quantises the source into symbols, the decoder (kEncode false) reads the
// symbols; both write the reconstruction.
// Every thread of the block calls it; the lanes of a warp take the same
// steps, as the shuffles need.
template <bool kEncode, int kPredictor = 0, class Q>
__device__ __forceinline__ void spatial_wavefront(uint8_t* tiles, int w, int h, int c,
                                                  const Q& q) {
  constexpr int kSegments = 32 / kDeltaTileH;  // channel rows a warp
  if (static_cast<int>(threadIdx.x / 32) * kSegments >= c)
    return;  // the whole warp is past the last channel row
  const int j = threadIdx.x / kDeltaTileH, y = threadIdx.x % kDeltaTileH;
  // Bytes of this channel row (j, j + c, ...; none past the tile's edges),
  // and steps until the longest (j = 0) is done in the last row.
  const unsigned len = (j < c && j < w && y < h) ? (w - j + c - 1) / c : 0;
  // A predictor that reads the upper-right byte waits a second step a row,
  // so that the row above has coded element k + 1 when this row codes k.
  constexpr int kSkew = delta_predictor_uses_upper_right<kPredictor> ? 2 : 1;
  const int steps = (w + c - 1) / c + kSkew * (h - 1);
  uint8_t* row = tiles + y * kDeltaTileW;
  int x = j;                // this thread's next byte
  int next = row[kIn + x];  // and its input, loaded a step ahead
  // The row above's elements as they came: the latest (the upper right
  // with kSkew 2, else the above) and the two before it.
  int left = 0, came1 = 0, came2 = 0;
  // Step k + kSkew * y codes element k of the channel row. Every lane
  // computes and only those with a byte to code store: a step's latency is
  // its chain of dependent instructions (one step a byte is the critical
  // path of a tile), which branches and a load of the input within it would
  // lengthen. Idle lanes compute from bytes 0..255 as well, so the quantiser
  // table is never indexed outside its range.
  for (int k = -kSkew * y; k < steps - kSkew * y; k++) {
    // The row above's latest element (k + kSkew - 1), which it left in
    // `left` last step; past its row's end it stays the last, which is then
    // this element's above: the format's upper right there.
    const int came = __shfl_up_sync(0xffffffffu, left, 1, kDeltaTileH);
    const int above = kSkew == 1 ? came : came1;
    const int upper_left = kSkew == 1 ? came1 : came2;
    // 0 outside the tile, as the CPU passes (the prediction ignores them)
    const int a = k > 0 ? left : 0;
    const int b = y > 0 ? above : 0;
    const int ul = (y > 0 && k > 0) ? upper_left : 0;
    const int ur = y > 0 ? (kSkew == 1 ? above : came) : 0;
    const int pred = delta_spatial_prediction<kPredictor>(x, y, c, a, b, ul, ur);
    int e;
    if constexpr (kEncode)
      e = q.quantise(next - pred);
    else
      e = delta_unfold(next);
    const int r = q.nl.reconstruct(pred, e);
    if (static_cast<unsigned>(k) < len) {
      if constexpr (kEncode)
        row[kSym + x] = static_cast<uint8_t>(delta_fold(e));
      row[kRec + x] = static_cast<uint8_t>(r);
      left = r;
      x += c;
      // (past the row's end: a byte of the row, never used)
      next = row[kIn + min(x, kDeltaTileW - 1)];
    }
    came2 = came1;
    came1 = came;
  }
}

// kChoose: a keyframe's tiles try every spatial predictor (a kernel of its
// own, so that the delta frames' kernel carries none of that code).
template <bool kLossless, bool kChoose>
__global__ void __launch_bounds__(kThreads)
    tiles_encode_kernel(const __grid_constant__ TileFrame f, DeltaIntra intra,
                        DeltaVector* __restrict__ vectors, uint8_t* __restrict__ symbols,
                        uint8_t* __restrict__ modes, uint8_t* __restrict__ predictors) {
  // The wavefront's tiles, the temporal symbols and reconstruction, the
  // tables: words, so that the tables copy a word a thread.
  constexpr int kTSym = 3 * kTileBytes, kTRec = 4 * kTileBytes, kCost = 5 * kTileBytes;
  constexpr int kQuant = kCost + 4 * kCostWords;
  __shared__ uint32_t words[kQuant / 4 + (kLossless ? 0 : kQuantWords)];
  __shared__ int t_scratch[kWarps], s_scratch[kWarps];
  uint8_t* const tiles = reinterpret_cast<uint8_t*>(words);
  uint8_t* const src = tiles + kIn;
  uint8_t* const s_sym = tiles + kSym;
  uint8_t* const s_rec = tiles + kRec;
  uint8_t* const t_sym = tiles + kTSym;
  uint8_t* const t_rec = tiles + kTRec;
  const uint8_t* const cost = tiles + kCost;
  static_assert(kQuant / 4 == kCost / 4 + kCostWords, "load_encoder_tables' places");
  load_encoder_tables<kLossless>(f, words, kCost / 4);
  const EncoderMath<kLossless> q(f.bound, reinterpret_cast<const int8_t*>(tiles + kQuant));
  const TileSite s = find_tile(f);
  // Coded spatially only: a keyframe's tiles, and the intra-refresh band's.
  const bool keyframe =
      intra.keyframe || delta_in_refresh_band(s.y0 / kDeltaTileH,
                                              (s.p.height + kDeltaTileH - 1) / kDeltaTileH,
                                              intra.period, intra.phase);
  const int x = threadIdx.x;
  const bool column = x < s.w;
  const size_t cp = s.p.cur_pitch, rp = s.p.ref_pitch, sp = s.p.row_bytes;
  const uint8_t* cur = s.p.cur + s.y0 * cp + s.x0 + x;
  uint8_t* ref = s.p.ref + s.y0 * rp + s.x0 + x;
  uint8_t* sym = symbols + s.p.sym_offset + s.y0 * sp + s.x0 + x;
  // A moved tile (the search found it a vector) predicts from the
  // reference before the frame, moved; it is never skipped.
  const DeltaVector vector = vectors ? vectors[blockIdx.x] : DeltaVector{};
  const bool moved = delta_vector_set(vector);
  const int moved_x = s.x0 + min(x, s.w - 1);
  __syncthreads();  // the tables

  // Stage the source; on a delta frame code it temporally on the way.
  int t_cost = 0;
  bool any = moved;
  if (column) {
    const uint8_t* c_row = cur;
    const uint8_t* r_row = ref;
#pragma unroll
    for (int y0 = 0; y0 < kDeltaTileH; y0 += kBatch) {
      int cv[kBatch], rv[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; u++, c_row += cp, r_row += rp) {
        if (y0 + u < s.h) {
          cv[u] = *c_row;
          if (moved)
            rv[u] = delta_moved_byte(s.p.prev, s.p.prev_pitch, moved_x, s.y0 + y0 + u, vector,
                                     s.p.pixel_bytes, s.p.row_bytes, s.p.height);
          else if (!keyframe)
            rv[u] = *r_row;
        }
      }
#pragma unroll
      for (int u = 0; u < kBatch; u++) {
        const int y = y0 + u, i = y * kDeltaTileW + x;
        if (y < s.h) {
          src[i] = static_cast<uint8_t>(cv[u]);
          if (!keyframe) {
            const int k = q.quantise(cv[u] - rv[u]);
            const int m = delta_fold(k);
            t_sym[i] = static_cast<uint8_t>(m);
            t_rec[i] = static_cast<uint8_t>(q.nl.reconstruct(rv[u], k));
            t_cost += cost[m];
            any |= m != 0;
          }
        }
      }
    }
  }

  int t_total = 0;
  if (keyframe) {
    __syncthreads();  // `src` complete
  } else {
    if (!__syncthreads_or(any)) {  // every symbol 0: skip
      if (threadIdx.x == 0)
        modes[blockIdx.x] = kDeltaSkip;
      if (column) {
        uint8_t* out = sym;
        for (int y = 0; y < s.h; y++, out += sp) *out = 0;
      }
      return;
    }
    t_total = block_sum(t_cost, t_scratch);
  }

  spatial_wavefront<true>(tiles, s.w, s.h, s.p.pixel_bytes, q);
  __syncthreads();

  // This thread's column's share of the spatial coding's cost.
  auto spatial_cost = [&] {
    int c = 0;
    if (column)
      for (int y = 0; y < s.h; y++) c += cost[s_sym[y * kDeltaTileW + x]];
    return c;
  };
  // A keyframe's tile (with somewhere to record it) tries every spatial
  // predictor, as the CPU encoder: the cheapest kept, the lowest on a tie,
  // in t_sym and t_rec (a keyframe codes nothing temporally). Each try is
  // the whole wavefront again: keyframes only, so the delta frames' speed
  // is untouched.
  // The best so far, out of the wavefront's way.
  auto keep_spatial = [&] {
    if (column)
      for (int y = 0; y < s.h; y++) {
        t_sym[y * kDeltaTileW + x] = s_sym[y * kDeltaTileW + x];
        t_rec[y * kDeltaTileW + x] = s_rec[y * kDeltaTileW + x];
      }
    __syncthreads();
  };
  if constexpr (kChoose) {  // intra.keyframe, and somewhere to record the choice
    int best = block_sum(spatial_cost(), s_scratch), chosen = 0;
    keep_spatial();
    for (int p = 1; p < kDeltaSpatialPredictors; p++) {
      delta_with_predictor(p, [&](auto k) {
        spatial_wavefront<true, decltype(k)::value>(tiles, s.w, s.h, s.p.pixel_bytes, q);
      });
      __syncthreads();
      const int c = block_sum(spatial_cost(), s_scratch);
      if (c < best) {  // the same in every thread: the lowest predictor wins a tie
        best = c;
        chosen = p;
        keep_spatial();
      }
    }
    if (threadIdx.x == 0)
      predictors[blockIdx.x] = static_cast<uint8_t>(chosen);
  }

  bool temporal = false;  // the same in every thread: from block sums
  if (!keyframe)
    temporal = t_total <= block_sum(spatial_cost(), s_scratch);  // temporal on a tie
  if (threadIdx.x == 0) {
    modes[blockIdx.x] = temporal ? kDeltaTemporal : kDeltaSpatial;
    if (moved && !temporal)  // the search's vector lost to spatial coding
      vectors[blockIdx.x] = DeltaVector{};
  }
  const uint8_t* out_sym = temporal || kChoose ? t_sym : s_sym;
  const uint8_t* out_rec = temporal || kChoose ? t_rec : s_rec;
  if (column) {
#pragma unroll 4
    for (int y = 0; y < s.h; y++, sym += sp, ref += rp) {
      const int i = y * kDeltaTileW + x;
      *sym = out_sym[i];
      *ref = out_rec[i];
    }
  }
}

// kPredictors: a keyframe's tiles each with its own spatial predictor (else
// MED, as every delta frame's spatial tiles).
template <bool kLossless, bool kPredictors>
__global__ void __launch_bounds__(kThreads)
    tiles_decode_kernel(const __grid_constant__ TileFrame f, const uint8_t* __restrict__ symbols,
                        const uint8_t* __restrict__ modes,
                        const DeltaVector* __restrict__ vectors,
                        const uint8_t* __restrict__ predictors) {
  __shared__ uint8_t tiles[2 * kTileBytes];
  uint8_t* const s_sym = tiles + kIn;
  uint8_t* const s_rec = tiles + kRec;
  const int mode = modes[blockIdx.x];
  if (mode == kDeltaSkip)
    return;
  const TileSite s = find_tile(f);
  const DecoderMath<kLossless> q(f.quantiser);
  const int x = threadIdx.x;
  const bool column = x < s.w;
  const size_t rp = s.p.ref_pitch, sp = s.p.row_bytes;
  uint8_t* ref = s.p.ref + s.y0 * rp + s.x0 + x;
  const uint8_t* sym = symbols + s.p.sym_offset + s.y0 * sp + s.x0 + x;

  if (mode != kDeltaSpatial) {  // temporal (any other mode too, as on the CPU)
    // A moved tile predicts from the reference before the frame, moved.
    const DeltaVector vector =
        vectors && mode == kDeltaTemporal ? vectors[blockIdx.x] : DeltaVector{};
    const bool moved = delta_vector_set(vector);
    if (column) {
#pragma unroll
      for (int y0 = 0; y0 < kDeltaTileH; y0 += kBatch) {
        int rv[kBatch], mv[kBatch];
        const uint8_t* r_row = ref;
        const uint8_t* m_row = sym;
#pragma unroll
        for (int u = 0; u < kBatch; u++, r_row += rp, m_row += sp) {
          if (y0 + u < s.h) {
            rv[u] = moved ? delta_moved_byte(s.p.prev, s.p.prev_pitch, s.x0 + x, s.y0 + y0 + u,
                                             vector, s.p.pixel_bytes, s.p.row_bytes, s.p.height)
                          : *r_row;
            mv[u] = *m_row;
          }
        }
#pragma unroll
        for (int u = 0; u < kBatch; u++, ref += rp, sym += sp) {
          if (y0 + u < s.h)
            *ref = static_cast<uint8_t>(q.nl.reconstruct(rv[u], delta_unfold(mv[u])));
        }
      }
    }
    return;
  }

  if (column) {
    const uint8_t* m_row = sym;
#pragma unroll
    for (int y = 0; y < kDeltaTileH; y++, m_row += sp)
      if (y < s.h)
        s_sym[y * kDeltaTileW + x] = *m_row;
  }
  __syncthreads();
  if constexpr (kPredictors)
    delta_with_predictor(predictors[blockIdx.x], [&](auto k) {
      spatial_wavefront<false, decltype(k)::value>(tiles, s.w, s.h, s.p.pixel_bytes, q);
    });
  else
    spatial_wavefront<false>(tiles, s.w, s.h, s.p.pixel_bytes, q);
  __syncthreads();
  if (column) {
#pragma unroll 4
    for (int y = 0; y < s.h; y++, ref += rp) *ref = s_rec[y * kDeltaTileW + x];
  }
}

// The kernels' view of the layout and images (`cur` null for the decoder),
// and the number of tiles of all planes.
Status make_frame(const DeltaLayout& layout, const ImageView* cur, const ImageView& ref,
                  const ImageView* prev, TileFrame* f, unsigned* tiles) {
  if (layout.n_planes < 1 || layout.n_planes > kMaxPlanes)
    return Status::invalid("delta tiles: the layout must have 1.." + std::to_string(kMaxPlanes) +
                           " planes, has " + std::to_string(layout.n_planes));
  *f = TileFrame{};
  f->n_planes = layout.n_planes;
  for (int i = 0; i < layout.n_planes; i++) {
    const DeltaPlaneLayout& p = layout.planes[i];
    TilePlane& t = f->plane[i];
    t.cur = cur ? cur->data[i] : nullptr;
    t.cur_pitch = cur ? cur->pitch[i] : 0;
    t.ref = ref.data[i];
    t.ref_pitch = ref.pitch[i];
    t.prev = prev ? prev->data[i] : nullptr;
    t.prev_pitch = prev ? prev->pitch[i] : 0;
    t.sym_offset = layout.plane_offset[i];
    t.row_bytes = p.row_bytes;
    t.height = p.height;
    t.pixel_bytes = p.pixel_bytes;
    t.tiles_x = p.tiles_x;
    t.first_tile = static_cast<unsigned>(layout.first_tile[i]);
  }
  // At most 16384 x 16384 x 4 bytes (make_delta_layout): 2^20 tiles.
  *tiles = static_cast<unsigned>(layout.tile_count());
  return Status::ok();
}

}  // namespace

Status delta_tiles_encode_cuda(const DeltaLayout& layout, const ImageView& cur,
                               const ImageView& ref, int bound, const DeltaIntra& intra,
                               uint8_t* symbols, uint8_t* modes, StreamHandle stream,
                               const DeltaMotionSearch* motion, uint8_t* predictors) {
  TileFrame f;
  unsigned tiles = 0;
  CUDAFX_TRY(make_frame(layout, &cur, ref, motion ? &motion->prev : nullptr, &f, &tiles));
  if (tiles == 0)
    return Status::ok();
  if (motion && (intra.keyframe || intra.period > 0))
    return Status::invalid("delta tiles: no motion search on a keyframe or with intra refresh");
  if (motion) {
    // The search reads the reference before the frame a word at a time.
    for (int i = 0; i < layout.n_planes; i++)
      if (motion->prev.pitch[i] % 4 != 0 || reinterpret_cast<uintptr_t>(motion->prev.data[i]) % 4)
        return Status::invalid("delta tiles: the motion search's reference needs planes and "
                               "pitches aligned to 4 bytes");
    for (int i = 0; i < kMaxPlanes; i++) f.global[i] = motion->global[i];
  }
  f.bound = bound;
  const DeltaEncoderQuantiser dq = intra.quantiser(bound);  // the table's dead zone
  uint8_t* quantise = reinterpret_cast<uint8_t*>(f.quantise);
  for (int e = 0; e < kErrors; e++)
    quantise[e] = static_cast<uint8_t>(static_cast<int8_t>(dq.quantise(e - 255)));
  uint8_t* cost = reinterpret_cast<uint8_t*>(f.cost);
  for (int m = 0; m < 256; m++) cost[m] = static_cast<uint8_t>(delta_symbol_cost(m));
  DeltaVector* vectors = nullptr;
  if (motion) {
    CUDAFX_TRY(launch_motion_search(f, tiles, motion->previous, motion->vectors, stream));
    vectors = motion->vectors;
  }
  const bool choose = intra.keyframe && predictors;
  auto launch = [&](auto kernel) {
    kernel<<<tiles, kThreads, 0, stream>>>(f, intra, vectors, symbols, modes, predictors);
  };
  if (bound == 0)
    choose ? launch(tiles_encode_kernel<true, true>) : launch(tiles_encode_kernel<true, false>);
  else
    choose ? launch(tiles_encode_kernel<false, true>) : launch(tiles_encode_kernel<false, false>);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

Status delta_tiles_decode_cuda(const DeltaLayout& layout, const uint8_t* symbols,
                               const uint8_t* modes, int quantiser, const ImageView& ref,
                               StreamHandle stream, const DeltaVector* vectors,
                               const ImageView* prev, const uint8_t* predictors) {
  TileFrame f;
  unsigned tiles = 0;
  if (vectors && !prev)
    return Status::invalid("delta tiles: moved tiles need the reference before the frame");
  CUDAFX_TRY(make_frame(layout, nullptr, ref, vectors ? prev : nullptr, &f, &tiles));
  if (tiles == 0)
    return Status::ok();
  f.quantiser = quantiser;  // the decoder's kernel reads no table
  auto launch = [&](auto kernel) {
    kernel<<<tiles, kThreads, 0, stream>>>(f, symbols, modes, vectors, predictors);
  };
  if (quantiser == 0)
    predictors ? launch(tiles_decode_kernel<true, true>) : launch(tiles_decode_kernel<true, false>);
  else
    predictors ? launch(tiles_decode_kernel<false, true>)
               : launch(tiles_decode_kernel<false, false>);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

}  // namespace cudafx
