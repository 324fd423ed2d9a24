// The reference encoder's motion search (delta_motion.hpp) on a CUDA
// device: a warp a tile (kWarpsPerBlock tiles a block), each lane a word of
// every other row of it, kept in registers. Each candidate's sum of
// absolute differences is a lane's sum (four bytes at a time: __vabsdiffu4,
// __dp4a) and a warp sum, the same in every lane, so the warp walks the candidates in step and
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
// Lane l takes bytes 4 (l % 16) .. 4 (l % 16) + 3 of rows l / 16, l / 16 + 2,
// ...: a word of each of kRowsPerLane rows.
constexpr int kRowsPerLane = kDeltaTileH / 2;
static_assert(kDeltaTileW == 64 && kDeltaTileH % 2 == 0, "16 lanes a row, two rows a step");

// One lane's part of a tile: its source words and which of their bytes lie
// in the tile.
struct LaneTile {
  uint32_t cur[kRowsPerLane];  // bytes past the tile's width are 0
  int row0, nvalid;            // first row; bytes of the word inside the tile (0..4)
  int col;                     // the word's first byte column in the plane
  uint32_t mask;  // 0xff for each byte inside the tile
  // The pixels the whole tile spans and the plane's last, for the test of
  // a vector that keeps every moved byte inside the plane.
  int px_first, px_last, px_max;
  bool whole;  // the tile is kDeltaTileW x kDeltaTileH (the same in every lane)
  const uint8_t* prev;  // the lane's first byte (row row0, column col) in the reference
};

__device__ __forceinline__ int byte_of(uint32_t w, int b) { return (w >> (8 * b)) & 0xff; }

// lane_sad's general form, for a tile the plane's edge cuts (word by word,
// masked) or one moved past the plane's edge (byte by byte, coordinates
// clamped). Out of line, so that the search loop keeps its registers (the
// kernel spilled less).
__device__ __noinline__ int lane_sad_edge(const LaneTile& lt, const TileSite& s, int dx, int dy) {
  const int c = s.p.pixel_bytes;
  const size_t pp = s.p.prev_pitch;
  if (lt.nvalid == 0)
    return 0;
  const bool inside = lt.px_first + dx >= 0 && lt.px_last + dx <= lt.px_max &&
                      s.y0 + dy >= 0 && s.y0 + s.h - 1 + dy <= s.p.height - 1;
  int sad = 0;
  if (inside) {
    const uint8_t* first = s.p.prev + static_cast<size_t>(s.y0 + lt.row0 + dy) * pp + s.x0 +
                           4 * (threadIdx.x % 16) + dx * c;
    const unsigned shift = static_cast<unsigned>(reinterpret_cast<uintptr_t>(first) & 3);
    const bool two = shift + lt.nvalid > 4;  // the lane's bytes reach the next word
    const uint32_t* word = reinterpret_cast<const uint32_t*>(first - shift);
    const size_t step = 2 * pp / 4;  // pitches are multiples of 4 on the device
#pragma unroll
    for (int k = 0; k < kRowsPerLane; k++, word += step) {
      if (lt.row0 + 2 * k < s.h) {
        const uint32_t lo = word[0], hi = two ? word[1] : 0u;
        const uint32_t moved = __funnelshift_r(lo, hi, 8 * shift) & lt.mask;
        sad = static_cast<int>(
            __dp4a(__vabsdiffu4(lt.cur[k], moved), 0x01010101u, static_cast<unsigned>(sad)));
      }
    }
    return sad;
  }
  const int last = s.p.row_bytes / c - 1;
#pragma unroll
  for (int k = 0; k < kRowsPerLane; k++) {
    if (lt.row0 + 2 * k < s.h) {
      const int moved_row = delta_moved_row(s.y0 + lt.row0 + 2 * k, dy, s.p.height);
      const uint8_t* row = s.p.prev + static_cast<size_t>(moved_row) * pp;
#pragma unroll
      for (int b = 0; b < 4; b++) {
        if (b < lt.nvalid) {
          const int px = (lt.col + b) / c, ch = lt.col + b - px * c;
          sad += abs(byte_of(lt.cur[k], b) - row[min(max(px + dx, 0), last) * c + ch]);
        }
      }
    }
  }
  return sad;
}

// Whether the whole tile moved by (dx, dy) lies inside the plane (nearly
// every candidate): then each lane's bytes of a row are one word of the
// reference (moved_words).
__device__ __forceinline__ bool moved_inside(const LaneTile& lt, const TileSite& s, int dx,
                                             int dy) {
  return lt.whole && lt.px_first + dx >= 0 && lt.px_last + dx <= lt.px_max && s.y0 + dy >= 0 &&
         s.y0 + kDeltaTileH - 1 + dy <= s.p.height - 1;
}

// f(k, word) for each of the lane's rows k with its word of the reference
// moved by (dx, dy), when moved_inside: one load where the moved word is
// aligned (RGBA always: dx moves whole pixels), two and a funnel shift
// where it is not; no per-row tests.
template <class F>
__device__ __forceinline__ void moved_words(const LaneTile& lt, const TileSite& s, int dx, int dy,
                                            F&& f) {
  const size_t pp = s.p.prev_pitch;
  const uint8_t* first =
      lt.prev + static_cast<ptrdiff_t>(dy) * static_cast<ptrdiff_t>(pp) + dx * s.p.pixel_bytes;
  const unsigned shift = static_cast<unsigned>(reinterpret_cast<uintptr_t>(first) & 3);
  const uint32_t* word = reinterpret_cast<const uint32_t*>(first - shift);
  const size_t step = 2 * pp / 4;  // pitches are multiples of 4 on the device
  if (shift == 0) {
#pragma unroll
    for (int k = 0; k < kRowsPerLane; k++)
      f(k, word[k * step]);
  } else {
#pragma unroll
    for (int k = 0; k < kRowsPerLane; k++)
      f(k, __funnelshift_r(word[k * step], word[k * step + 1], 8 * shift));
  }
}

// The lane's part of the sum of |source - reference moved by (dx, dy)|,
// compared four bytes at once; a tile the plane's edge cuts or one moved
// past it takes lane_sad_edge. Both give the same integer. (ncu, H100, 2160p RGBA: with the general form alone a
// candidate took ~235 instructions a warp and the search was issue-bound,
// 0.76 ms a frame; then 0.54.)
__device__ __forceinline__ int lane_sad(const LaneTile& lt, const TileSite& s, int dx, int dy) {
  if (moved_inside(lt, s, dx, dy)) {
    unsigned sad = 0;
    moved_words(lt, s, dx, dy, [&](int k, uint32_t moved) {
      sad = __dp4a(__vabsdiffu4(lt.cur[k], moved), 0x01010101u, sad);
    });
    return static_cast<int>(sad);
  }
  return lane_sad_edge(lt, s, dx, dy);
}

// The lane's part of the cost (delta_symbol_cost of the encoder's symbols)
// of coding the tile predicted from the reference moved by (dx, dy), and
// whether any of its symbols is not 0. Inside the plane from words (the
// general form, a byte at a time with clamped coordinates, was a quarter
// of the search's instructions: it runs for every tile).
template <class Q>
__device__ __forceinline__ int lane_cost(const LaneTile& lt, const TileSite& s, int dx, int dy,
                                         const Q& q, const uint8_t* cost, bool* any) {
  int total = 0;
  bool nonzero = false;
  // One byte against its prediction: its symbol's cost, and whether it is 0.
  const auto add = [&](int source, int predicted) {
    const int m = delta_fold(q.quantise(source - predicted));
    total += cost[m];
    nonzero |= m != 0;
  };
  if (moved_inside(lt, s, dx, dy)) {
    moved_words(lt, s, dx, dy, [&](int k, uint32_t moved) {
#pragma unroll
      for (int b = 0; b < 4; b++) add(byte_of(lt.cur[k], b), byte_of(moved, b));
    });
    *any |= nonzero;
    return total;
  }
  const int c = s.p.pixel_bytes, last = s.p.row_bytes / c - 1;
#pragma unroll
  for (int k = 0; k < kRowsPerLane; k++) {
    if (lt.row0 + 2 * k < s.h) {
      const uint8_t* row =
          s.p.prev +
          static_cast<size_t>(delta_moved_row(s.y0 + lt.row0 + 2 * k, dy, s.p.height)) *
              s.p.prev_pitch;
#pragma unroll
      for (int b = 0; b < 4; b++) {
        if (b < lt.nvalid) {
          const int px = (lt.col + b) / c, ch = lt.col + b - px * c;
          const int x = min(max(px + dx, 0), last);
          add(byte_of(lt.cur[k], b), row[x * c + ch]);
        }
      }
    }
  }
  *any |= nonzero;
  return total;
}

// Row k's word of a whole tile moved by (dx, dy) whole pixels inside the
// plane (moved_inside): one load, two and a funnel shift unaligned.
__device__ __forceinline__ uint32_t moved_word(const LaneTile& lt, const TileSite& s, int dx,
                                               int dy, int k) {
  const uint8_t* first = lt.prev + static_cast<ptrdiff_t>(dy + 2 * k) *
                                       static_cast<ptrdiff_t>(s.p.prev_pitch) +
                         dx * s.p.pixel_bytes;
  const unsigned shift = static_cast<unsigned>(reinterpret_cast<uintptr_t>(first) & 3);
  const uint32_t* word = reinterpret_cast<const uint32_t*>(first - shift);
  return shift ? __funnelshift_r(word[0], word[1], 8 * shift) : word[0];
}

// The rounded mean of four words' bytes, (a + b + c + d + 2) >> 2 each (two
// bytes at a time in 16-bit halves: no carry crosses them).
__device__ __forceinline__ uint32_t mean4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  constexpr uint32_t kLow = 0x00ff00ffu, kTwo = 0x00020002u;
  const uint32_t lo = (a & kLow) + (b & kLow) + (c & kLow) + (d & kLow) + kTwo;
  const uint32_t hi = ((a >> 8) & kLow) + ((b >> 8) & kLow) + ((c >> 8) & kLow) +
                      ((d >> 8) & kLow) + kTwo;
  return ((lo >> 2) & kLow) | (((hi >> 2) & kLow) << 8);
}

// The word of a half-pixel position from the whole-pixel words around it,
// as delta_moved_byte: w[r][c] is moved by (x + c - 1, y + r - 1) whole
// pixels, the position (2 x + ox, 2 y + oy) half pixels, ox, oy in -1..1.
__device__ __forceinline__ uint32_t half_word(const uint32_t (&w)[3][3], int ox, int oy) {
  const int c0 = ox < 0 ? 0 : 1, r0 = oy < 0 ? 0 : 1;  // the whole pixel at or left of / above it
  if (ox == 0 && oy == 0)
    return w[1][1];
  if (oy == 0)
    return __vavgu4(w[1][c0], w[1][c0 + 1]);
  if (ox == 0)
    return __vavgu4(w[r0][1], w[r0 + 1][1]);
  return mean4(w[r0][c0], w[r0][c0 + 1], w[r0 + 1][c0], w[r0 + 1][c0 + 1]);
}

// Row k's words of the whole tile moved by (x + c - 1, y + r - 1) for r, c
// in 0..2, as half_word reads them (stage 3's sums: eight candidates from
// nine loads).
__device__ __forceinline__ void around_words(const LaneTile& lt, const TileSite& s, int x, int y,
                                             int k, uint32_t (&w)[3][3]) {
#pragma unroll
  for (int r = 0; r < 3; r++)
#pragma unroll
    for (int c = 0; c < 3; c++) w[r][c] = moved_word(lt, s, x + c - 1, y + r - 1, k);
}

// Row k's word of the whole tile moved by v (half pixels), as
// delta_moved_byte, when every whole-pixel tile it averages is inside the
// plane (moved_inside): the one, two or four words it reads, as half_word
// takes them from around_words.
__device__ __forceinline__ uint32_t half_moved_word(const LaneTile& lt, const TileSite& s,
                                                    DeltaVector v, int k) {
  const int ix = delta_whole_pixels(v.dx), iy = delta_whole_pixels(v.dy);
  const bool fx = v.dx & 1, fy = v.dy & 1;
  const uint32_t at = moved_word(lt, s, ix, iy, k);
  if (fx && fy)
    return mean4(at, moved_word(lt, s, ix + 1, iy, k), moved_word(lt, s, ix, iy + 1, k),
                 moved_word(lt, s, ix + 1, iy + 1, k));
  if (fx)
    return __vavgu4(at, moved_word(lt, s, ix + 1, iy, k));
  return fy ? __vavgu4(at, moved_word(lt, s, ix, iy + 1, k)) : at;
}

// The lane's bytes of the tile moved by v (half pixels), byte by byte
// (stage 3 and its cost only: 8 candidates a tile), into f(source,
// predicted).
template <class F>
__device__ __forceinline__ void lane_moved_bytes(const LaneTile& lt, const TileSite& s,
                                                 DeltaVector v, F&& f) {
#pragma unroll
  for (int k = 0; k < kRowsPerLane; k++) {
    if (lt.row0 + 2 * k < s.h) {
#pragma unroll
      for (int b = 0; b < 4; b++)
        if (b < lt.nvalid)
          f(byte_of(lt.cur[k], b),
            delta_moved_byte(s.p.prev, s.p.prev_pitch, lt.col + b, s.y0 + lt.row0 + 2 * k, v,
                             s.p.pixel_bytes, s.p.row_bytes, s.p.height));
    }
  }
}

__device__ __noinline__ int lane_sad_half(const LaneTile& lt, const TileSite& s, DeltaVector v) {
  int sad = 0;
  lane_moved_bytes(lt, s, v, [&](int source, int predicted) { sad += abs(source - predicted); });
  return sad;
}

// The lane's part of the cost of coding the tile predicted from the
// reference moved by v (half pixels), as lane_cost: a word at a time when
// `words_inside` (every whole-pixel tile it averages inside the plane),
// else byte by byte. Once a tile: out of line, so that the search keeps
// its registers.
template <class Q>
__device__ __noinline__ int lane_cost_half(const LaneTile& lt, const TileSite& s, DeltaVector v,
                                           bool words_inside, const Q& q, const uint8_t* cost) {
  int total = 0;
  const auto add = [&](int source, int predicted) {
    total += cost[delta_fold(q.quantise(source - predicted))];
  };
  if (words_inside) {
#pragma unroll
    for (int k = 0; k < kRowsPerLane; k++) {
      const uint32_t predicted = half_moved_word(lt, s, v, k);
#pragma unroll
      for (int b = 0; b < 4; b++) add(byte_of(lt.cur[k], b), byte_of(predicted, b));
    }
  } else {
    lane_moved_bytes(lt, s, v, add);
  }
  return total;
}

// Eight blocks (32 warps) an SM: the search is a chain of loads, a sum and
// a comparison a candidate, so it needs warps to hide latency more than
// registers (H100, 2160p RGBA, every tile searched: 116 registers and four
// blocks 1.06 ms; 80 and six 1.01 ms; 64 and eight, some spilled, 0.93 ms).
template <bool kLossless>
__global__ void __launch_bounds__(kSearchThreads, 8)
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
  const int lane = threadIdx.x % 32, c = s.p.pixel_bytes;

  LaneTile lt;
  lt.row0 = lane / 16;
  const int x = 4 * (lane % 16);  // the word's first byte in the tile
  lt.nvalid = min(max(s.w - x, 0), 4);
  lt.mask = lt.nvalid >= 4 ? 0xffffffffu : (1u << (8 * lt.nvalid)) - 1u;
  lt.col = s.x0 + x;
  lt.px_first = s.x0 / c;
  lt.px_last = (s.x0 + s.w - 1) / c;
  lt.px_max = s.p.row_bytes / c - 1;
  lt.whole = s.w == kDeltaTileW && s.h == kDeltaTileH;
  lt.prev = s.p.prev + static_cast<size_t>(s.y0 + lt.row0) * s.p.prev_pitch + lt.col;
#pragma unroll
  for (int k = 0; k < kRowsPerLane; k++) {
    uint32_t w = 0;
    const int y = lt.row0 + 2 * k;
    if (y < s.h) {
      const uint8_t* src = s.p.cur + static_cast<size_t>(s.y0 + y) * s.p.cur_pitch + s.x0 + x;
#pragma unroll
      for (int b = 0; b < 4; b++)
        if (b < lt.nvalid)
          w |= static_cast<uint32_t>(src[b]) << (8 * b);
    }
    lt.cur[k] = w;
  }

  // The plain temporal coding: skipped when every symbol is 0.
  bool any = false;
  const int t_total = warp_sum(lane_cost(lt, s, 0, 0, q, cost, &any));
  const DeltaVector none;
  if (!__any_sync(0xffffffffu, any)) {
    if (lane == 0)
      vectors[tile] = none;
    return;
  }

  int best = warp_sum(lane_sad(lt, s, 0, 0)), bx = 0, by = 0;
  auto consider = [&](int dx, int dy) {  // uniform over the warp
    if (!delta_search_candidate(dx, dy))
      return;
    const int sad = warp_sum(lane_sad(lt, s, dx, dy));
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
  // Stage 3, in half pixels (as DeltaEncoder's search_tile). A whole tile
  // whose 3 x 3 whole-pixel neighbours of the best all lie inside the plane
  // (the common case) loads each neighbour's row word once and averages
  // them (__vavgu4 is the pair's rounded mean); others go byte by byte.
  const int wx = bx, wy = by;
  int hbx = 2 * bx, hby = 2 * by;
  const bool words_inside = moved_inside(lt, s, wx - 1, wy - 1) && moved_inside(lt, s, wx + 1, wy + 1);
  const bool exact = best == 0;  // no sum can be smaller: stage 3 has nothing to find
  unsigned half_sad[kDeltaSearchStage3] = {};
  if (words_inside && !exact) {
#pragma unroll
    for (int k = 0; k < kRowsPerLane; k++) {
      uint32_t w[3][3];
      around_words(lt, s, wx, wy, k, w);
#pragma unroll
      for (int j = 0; j < kDeltaSearchStage3; j++) {
        int hx = 0, hy = 0;
        delta_search_stage3(j, wx, wy, &hx, &hy);
        half_sad[j] = __dp4a(__vabsdiffu4(lt.cur[k], half_word(w, hx - 2 * wx, hy - 2 * wy)),
                             0x01010101u, half_sad[j]);
      }
    }
  }
#pragma unroll
  for (int j = 0; j < kDeltaSearchStage3 && !exact; j++) {
    int hx = 0, hy = 0;
    delta_search_stage3(j, wx, wy, &hx, &hy);
    if (!delta_search_half_candidate(hx, hy))
      continue;
    const int sad =
        words_inside
            ? warp_sum(static_cast<int>(half_sad[j]))
            : warp_sum(lane_sad_half(lt, s,
                                     DeltaVector{static_cast<int8_t>(hx), static_cast<int8_t>(hy)}));
    if (sad < best) {
      best = sad;
      hbx = hx;
      hby = hy;
    }
  }
  DeltaVector v;
  if (hbx != 0 || hby != 0) {
    // The moved coding's cost: kept only when below the plain one.
    const DeltaVector found{static_cast<int8_t>(hbx), static_cast<int8_t>(hby)};
    bool unused = false;
    int moved_cost = 0;
    if (!(hbx & 1) && !(hby & 1)) {
      moved_cost = warp_sum(lane_cost(lt, s, hbx / 2, hby / 2, q, cost, &unused));
    } else {
      moved_cost = warp_sum(lane_cost_half(lt, s, found, words_inside, q, cost));
    }
    if (moved_cost < t_total)
      v = found;
  }
  if (lane == 0)
    vectors[tile] = v;
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
