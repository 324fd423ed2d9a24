// The prediction stage of format 4 on the CPU: tiles in parallel, each coded
// (or decoded) on its own, the bytes of a tile walked by diagonals (each
// after the neighbours its prediction reads).
#include <climits>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <utility>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "cudafx/delta_tiles.hpp"
#include "cudafx/parallel.hpp"
#include "delta/motion_sad.hpp"
#include "delta/temporal_avx2.hpp"
#include "delta/temporal_sse2.hpp"

namespace cudafx {
namespace {

constexpr int kTileBytes = kDeltaTileW * kDeltaTileH;

// One tile of a plane: where its bytes lie in an image, in the tight symbol
// buffer, and its size.
struct TileSite {
  int x0, y0, w, h, c;
  size_t tile;  // number among all tiles
};

int tile_row_count(const DeltaLayout& layout) {
  int rows = 0;
  for (int i = 0; i < layout.n_planes; i++) rows += layout.planes[i].tiles_y;
  return rows;
}

// Calls fn(plane, site) for every tile, a tile row of a plane a job, and
// after a row's tiles after_row(plane, tile row, job, worker).
template <class F, class AfterRow>
void for_each_tile_row(const DeltaLayout& layout, F fn, AfterRow after_row) {
  int first[kParallelMostShares + 1];
  delta_tile_row_shares(layout, first);
  parallel_for_shares(first, [&](int job, int worker) {
    int i = 0, r = job;
    while (r >= layout.planes[i].tiles_y) r -= layout.planes[i++].tiles_y;
    const DeltaPlaneLayout& p = layout.planes[i];
    for (int tx = 0; tx < p.tiles_x; tx++) {
      const TileSite s{tx * kDeltaTileW, r * kDeltaTileH, p.tile_width(tx), p.tile_height(r),
                       p.pixel_bytes,
                       layout.first_tile[i] + static_cast<size_t>(r) * p.tiles_x + tx};
      fn(i, s);
    }
    after_row(i, r, job, worker);
  });
}
template <class F>
void for_each_tile_row(const DeltaLayout& layout, F fn) {
  for_each_tile_row(layout, fn, [](int, int, int, int) {});
}

// The encoder's quantiser tabulated over every error -255 .. 255, so that
// a frame's bytes look it up instead of dividing: the symbol, k * step and
// the cost estimate.
struct QuantLut {
  const DeltaEncoderQuantiser& q;
  uint8_t m[511], cost[511];
  int16_t offset[511];
  explicit QuantLut(const DeltaEncoderQuantiser& quantiser) : q(quantiser) {
    for (int e = -255; e <= 255; e++) {
      const int k = q.quantise(e);
      m[e + 255] = static_cast<uint8_t>(delta_fold(k));
      offset[e + 255] = static_cast<int16_t>(k * q.nl.step);
      cost[e + 255] = static_cast<uint8_t>(delta_symbol_cost(m[e + 255]));
    }
  }
};

// True when every byte of the tile is within the bound of the reference:
// the tile is skipped (the common case, tested without a division). With
// SSE2, 16 bytes at a time as |c - r| = (c -sat r) | (r -sat c), over the
// bound where max(|c - r|, bound) is not the bound (the compiler's own
// vectorisation had widened the bytes to 32-bit lanes). The bound is
// 0..255, as the encoder's threshold.
bool within_bound(const uint8_t* cur, size_t cp, const uint8_t* ref, size_t rp, const TileSite& s,
                  int bound) {
  int x0 = 0;
  unsigned out = 0;
#if defined(__SSE2__)
  x0 = s.w / 16 * 16;
  const __m128i b = _mm_set1_epi8(static_cast<char>(bound));
  __m128i within = _mm_setzero_si128();  // 0xff in each lane whose bytes so far are within
  within = _mm_cmpeq_epi8(within, within);
  for (int y = 0; y < s.h; y++) {
    const uint8_t* c = cur + static_cast<size_t>(y) * cp;
    const uint8_t* r = ref + static_cast<size_t>(y) * rp;
    for (int x = 0; x < x0; x += 16) {
      const __m128i cv = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c + x));
      const __m128i rv = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r + x));
      const __m128i diff = _mm_or_si128(_mm_subs_epu8(cv, rv), _mm_subs_epu8(rv, cv));
      within = _mm_and_si128(within, _mm_cmpeq_epi8(_mm_max_epu8(diff, b), b));
    }
  }
  out = _mm_movemask_epi8(within) != 0xffff;
#endif
  for (int y = 0; y < s.h && x0 < s.w; y++) {
    const uint8_t* c = cur + static_cast<size_t>(y) * cp;
    const uint8_t* r = ref + static_cast<size_t>(y) * rp;
    for (int x = x0; x < s.w; x++)
      out |= static_cast<unsigned>(c[x] - r[x] + bound) > static_cast<unsigned>(2 * bound);
  }
  return out == 0;
}

// Copies a tile row of w bytes: a whole tile's row (the common case) as a
// copy of known size, which the compiler makes a few vector moves, rather
// than a call to memcpy (the search gathers up to nine tiles a changed
// tile, row by row: the calls had been a tenth of the encoder's time).
inline void copy_tile_row(uint8_t* dst, const uint8_t* src, int w) {
  if (w == kDeltaTileW)
    std::memcpy(dst, src, kDeltaTileW);
  else
    std::memcpy(dst, src, static_cast<size_t>(w));
}

// Temporal coding of a tile: symbols into `sym` (w bytes a row), the
// reconstruction into `rec`; returns the cost.
int code_temporal(const uint8_t* cur, size_t cp, const uint8_t* ref, size_t rp, const TileSite& s,
                  const QuantLut& lut, uint8_t* sym, uint8_t* rec) {
  static const DeltaTemporalTile avx2 = delta_temporal_tile_avx2();
  if (avx2 && s.w == kDeltaTileW)  // a whole tile, 32 bytes at a time
    return avx2(cur, cp, ref, rp, s.h, lut.q, sym, rec);
#if defined(__SSE2__)
  if (s.w % 16 == 0) {  // whole groups of 16 bytes
    auto code_groups = [&](auto code16) {
      __m128i acc = _mm_setzero_si128();
      for (int y = 0; y < s.h; y++)
        for (int x = 0; x < s.w; x += 16)
          code16(cur + static_cast<size_t>(y) * cp + x, ref + static_cast<size_t>(y) * rp + x,
                 sym + y * s.w + x, rec + y * s.w + x, &acc);
      return sum_halves16(acc);
    };
    // (lambdas, not a function pointer: each group's call inlined)
    if (lut.q.bound == 0 && lut.q.nl.step == 1)  // lossless
      return code_groups([](const uint8_t* c, const uint8_t* r, uint8_t* m, uint8_t* o,
                            __m128i* acc) { code_lossless16(c, r, m, o, acc); });
    const NearLosslessTemporal16 coder(lut.q);
    return code_groups([&](const uint8_t* c, const uint8_t* r, uint8_t* m, uint8_t* o,
                           __m128i* acc) { coder.code16(c, r, m, o, acc); });
  }
#endif
  int cost = 0;
  for (int y = 0; y < s.h; y++) {
    const uint8_t* c = cur + static_cast<size_t>(y) * cp;
    const uint8_t* r = ref + static_cast<size_t>(y) * rp;
    for (int x = 0; x < s.w; x++) {
      const int e = c[x] - r[x] + 255;
      sym[y * s.w + x] = lut.m[e];
      rec[y * s.w + x] = static_cast<uint8_t>(lut.q.nl.reconstruct_offset(r[x], lut.offset[e]));
      cost += lut.cost[e];
    }
  }
  return cost;
}

// A tile's bytes in an order where each comes after the neighbours its
// prediction reads, c bytes a pixel: by diagonals x + skew * y, so that the
// rows' chains of dependent bytes (each byte's prediction needs its left
// neighbour's reconstruction) are interleaved and the CPU works on up to 16
// of them at once. Skew 1 serves the left, upper and upper-left neighbours
// (x - c, y), (x, y - 1), (x - c, y - 1). A predictor that reads the upper
// right (x + c, y - 1) takes skew c + 1, the least that puts it on an
// earlier diagonal: skew c would give the same bytes (a diagonal's rows
// are walked upward, so the upper right would come just before) but chain
// each diagonal's rows one after another.
template <int kPredictor>
int diagonal_skew(int c) {
  return delta_predictor_uses_upper_right<kPredictor> ? c + 1 : 1;
}
int diagonals(int w, int h, int skew) { return w + skew * (h - 1); }
// The rows y0..y1 that diagonal d crosses (x = d - skew * y in 0..w-1).
inline void diagonal_rows(int d, int w, int h, int skew, int* y0, int* y1) {
  *y0 = d - w + 1 > 0 ? (d - w + skew) / skew : 0;
  *y1 = d / skew < h - 1 ? d / skew : h - 1;
}
template <class F>
inline void for_each_byte_by_diagonals(int w, int h, int skew, F fn) {
  for (int d = 0; d < diagonals(w, h, skew); d++) {
    int y0, y1;
    diagonal_rows(d, w, h, skew, &y0, &y1);
    for (int y = y0; y <= y1; y++) fn(d - skew * y, y);
  }
}

// The spatial prediction (delta_spatial_prediction) of byte x of row y of a
// tile w bytes wide, c a pixel, from its reconstruction: `row` is that row,
// the one above `pitch` bytes before it (read only below the first row);
// the upper right is read only by the predictors that wait for it
// (diagonal_skew).
template <int kPredictor>
inline int predict_in_tile(const uint8_t* row, ptrdiff_t pitch, int x, int y, int c, int w) {
  const int left = x >= c ? row[x - c] : 0;
  const int above = y > 0 ? row[x - pitch] : 0;
  const int upper_left = (y > 0 && x >= c) ? row[x - c - pitch] : 0;
  const int upper_right =
      (delta_predictor_uses_upper_right<kPredictor> && y > 0 && x + c < w) ? row[x + c - pitch]
                                                                          : above;
  return delta_spatial_prediction<kPredictor>(x, y, c, left, above, upper_left, upper_right);
}

#if defined(__SSE2__)
// Near-lossless spatial coding with MED of a whole tile of 1-byte pixels
// (kDeltaTileW x kDeltaTileH) as vectors: lane y of vector d is byte
// (d - y, y), so diagonal d is one vector whose neighbours lie in the two
// before it (left: the same lane of d - 1; above: the lane before of
// d - 1; upper left: the lane before of d - 2), and a tile is 79 steps of
// MED and NearLosslessTemporal16's quantiser (the prediction in the
// reference's place: the same per-byte math as code_spatial's), instead of
// 1024 bytes' chains. The tile's rows go in skewed (row y moved y bytes
// right, zeros around) and transposed 16 x 16 at a time, and the symbols
// and reconstruction come back the same way; lanes outside the tile code
// a 0 against a 0, whose cost (kDeltaMinSymbolCost each) is taken off.
// The edges as delta_spatial_prediction: the first byte predicts 128, the
// rest of the first row its left byte, a row's first byte the one above.
// Stops as code_spatial does (every eighth diagonal).
int code_spatial_med_diagonals(const uint8_t* cur, size_t cp, const NearLosslessTemporal16& coder,
                               uint8_t* sym, uint8_t* rec, int limit) {
  constexpr int W = kDeltaTileW, H = kDeltaTileH, D = W + H - 1, S = D + 1;
  static_assert(H == 16 && S % 16 == 0, "a lane a row, whole 16 x 16 blocks");
  alignas(16) uint8_t rows[H][S];
  std::memset(rows, 0, sizeof rows);
  for (int y = 0; y < H; y++) std::memcpy(&rows[y][y], cur + static_cast<size_t>(y) * cp, W);
  __m128i diagonal[S];
  for (int b = 0; b < S; b += 16) {
    __m128i v[16];
    for (int r = 0; r < 16; r++) v[r] = _mm_load_si128(reinterpret_cast<const __m128i*>(&rows[r][b]));
    transpose16x16(v);
    for (int j = 0; j < 16; j++) diagonal[b + j] = v[j];
  }
  alignas(16) uint8_t sym_d[S][16], rec_d[S][16];
  const __m128i zero = _mm_setzero_si128();
  const __m128i lane = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m128i first_lane = _mm_cmpeq_epi8(lane, zero);
  __m128i prev = zero, prev2 = zero, cost = zero;  // the reconstruction of d - 1, d - 2
  int outside = 0, left_bytes = W * H;
  for (int d = 0; d < D; d++) {
    const int y0 = d - (W - 1) > 0 ? d - (W - 1) : 0, y1 = d < H - 1 ? d : H - 1;
    const __m128i inside = _mm_andnot_si128(_mm_cmpgt_epi8(_mm_set1_epi8(static_cast<char>(y0)), lane),
                                            _mm_cmpgt_epi8(_mm_set1_epi8(static_cast<char>(y1 + 1)), lane));
    __m128i a = prev, b = _mm_slli_si128(prev, 1), c = _mm_slli_si128(prev2, 1);
    if (d == 0) {
      a = b = c = _mm_set1_epi8(static_cast<char>(128));
    } else {
      if (d < H) {  // lane d is its row's first byte: a = c = b gives b
        const __m128i row_start = _mm_cmpeq_epi8(lane, _mm_set1_epi8(static_cast<char>(d)));
        a = _mm_or_si128(_mm_and_si128(row_start, b), _mm_andnot_si128(row_start, a));
        c = _mm_or_si128(_mm_and_si128(row_start, b), _mm_andnot_si128(row_start, c));
      }
      // lane 0 is the first row: b = c = a gives a
      b = _mm_or_si128(_mm_and_si128(first_lane, a), _mm_andnot_si128(first_lane, b));
      c = _mm_or_si128(_mm_and_si128(first_lane, a), _mm_andnot_si128(first_lane, c));
    }
    const __m128i pred = _mm_and_si128(med16(a, b, c), inside);
    prev2 = prev;
    prev = coder.code16(diagonal[d], pred, sym_d[d], &cost);
    _mm_store_si128(reinterpret_cast<__m128i*>(rec_d[d]), prev);
    outside += H - (y1 - y0 + 1);
    left_bytes -= y1 - y0 + 1;
    if ((d & 7) == 7) {
      const int so_far = sum_halves16(cost) - kDeltaMinSymbolCost * outside;
      if (so_far + kDeltaMinSymbolCost * left_bytes >= limit)
        return so_far + kDeltaMinSymbolCost * left_bytes;
    }
  }
  std::memset(sym_d[D], 0, 16);
  std::memset(rec_d[D], 0, 16);
  for (auto [from, to] : {std::make_pair(&sym_d[0][0], sym), std::make_pair(&rec_d[0][0], rec)}) {
    for (int b = 0; b < S; b += 16) {
      __m128i v[16];
      for (int j = 0; j < 16; j++) v[j] = _mm_load_si128(reinterpret_cast<const __m128i*>(from + (b + j) * 16));
      transpose16x16(v);
      for (int r = 0; r < 16; r++) _mm_store_si128(reinterpret_cast<__m128i*>(&rows[r][b]), v[r]);
    }
    for (int y = 0; y < H; y++) std::memcpy(to + y * W, &rows[y][y], W);
  }
  return sum_halves16(cost) - kDeltaMinSymbolCost * outside;
}
#endif

// Spatial coding of a tile (delta_spatial_prediction on its own
// reconstruction); returns the cost. With `limit`, it stops (diagonal by
// diagonal) once the cost so far plus the least the bytes left can cost
// has reached it, and returns that bound: the caller then keeps what it had
// (temporal coding, which wins ties, or a cheaper predictor) and never reads
// sym and rec (the bound never exceeds the whole cost, so a tile that would
// have cost less never stops). Most changed tiles of moving footage go
// temporal, and this serial chain was the CPU encoder's largest cost (perf,
// bikes.mp4).
template <int kPredictor = 0>
int code_spatial(const uint8_t* cur, size_t cp, const TileSite& s, const QuantLut& lut,
                 uint8_t* sym, uint8_t* rec, int limit = INT_MAX) {
  // Every byte costs at least kDeltaMinSymbolCost (a 0): the cost so far
  // plus that for each byte left bounds the whole from below.
  int cost = 0, left_bytes = s.w * s.h;
#if defined(__SSE2__)
  // Lossless with MED (every delta frame's spatial try): the reconstruction
  // is the source, so no byte waits for another: whole rows 16 bytes at a
  // time, stopping at the same bound row by row.
  if (kPredictor == 0 && lut.q.bound == 0 && lut.q.nl.step == 1 && s.w % 16 == 0) {
    __m128i acc = _mm_setzero_si128();
    for (int y = 0; y < s.h && cost + kDeltaMinSymbolCost * left_bytes < limit; y++) {
      const uint8_t* row = cur + static_cast<size_t>(y) * cp;
      const uint8_t* up = y > 0 ? row - cp : row;
      for (int x = 0; x < s.w; x += 16)
        code_lossless_med16(row, up, x, y, s.c, sym + y * s.w + x, &acc);
      copy_tile_row(rec + y * s.w, row, s.w);
      cost = sum_halves16(acc);
      left_bytes -= s.w;
    }
    return cost + kDeltaMinSymbolCost * left_bytes;
  }
  // Near-lossless with MED on a whole tile of 1-byte pixels (planar
  // formats' every delta frame's spatial try): its diagonals as vectors.
  if (kPredictor == 0 && s.c == 1 && s.w == kDeltaTileW && s.h == kDeltaTileH)
    return code_spatial_med_diagonals(cur, cp, NearLosslessTemporal16(lut.q), sym, rec, limit);
#endif
  const int skew = diagonal_skew<kPredictor>(s.c);
  for (int d = 0; d < diagonals(s.w, s.h, skew) && cost + kDeltaMinSymbolCost * left_bytes < limit;
       d++) {
    int y0, y1;
    diagonal_rows(d, s.w, s.h, skew, &y0, &y1);
    left_bytes -= y1 - y0 + 1;
    for (int y = y0; y <= y1; y++) {
      const int x = d - skew * y;
      const uint8_t* out = rec + y * s.w;
      const int pred = predict_in_tile<kPredictor>(out, s.w, x, y, s.c, s.w);
      const int e = cur[static_cast<size_t>(y) * cp + x] - pred + 255;
      sym[y * s.w + x] = lut.m[e];
      rec[y * s.w + x] = static_cast<uint8_t>(lut.q.nl.reconstruct_offset(pred, lut.offset[e]));
      cost += lut.cost[e];
    }
  }
  return cost + kDeltaMinSymbolCost * left_bytes;
}

// A keyframe's tile coded with each spatial predictor in turn, the one of
// the smallest cost kept (the lowest on a tie) in sym and rec; `scratch_sym`
// and `scratch_rec` hold the others' tries. Returns the predictor. A try
// stops once it cannot cost less than the best so far (code_spatial's
// limit).
int code_spatial_chosen(const uint8_t* cur, size_t cp, const TileSite& s, const QuantLut& lut,
                        uint8_t* sym, uint8_t* rec, uint8_t* scratch_sym, uint8_t* scratch_rec) {
  int best = code_spatial<0>(cur, cp, s, lut, sym, rec), chosen = 0;
  for (int p = 1; p < kDeltaSpatialPredictors; p++) {
    const int cost = delta_with_predictor(p, [&](auto k) {
      return code_spatial<decltype(k)::value>(cur, cp, s, lut, scratch_sym, scratch_rec, best);
    });
    if (cost < best) {
      best = cost;
      chosen = p;
      std::memcpy(sym, scratch_sym, static_cast<size_t>(s.w) * s.h);
      std::memcpy(rec, scratch_rec, static_cast<size_t>(s.w) * s.h);
    }
  }
  return chosen;
}

// -- moved tiles (delta_motion.hpp) --

// Whether every byte of the tile moved by dx pixels stays inside the
// plane's row, where the moved byte is simply dx * c bytes away.
bool columns_inside(const TileSite& s, int dx, int row_bytes) {
  return s.x0 / s.c + dx >= 0 && (s.x0 + s.w - 1) / s.c + dx <= row_bytes / s.c - 1;
}

// For a tile moved past the plane's side: where each of its byte columns
// reads (clamped), worked out once for all its rows (it is a division a
// byte; per row it was the search's hottest loop on small frames).
void moved_columns(const TileSite& s, int dx, int row_bytes, int column[kDeltaTileW]) {
  for (int x = 0; x < s.w; x++) column[x] = delta_moved_column(s.x0 + x, dx, s.c, row_bytes);
}

// The prediction of a tile moved by (dx, dy), from plane i of `prev`, into
// `pred` (w bytes a row).
void gather_moved(const ImageView& prev, int i, const DeltaPlaneLayout& p, const TileSite& s,
                  int dx, int dy, uint8_t* pred) {
  const bool inside = columns_inside(s, dx, p.row_bytes);
  int column[kDeltaTileW];
  if (!inside)
    moved_columns(s, dx, p.row_bytes, column);
  for (int y = 0; y < s.h; y++) {
    const uint8_t* src =
        prev.data[i] + static_cast<size_t>(delta_moved_row(s.y0 + y, dy, p.height)) * prev.pitch[i];
    uint8_t* out = pred + y * s.w;
    if (inside) {
      copy_tile_row(out, src + s.x0 + dx * s.c, s.w);
    } else {
      for (int x = 0; x < s.w; x++) out[x] = src[column[x]];
    }
  }
}

// The prediction of a tile moved by v (half pixels: delta_moved_byte, by
// the whole-pixel tiles around it), into `pred` (w bytes a row).
void gather_moved(const ImageView& prev, int i, const DeltaPlaneLayout& p, const TileSite& s,
                  DeltaVector v, uint8_t* pred) {
  const int ix = delta_whole_pixels(v.dx), iy = delta_whole_pixels(v.dy);
  const bool fx = v.dx & 1, fy = v.dy & 1;
  gather_moved(prev, i, p, s, ix, iy, pred);
  if (!fx && !fy)
    return;
  uint8_t right[kTileBytes], below[kTileBytes], diagonal[kTileBytes];
  if (fx)
    gather_moved(prev, i, p, s, ix + 1, iy, right);
  if (fy)
    gather_moved(prev, i, p, s, ix, iy + 1, below);
  if (fx && fy)
    gather_moved(prev, i, p, s, ix + 1, iy + 1, diagonal);
  half_pixel_mean(pred, right, below, diagonal, fx, fy, s.w * s.h, pred);
}

// The whole-pixel vectors by which the block kernels (delta_block_sad) may
// read the tile moved straight from m.prev: a whole tile's width, and
// every byte inside the plane or its margin (the clamping then reads what
// the margin holds). Found once a tile, as ranges: tested per candidate it
// had cost three integer divisions each, as much as many a candidate's
// sum that stops after four rows.
struct ReadableVectors {
  int dx0 = 1, dx1 = 0, dy0 = 1, dy1 = 0;  // none
  bool contains(int dx, int dy) const { return dx >= dx0 && dx <= dx1 && dy >= dy0 && dy <= dy1; }
};
ReadableVectors readable_vectors(const DeltaMotionSearch& m, const DeltaPlaneLayout& p,
                                 const TileSite& s) {
  ReadableVectors r;
  if (s.w != kDeltaTileW)
    return r;
  const int first = s.x0 / s.c, last = (s.x0 + s.w - 1) / s.c;
  r.dx0 = -m.margin - first;
  r.dx1 = p.row_bytes / s.c - 1 + m.margin - last;
  r.dy0 = -m.margin - s.y0;
  r.dy1 = p.height - 1 + m.margin - (s.y0 + s.h - 1);
  return r;
}
// The first byte of the tile moved by (dx, dy) whole pixels, inside the
// plane or its margin (readable_vectors).
const uint8_t* moved_block(const ImageView& prev, int i, const TileSite& s, int dx, int dy) {
  // Signed: in the margin above the plane the row is negative.
  return prev.data[i] + static_cast<ptrdiff_t>(s.y0 + dy) * static_cast<ptrdiff_t>(prev.pitch[i]) +
         s.x0 + dx * s.c;
}

// The sum of absolute differences between the tile of `cur` and plane i of
// `prev` moved by (dx, dy); stops early once it reaches `limit` (a sum
// that large loses to the best anyway).
int moved_sad(const uint8_t* cur, size_t cp, const DeltaMotionSearch& m, int i,
              const DeltaPlaneLayout& p, const TileSite& s, const ReadableVectors& readable,
              const DeltaBlockSad& kernels, int dx, int dy, int limit) {
  const ImageView& prev = m.prev;
  if (readable.contains(dx, dy))  // every candidate with the margin
    return kernels.whole(cur, cp, moved_block(prev, i, s, dx, dy), prev.pitch[i], s.h, limit);
  const bool inside = columns_inside(s, dx, p.row_bytes);
  int column[kDeltaTileW];
  if (!inside)
    moved_columns(s, dx, p.row_bytes, column);
  int sad = 0;
  for (int y = 0; y < s.h && sad < limit; y++) {
    const uint8_t* c = cur + static_cast<size_t>(y) * cp;
    const uint8_t* src =
        prev.data[i] + static_cast<size_t>(delta_moved_row(s.y0 + y, dy, p.height)) * prev.pitch[i];
    if (inside) {
      sad += sad_bytes(c, src + s.x0 + dx * s.c, s.w);
    } else {
      // The clamped columns gathered into a row first (independent loads),
      // then summed as inside: the byte-by-byte sum had been a third of
      // the search's time, on tiles near a plane's sides.
      uint8_t moved[kDeltaTileW];
      for (int x = 0; x < s.w; x++) moved[x] = src[column[x]];
      sad += sad_bytes(c, moved, s.w);
    }
  }
  return sad;
}

// The reference encoder's search (delta_motion.hpp) for one tile: the best
// vector, (0, 0) when no candidate beats the unmoved tile.
DeltaVector search_tile(const uint8_t* cur, size_t cp, const DeltaMotionSearch& m, int i,
                        const DeltaPlaneLayout& p, const TileSite& s) {
  const ReadableVectors readable = readable_vectors(m, p, s);
  const DeltaBlockSad& kernels = delta_block_sad();
  int best = moved_sad(cur, cp, m, i, p, s, readable, kernels, 0, 0, INT_MAX), bx = 0, by = 0;
  // A stage's candidates (those delta_search_candidate scores) in order,
  // summed in one call where every one is readable straight from the
  // reference (with the margin, all of a whole tile's), else one by one;
  // each becomes the best when its sum is below the best's so far.
  constexpr int kMostCandidates = std::max(kDeltaSearchStage1, kDeltaSearchStage2);
  int list_dx[kMostCandidates], list_dy[kMostCandidates], listed = 0;
  ptrdiff_t offsets[kMostCandidates];
  bool all_readable = true;
  const uint8_t* const origin = moved_block(m.prev, i, s, 0, 0);
  auto add = [&](int dx, int dy) {
    if (!delta_search_candidate(dx, dy))
      return;
    list_dx[listed] = dx;
    list_dy[listed] = dy;
    offsets[listed++] =
        static_cast<ptrdiff_t>(dy) * static_cast<ptrdiff_t>(m.prev.pitch[i]) + dx * s.c;
    all_readable = all_readable && readable.contains(dx, dy);
  };
  auto run_stage = [&] {
    if (all_readable) {
      const int k =
          kernels.whole_best(cur, cp, origin, m.prev.pitch[i], s.h, offsets, listed, &best);
      if (k >= 0) {
        bx = list_dx[k];
        by = list_dy[k];
      }
    } else {
      for (int k = 0; k < listed; k++) {
        const int sad =
            moved_sad(cur, cp, m, i, p, s, readable, kernels, list_dx[k], list_dy[k], best);
        if (sad < best) {
          best = sad;
          bx = list_dx[k];
          by = list_dy[k];
        }
      }
    }
    listed = 0;
    all_readable = true;
  };
  int dx = 0, dy = 0;
  for (int k = 0; k < kDeltaSearchStage1; k++) {
    delta_search_stage1(k, m.previous[s.tile], m.global[i], &dx, &dy);
    add(dx, dy);
  }
  const int stage1 = listed;
  run_stage();
  const int cx = bx, cy = by;
  // Stage 1's candidates that fall in stage 2's 5 x 5 window around its
  // best are not summed again: each's sum is at least the best so far (it
  // lost to it, or is it), and a candidate takes the best only with a
  // smaller sum, so skipping them is exact. (Around (0, 0), stage 1's
  // eight nearest are eight of stage 2's 24.)
  uint32_t known = 0;  // bit (y + 2) * 5 + (x + 2) of the window
  for (int k = 0; k < stage1; k++) {
    const int ox = list_dx[k] - cx + 2, oy = list_dy[k] - cy + 2;
    if (ox >= 0 && ox < 5 && oy >= 0 && oy < 5)
      known |= 1u << (oy * 5 + ox);
  }
  for (int k = 0; k < kDeltaSearchStage2; k++) {
    delta_search_stage2(k, cx, cy, &dx, &dy);
    if (!(known >> ((dy - cy + 2) * 5 + (dx - cx + 2)) & 1u))
      add(dx, dy);
  }
  run_stage();
  // Stage 3, in half pixels: each candidate the rounded mean of two or four
  // of the 3 x 3 whole-pixel tiles around the best (gathered once), as
  // delta_moved_byte.
  const int wx = bx, wy = by;
  bx *= 2;
  by *= 2;
  if (best == 0)  // exact: no sum can be smaller
    return DeltaVector{static_cast<int8_t>(bx), static_cast<int8_t>(by)};
  if (readable.contains(wx - 1, wy - 1) && readable.contains(wx + 1, wy + 1)) {
    // Every byte the half pixels read lies inside the plane or its margin:
    // each summed straight from the reference, without gathering.
    for (int j = 0; j < kDeltaSearchStage3; j++) {
      int hx = 0, hy = 0;
      delta_search_stage3(j, wx, wy, &hx, &hy);
      if (!delta_search_half_candidate(hx, hy))
        continue;
      const int sad =
          kernels.half(cur, cp,
                       moved_block(m.prev, i, s, delta_whole_pixels(hx), delta_whole_pixels(hy)),
                       m.prev.pitch[i], s.c, hx & 1, hy & 1, s.h, best);
      if (sad < best) {
        best = sad;
        bx = hx;
        by = hy;
      }
    }
    return DeltaVector{static_cast<int8_t>(bx), static_cast<int8_t>(by)};
  }
  uint8_t around[3][3][kTileBytes];
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++)
      gather_moved(m.prev, i, p, s, wx + c - 1, wy + r - 1, around[r][c]);
  const int n = s.w * s.h;
  for (int k = 0; k < kDeltaSearchStage3; k++) {
    int hx = 0, hy = 0;
    delta_search_stage3(k, wx, wy, &hx, &hy);
    if (!delta_search_half_candidate(hx, hy))
      continue;
    const int ox = hx - 2 * wx, oy = hy - 2 * wy;
    const int c0 = ox < 0 ? 0 : 1, r0 = oy < 0 ? 0 : 1;  // the whole pixel at or before it
    uint8_t pred[kTileBytes];
    half_pixel_mean(around[r0][c0], around[r0][c0 + 1], around[r0 + 1][c0],
                    around[r0 + 1][c0 + 1], ox != 0, oy != 0, n, pred);
    int sad = 0;
    for (int y = 0; y < s.h && sad < best; y++)
      sad += sad_bytes(cur + static_cast<size_t>(y) * cp, pred + y * s.w, s.w);
    if (sad < best) {
      best = sad;
      bx = hx;
      by = hy;
    }
  }
  return DeltaVector{static_cast<int8_t>(bx), static_cast<int8_t>(by)};
}

// The prediction of a tile moved by v (half pixels), as gather_moved makes
// it: where every byte it reads lies inside the plane or its margin,
// straight from the reference (a whole-pixel vector: the block itself,
// *pitch the reference's) or its rounded means made row by row into `buf`;
// else gathered into `buf` (*pitch its width).
const uint8_t* moved_prediction(const DeltaMotionSearch& m, int i, const DeltaPlaneLayout& p,
                                const TileSite& s, DeltaVector v, uint8_t* buf, size_t* pitch) {
  const int ix = delta_whole_pixels(v.dx), iy = delta_whole_pixels(v.dy);
  const bool fx = v.dx & 1, fy = v.dy & 1;
  const ReadableVectors readable = readable_vectors(m, p, s);
  if (readable.contains(ix, iy) && readable.contains(ix + fx, iy + fy)) {
    const uint8_t* const block = moved_block(m.prev, i, s, ix, iy);
    const size_t rp = m.prev.pitch[i];
    if (!fx && !fy) {
      *pitch = rp;
      return block;
    }
    for (int y = 0; y < s.h; y++) {
      const uint8_t* a = block + static_cast<size_t>(y) * rp;
      half_pixel_mean(a, a + s.c, a + rp, a + rp + s.c, fx, fy, s.w, buf + y * s.w);
    }
  } else {
    gather_moved(m.prev, i, p, s, v, buf);
  }
  *pitch = static_cast<size_t>(s.w);
  return buf;
}

// Asks for the next tile of the row band (frame and reference, the 16 rows
// of 64 bytes, two cache lines each where unaligned) while this one is
// coded. A frame arrives cold, and the first look at a tile (is it within
// the bound?) had stalled on its loads: half the tile loop's samples on one
// load (perf, vtest.avi); sixteen rows a tile apart are more streams than
// the hardware prefetcher follows. Encode loop +5-10 % at T = 10, +3-7 %
// lossless (vtest.avi, bikes.mp4, bigbuckbunny.mp4; the same packets).
void prefetch_next_tile(const uint8_t* cur, size_t cp, const uint8_t* ref, size_t rp,
                        const TileSite& s, int row_bytes) {
  if (s.x0 + 2 * kDeltaTileW > row_bytes)
    return;  // the next is the band's last, clipped tile: left to the hardware
  for (int y = 0; y < s.h; y++) {
    const uint8_t* c = cur + static_cast<size_t>(y) * cp + kDeltaTileW;
    const uint8_t* r = ref + static_cast<size_t>(y) * rp + kDeltaTileW;
    __builtin_prefetch(c);
    __builtin_prefetch(c + kDeltaTileW - 1);
    __builtin_prefetch(r);
    __builtin_prefetch(r + kDeltaTileW - 1);
  }
}

// A tile's rows from `src` (src_pitch bytes a row) to `dst` (pitch).
void store(const uint8_t* src, size_t src_pitch, const TileSite& s, uint8_t* dst, size_t pitch) {
  for (int y = 0; y < s.h; y++)
    copy_tile_row(dst + static_cast<size_t>(y) * pitch, src + static_cast<size_t>(y) * src_pitch,
                  s.w);
}

}  // namespace

void delta_tile_row_shares(const DeltaLayout& layout, int* first) {
  std::vector<uint64_t> weight_before(1, 0);  // the bytes of the rows before
  for (int i = 0; i < layout.n_planes; i++) {
    const DeltaPlaneLayout& p = layout.planes[i];
    for (int ty = 0; ty < p.tiles_y; ty++)
      weight_before.push_back(weight_before.back() +
                              static_cast<uint64_t>(p.row_bytes) * p.tile_height(ty));
  }
  parallel_weighted_shares(weight_before.data(), static_cast<int>(weight_before.size()) - 1,
                           first);
}

size_t delta_tiles_encode_cpu(const DeltaLayout& layout, const ImageView& cur,
                              const ImageView& ref, int bound, const DeltaIntra& intra,
                              uint8_t* symbols, uint8_t* modes,
                              const DeltaMotionSearch* motion, uint8_t* predictors,
                              DeltaRebuild* rebuild, const DeltaRowDone& row_done) {
  const DeltaEncoderQuantiser q = intra.quantiser(bound);
  const QuantLut lut(q);
  const ImageView& out = rebuild ? rebuild->out : ref;
  std::vector<uint64_t> row_sums;
  if (rebuild)
    row_sums.assign(tile_row_count(layout), 0);
  const auto after_row = [&](int i, int ty, int row, int worker) {
    if (row_done)
      row_done(row, worker);
    if (!rebuild)
      return;
    const DeltaPlaneLayout& p = layout.planes[i];
    const int y0 = ty * kDeltaTileH, y1 = y0 + p.tile_height(ty);
    delta_fill_margin_rows(p, out.data[i], out.pitch[i], y0, y1);
    row_sums[row] = delta_checksum_rows(layout, out, i, y0, y1);
  };
  for_each_tile_row(layout, [&](int i, const TileSite& s) {
    const DeltaPlaneLayout& p = layout.planes[i];
    const size_t cp = cur.pitch[i], rp = ref.pitch[i], op = out.pitch[i];
    const uint8_t* c = cur.data[i] + s.y0 * cp + s.x0;
    const uint8_t* r = ref.data[i] + s.y0 * rp + s.x0;
    uint8_t* o = out.data[i] + s.y0 * op + s.x0;
    uint8_t* sym =
        symbols + layout.plane_offset[i] + static_cast<size_t>(s.y0) * p.row_bytes + s.x0;
    uint8_t t_sym[kTileBytes], t_rec[kTileBytes], s_sym[kTileBytes], s_rec[kTileBytes];
    uint8_t m_sym[kTileBytes], m_rec[kTileBytes];
    prefetch_next_tile(c, cp, r, rp, s, p.row_bytes);
    uint8_t* temporal_sym = t_sym;
    uint8_t* temporal_rec = t_rec;
    DeltaVector vector;
    int mode = kDeltaSpatial;
    const bool spatial_only =
        intra.keyframe ||
        delta_in_refresh_band(s.y0 / kDeltaTileH, p.tiles_y, intra.period, intra.phase);
    if (!spatial_only) {
      if (within_bound(c, cp, r, rp, s, bound)) {
        mode = kDeltaSkip;
      } else {
        int temporal_cost = code_temporal(c, cp, r, rp, s, lut, t_sym, t_rec);
        if (motion) {
          const DeltaVector best = search_tile(c, cp, *motion, i, p, s);
          if (delta_vector_set(best)) {
            uint8_t pred[kTileBytes];
            size_t pred_pitch = 0;
            const uint8_t* const moved = moved_prediction(*motion, i, p, s, best, pred, &pred_pitch);
            const int moved_cost = code_temporal(c, cp, moved, pred_pitch, s, lut, m_sym, m_rec);
            if (moved_cost < temporal_cost) {
              vector = best;
              temporal_cost = moved_cost;
              temporal_sym = m_sym;
              temporal_rec = m_rec;
            }
          }
        }
        if (temporal_cost <= code_spatial(c, cp, s, lut, s_sym, s_rec, temporal_cost))
          mode = kDeltaTemporal;
      }
    } else if (intra.keyframe && predictors) {
      predictors[s.tile] =
          static_cast<uint8_t>(code_spatial_chosen(c, cp, s, lut, s_sym, s_rec, t_sym, t_rec));
    } else {
      code_spatial(c, cp, s, lut, s_sym, s_rec);
    }
    modes[s.tile] = static_cast<uint8_t>(mode);
    if (motion)
      motion->vectors[s.tile] = mode == kDeltaTemporal ? vector : DeltaVector{};
    if (mode == kDeltaSkip) {
      for (int y = 0; y < s.h; y++) std::memset(sym + static_cast<size_t>(y) * p.row_bytes, 0, s.w);
      if (o != r)
        store(r, rp, s, o, op);
      return;
    }
    const bool temporal = mode == kDeltaTemporal;
    store(temporal ? temporal_sym : s_sym, s.w, s, sym, p.row_bytes);
    store(temporal ? temporal_rec : s_rec, s.w, s, o, op);
  }, after_row);
  if (rebuild) {
    rebuild->checksum = 0;
    for (uint64_t v : row_sums) rebuild->checksum += v;
  }
  return delta_coded_symbols(layout, modes);
}

size_t delta_coded_symbols(const DeltaLayout& layout, const uint8_t* modes) {
  // Per tile row: the tiles before the last are kDeltaTileW wide, so they
  // are counted (a loop the compiler vectorises) before they are weighed
  // (the CUDA encoder does this on the host every frame: 32 400 tiles at
  // 2160p RGBA, 80 us tile by tile, a few us so).
  size_t coded = 0;
  for (int i = 0; i < layout.n_planes; i++) {
    const DeltaPlaneLayout& p = layout.planes[i];
    const int last = p.tiles_x - 1;
    for (int ty = 0; ty < p.tiles_y; ty++) {
      const uint8_t* row = modes + layout.first_tile[i] + static_cast<size_t>(ty) * p.tiles_x;
      size_t whole = 0;
      for (int tx = 0; tx < last; tx++) whole += row[tx] != kDeltaSkip;
      const size_t rows = static_cast<size_t>(p.tile_height(ty));
      coded += whole * kDeltaTileW * rows;
      if (row[last] != kDeltaSkip)
        coded += static_cast<size_t>(p.tile_width(last)) * rows;
    }
  }
  return coded;
}

void delta_tiles_decode_cpu(const DeltaLayout& layout, const uint8_t* symbols,
                            const uint8_t* modes, int quantiser, const ImageView& ref,
                            const DeltaMovedTiles* moved, const uint8_t* predictors) {
  const NearLossless nl(quantiser);
  for_each_tile_row(layout, [&](int i, const TileSite& s) {
    const int mode = modes[s.tile];
    if (mode == kDeltaSkip)
      return;
    const DeltaPlaneLayout& p = layout.planes[i];
    const size_t rp = ref.pitch[i];
    uint8_t* r = ref.data[i] + s.y0 * rp + s.x0;
    const uint8_t* sym =
        symbols + layout.plane_offset[i] + static_cast<size_t>(s.y0) * p.row_bytes + s.x0;
    if (mode == kDeltaTemporal && moved && delta_vector_set(moved->vectors[s.tile])) {
      uint8_t pred[kTileBytes];
      const DeltaVector v = moved->vectors[s.tile];
      gather_moved(moved->prev, i, p, s, v, pred);
      for (int y = 0; y < s.h; y++) {
        uint8_t* out = r + static_cast<size_t>(y) * rp;
        const uint8_t* m = sym + static_cast<size_t>(y) * p.row_bytes;
        for (int x = 0; x < s.w; x++)
          out[x] = static_cast<uint8_t>(nl.reconstruct(pred[y * s.w + x], delta_unfold(m[x])));
      }
      return;
    }
    if (mode == kDeltaTemporal) {
      for (int y = 0; y < s.h; y++) {
        uint8_t* out = r + static_cast<size_t>(y) * rp;
        const uint8_t* m = sym + static_cast<size_t>(y) * p.row_bytes;
        for (int x = 0; x < s.w; x++)
          out[x] = static_cast<uint8_t>(nl.reconstruct(out[x], delta_unfold(m[x])));
      }
      return;
    }
    delta_with_predictor(predictors ? predictors[s.tile] : 0, [&](auto k) {
      constexpr int kPredictor = decltype(k)::value;
      for_each_byte_by_diagonals(s.w, s.h, diagonal_skew<kPredictor>(s.c), [&](int x, int y) {
        uint8_t* out = r + static_cast<size_t>(y) * rp;
        const int pred =
            predict_in_tile<kPredictor>(out, static_cast<ptrdiff_t>(rp), x, y, s.c, s.w);
        out[x] = static_cast<uint8_t>(
            nl.reconstruct(pred, delta_unfold(sym[static_cast<size_t>(y) * p.row_bytes + x])));
      });
    });
  });
}

}  // namespace cudafx
