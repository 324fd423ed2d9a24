// Format 4's entropy stage on the CPU: per-frame frequency tables, lanes of
// tiles coded in parallel with two-state rANS (rans.hpp). The format is in
// docs/delta-format.md, "Version 4".
#include "cudafx/delta_tile_entropy.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <string>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "cudafx/delta_predict_math.hpp"
#include "cudafx/delta_tiles.hpp"
#include "cudafx/parallel.hpp"
#include "delta/bit_stream.hpp"
#include "delta/byte_order.hpp"
#include "delta/rans.hpp"
#include "delta/symbol_pairs_avx2.hpp"

namespace cudafx {

std::vector<DeltaLane> delta_lanes(const DeltaLayout& layout) {
  std::vector<DeltaLane> lanes;
  for (int i = 0; i < layout.n_planes; i++) {
    const DeltaPlaneLayout& p = layout.planes[i];
    for (int ty = 0; ty < p.tiles_y; ty++)
      for (int tx0 = 0; tx0 < p.tiles_x; tx0 += kDeltaLaneTiles) {
        DeltaLane l;
        l.plane = i;
        l.ty = ty;
        l.tx0 = tx0;
        l.tiles = std::min(kDeltaLaneTiles, p.tiles_x - tx0);
        l.first_tile = layout.first_tile[i] + static_cast<size_t>(ty) * p.tiles_x + tx0;
        for (int t = 0; t < l.tiles; t++)
          l.symbols += static_cast<size_t>(p.tile_width(tx0 + t)) * p.tile_height(ty);
        lanes.push_back(l);
      }
  }
  return lanes;
}

size_t delta_lane_most_pairs(const DeltaLane& lane) {
  return lane.symbols + static_cast<size_t>(lane.tiles) * (kDeltaTileH + 1);
}

namespace {

constexpr int kTableCountBits = 9;  // a table's alphabet size, 0..256, or:
constexpr uint32_t kTableReused = 511;  // the previous frame's table for the context
// Scaled tables (packet flag bit 7): each sent table's frequencies are
// multiples of 2^shift, sent divided by it, the shift in 4 bits after the
// size. A context with few values a frame (the row masks' 256-value
// alphabets above all) then pays for its table what its counts can tell:
// its table at full precision had cost more than its values (vtest.avi at
// T = 10: tables a twelfth of a delta frame).
constexpr int kTableShiftBits = 4;
constexpr int kMaxTableShift = static_cast<int>(kRansScaleBits);  // a table of one value at scale 1

struct Table {
  int n = 0;  // alphabet prefix in use; 0: the context is not used
  int shift = 0;  // the frequencies are multiples of 1 << shift (scaled tables)
  uint16_t freq[256] = {};
  uint16_t start[256] = {};
  void fill_starts() {
    uint32_t s = 0;
    for (int v = 0; v < n; v++) {
      start[v] = static_cast<uint16_t>(s);
      s += freq[v];
    }
  }
};

struct DecodeTable : Table {
  uint8_t symbol[kRansScale];  // slot -> symbol
  void fill_lookup() {
    for (int v = 0; v < n; v++)
      std::memset(symbol + start[v], v, freq[v]);
  }
};

// What the table making reads of one context's counts: the values seen, in
// order, their number and total, the alphabet prefix in use and the most
// frequent value (the lowest among equals). Made once a context a frame;
// the loops below then visit the values seen, not the whole alphabet (the
// tables of a frame had been ~4 % of the CPU encoder lossless: four
// normalisations and five costings of 256 values a context).
struct SeenValues {
  int n = 0, seen = 0, top = 0;
  uint64_t total = 0;
  uint16_t value[256];
  SeenValues(const uint32_t* counts, int alphabet) {
    for (int v = 0; v < alphabet; v++) {
      if (!counts[v])
        continue;
      total += counts[v];
      value[seen++] = static_cast<uint16_t>(v);
      n = v + 1;
      if (counts[v] > counts[top])
        top = v;
    }
  }
};

// The frequencies of one context from its counts: each value seen gets at
// least 1, the rest in proportion; the rounding is settled on the most
// frequent entries (the lowest value first among equals).
// With `shift`, the same at the scale kRansScale >> shift, each frequency
// then multiplied by 1 << shift. Returns false when that scale has fewer
// slots than the values seen (each needs one).
bool normalise(const uint32_t* counts, const SeenValues& seen, Table* t, int shift = 0) {
  const int64_t scale = kRansScale >> shift;
  const int n = seen.n;
  t->n = n;
  t->shift = shift;
  if (n == 0)
    return true;
  if (seen.seen > scale)
    return false;
  std::fill(t->freq, t->freq + n, uint16_t{0});
  int64_t sum = 0;
  const CountDivisor per_total(seen.total);
  for (int k = 0; k < seen.seen; k++) {
    const int v = seen.value[k];
    const uint32_t f = static_cast<uint32_t>(
        std::max<uint64_t>(1, per_total.divide(counts[v] * uint64_t(scale))));
    t->freq[v] = static_cast<uint16_t>(f);
    sum += f;
  }
  if (sum < scale)
    t->freq[seen.top] = static_cast<uint16_t>(t->freq[seen.top] + (scale - sum));
  while (sum > scale) {
    // The first of the largest (a value not seen has 0, below any seen).
    int big = seen.value[0];
    for (int k = 1; k < seen.seen; k++)
      if (t->freq[seen.value[k]] > t->freq[big])
        big = seen.value[k];
    const int64_t take = std::min<int64_t>(sum - scale, t->freq[big] - 1);
    t->freq[big] = static_cast<uint16_t>(t->freq[big] - take);
    sum -= take;
  }
  for (int k = 0; k < seen.seen; k++) {
    const int v = seen.value[k];
    t->freq[v] = static_cast<uint16_t>(t->freq[v] << shift);
  }
  t->fill_starts();
  return true;
}

// Bits of a table as written: its size, its shift (scaled tables), then
// each frequency's gamma code (2 floor(log2(f + 1)) + 1 bits; summed as
// integers, which the double holds exactly).
double table_bits(const Table& t, bool scaled) {
  uint32_t bits = kTableCountBits + (scaled ? kTableShiftBits : 0);
  for (int v = 0; v < t.n; v++) {
    const int z = 31 - __builtin_clz((t.freq[v] >> t.shift) + 1u);
    bits += 2 * z + 1;
  }
  return bits;
}

// The bits a value of frequency f costs, kRansScaleBits - log2(f), for
// every f in 1..kRansScale: the same doubles std::log2 gives, made once (a
// log2 a value seen, twice a context a frame, had been a fifth of the CUDA
// encoder's host time for its tables).
const double* symbol_bits() {
  static const std::vector<double> bits = [] {
    std::vector<double> b(kRansScale + 1, INFINITY);
    for (uint32_t f = 1; f <= kRansScale; f++)
      b[f] = kRansScaleBits - std::log2(static_cast<double>(f));
    return b;
  }();
  return bits.data();
}

// Bits `counts` cost under table `t`, or infinity when t cannot code them
// (summed in the order of the values, as every caller's).
double coded_bits(const uint32_t* counts, const SeenValues& seen, const Table& t) {
  const double* cost = symbol_bits();
  double bits = 0;
  for (int k = 0; k < seen.seen; k++) {
    const int v = seen.value[k];
    if (v >= t.n || t.freq[v] == 0)
      return INFINITY;
    bits += counts[v] * cost[t.freq[v]];
  }
  return bits;
}

// A new table for `counts`, into *t, and what it costs: its bits plus the
// values' under it. Scaled, the reference encoder's rule (docs/
// delta-format.md): of the shifts 0 and g - 1, g, g + 1 (those in 1..12),
// g = 12 - floor(log2(total)) (where a table of the total's precision
// would sit), the cheapest, the smallest on a tie. Three shifts found what
// all thirteen find within 0.4 % (bikes.mp4, T = 10), at a quarter of the
// host's time.
double choose_table(const uint32_t* counts, const SeenValues& seen, bool scaled, Table* t) {
  normalise(counts, seen, t);
  if (t->n == 0)
    return 0;
  double best = table_bits(*t, scaled) + coded_bits(counts, seen, *t);
  if (!scaled)
    return best;
  int log = 0;
  while ((seen.total >> (log + 1)) != 0) log++;
  const int g = static_cast<int>(kRansScaleBits) - log;
  Table trial;
  for (int shift = std::max(1, g - 1); shift <= std::min(kMaxTableShift, g + 1); shift++) {
    if (!normalise(counts, seen, &trial, shift))
      continue;
    const double bits = table_bits(trial, true) + coded_bits(counts, seen, trial);
    if (bits < best) {
      best = bits;
      *t = trial;
    }
  }
  return best;
}

int alphabet_of(int ctx, int range) {
  return ctx == kDeltaModeContext ? kDeltaModeCount : ctx >= kDeltaMaskContext0 ? 256 : range;
}

// Where a lane's tile lies in the symbol buffer. `row` is the plane's row
// bytes.
struct TileWalk {
  size_t base;  // the tile's first symbol in the buffer
  int w, h, c;
  size_t row;
};

// delta_symbol_coding of every pair of neighbour symbols (left << 8 |
// upper, 0 where there is none), for a temporal tile (a spatial one adds
// kDeltaActivityClasses to the context): its context | flip << 3.
// coding_at looks each symbol's coding up here; computed per symbol (two
// unfolds, the activity class and its branches) it was most of the
// encoder's histogram pass, a fifth of the CPU encoder lossless (perf,
// vtest.avi).
const uint8_t* symbol_coding_table() {
  static_assert(kDeltaActivityClasses <= 8, "a context in three bits");
  static const std::vector<uint8_t> table = [] {
    std::vector<uint8_t> t(256 * 256);
    for (int left = 0; left < 256; left++)
      for (int upper = 0; upper < 256; upper++) {
        const DeltaSymbolCoding c =
            delta_symbol_coding(kDeltaTemporal, delta_unfold(left), delta_unfold(upper));
        t[left << 8 | upper] = static_cast<uint8_t>(c.context | (c.flip ? 8 : 0));
      }
    return t;
  }();
  return table.data();
}


// How the symbol at (x, y) of a tile is coded, from its neighbours' symbols
// (delta_symbol_coding, looked up in `table`, symbol_coding_table()).
inline DeltaSymbolCoding coding_at(const uint8_t* table, const uint8_t* s, const TileWalk& w,
                                   int mode, int x, int y) {
  const uint8_t* here = s + w.base + static_cast<size_t>(y) * w.row + x;
  const int left = x >= w.c ? here[-w.c] : 0;
  const int upper = y > 0 ? here[-static_cast<ptrdiff_t>(w.row)] : 0;
  const int c = table[left << 8 | upper];
  return {(mode == kDeltaSpatial ? kDeltaActivityClasses : 0) + (c & 7), (c & 8) != 0};
}

#if defined(__SSE2__)
// The (context << 8 | value) pairs of 8 symbols of a tile row at once, as
// coding_at and the flip give them one by one (the table lookups, a
// 64 KB table, and their branches had been most of the encoder's
// histogram pass: a quarter of the CPU encoder lossless, perf on
// vtest.avi): `cur` the symbols, `left` and `upper` their neighbours
// (zero where there is none), `base` the mode's first context, `range`
// the alphabet. In 16-bit lanes: |k| = (m + 1) >> 1 and k < 0 for an odd
// m (delta_unfold); the activity class counts the thresholds 1, 2, 3, 5,
// 9, 17, 33 that |k_left| + |k_upper| reaches (delta_activity_class); the
// flip (their sum below zero) takes an odd m to m + 1 below the range (m
// at its top) and an even m > 0 to m - 1 (delta_flip_symbol).
inline void coded_pairs8(__m128i cur, __m128i left, __m128i upper, int base, int range,
                         uint16_t* out) {
  const __m128i zero = _mm_setzero_si128(), one = _mm_set1_epi16(1);
  const __m128i m = _mm_unpacklo_epi8(cur, zero);
  const __m128i l = _mm_unpacklo_epi8(left, zero), u = _mm_unpacklo_epi8(upper, zero);
  const __m128i mag_l = _mm_srli_epi16(_mm_add_epi16(l, one), 1);
  const __m128i mag_u = _mm_srli_epi16(_mm_add_epi16(u, one), 1);
  const __m128i neg_l = _mm_sub_epi16(zero, _mm_and_si128(l, one));  // 0xffff where odd
  const __m128i neg_u = _mm_sub_epi16(zero, _mm_and_si128(u, one));
  const __m128i k_sum = _mm_add_epi16(_mm_sub_epi16(_mm_xor_si128(mag_l, neg_l), neg_l),
                                      _mm_sub_epi16(_mm_xor_si128(mag_u, neg_u), neg_u));
  const __m128i a = _mm_add_epi16(mag_l, mag_u);
  static_assert(kDeltaActivityClasses == 8, "seven thresholds");
  __m128i cls = _mm_set1_epi16(static_cast<int16_t>(base));
  for (int t : {1, 2, 3, 5, 9, 17, 33})
    cls = _mm_sub_epi16(cls, _mm_cmpgt_epi16(a, _mm_set1_epi16(static_cast<int16_t>(t - 1))));
  const __m128i flip = _mm_cmpgt_epi16(zero, k_sum);
  const __m128i odd = _mm_cmpeq_epi16(_mm_and_si128(m, one), one);
  const __m128i plus = _mm_add_epi16(m, one);
  const __m128i below = _mm_cmpgt_epi16(_mm_set1_epi16(static_cast<int16_t>(range)), plus);
  const __m128i up_odd = _mm_or_si128(_mm_and_si128(below, plus), _mm_andnot_si128(below, m));
  const __m128i down_even =
      _mm_andnot_si128(_mm_cmpeq_epi16(m, zero), _mm_sub_epi16(m, one));  // 0 stays 0
  const __m128i flipped = _mm_or_si128(_mm_and_si128(odd, up_odd), _mm_andnot_si128(odd, down_even));
  const __m128i value = _mm_or_si128(_mm_and_si128(flip, flipped), _mm_andnot_si128(flip, m));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_or_si128(_mm_slli_epi16(cls, 8), value));
}
#endif

}  // namespace

struct DeltaTileEntropy::Impl {
  DeltaLayout layout;
  std::vector<DeltaLane> lanes;
  std::vector<size_t> slot_offset;  // encoder: each lane's room in `room`
  std::vector<uint8_t> room;
  std::vector<uint32_t> stream_size;
  // One histogram a worker, each on cache lines of its own (128 bytes: the
  // pair of lines a core's prefetcher fetches together). Allocated one
  // after another, two workers' histograms had shared a line: the first's
  // last counts (the last mask context's high values, 0xff the commonest
  // mask lossless) and the second's first (context 0's small values), the
  // line moving between the two cores at their increments (session 30:
  // the encode loop +5 % on bikes.mp4 lossless, +8 % on bigbuckbunny.mp4
  // lossless, with the two virtual CPUs far apart).
  struct alignas(128) Histogram {
    uint32_t n[kDeltaContexts * 256];
  };
  std::vector<Histogram> counts;
  // Encoder: each lane's (context, value) pairs in stream order, as the
  // histogram pass finds them, for the coding pass to read backwards, each
  // as 2 * (context << 8 | value) (the coding pass's index). The
  // encoder's buffers (about 4 bytes a frame byte) are made at its first
  // frame: a decoder never needs them.
  size_t room_bytes = 0, sequence_length = 0;
  std::vector<uint16_t> sequence;
  std::vector<size_t> sequence_offset;
  std::vector<size_t> sequence_size;
  std::vector<int> order;  // the lanes in pairs, -1 for none (the coding pass)
  // Encoder: the first lane of each tile row (all planes'), and one past
  // the last: the histogram pass's job is a tile row (count_row), run by
  // the tile pass as each row is done or else in the tile pass's shares
  // (row_first, delta_tile_row_shares); row_share[r] is the share of the
  // thread that counted row r, and the coding pass's shares of lane pairs
  // (pair_first) follow them, so that a lane's sequence is read by the
  // core that wrote it.
  std::vector<int> row_lanes;
  std::vector<int> row_share;
  int row_first[kParallelMostShares + 1] = {};
  int pair_first[kParallelMostShares + 1] = {};
  // The frame count_frame set up, until encode() takes its counts.
  struct Counting {
    bool open = false;
    int quantiser = 0;
    bool keyframe = false;
    const uint8_t* symbols = nullptr;
    const uint8_t* modes = nullptr;
  } counting;
  Table enc[kDeltaContexts];
  Table fresh[kDeltaContexts];  // encode_tables: each context's new table
  bool scaled = true;  // tables with a shift (set_scaled_tables)
  // How each (context, value) is coded under enc (encode_tables), as
  // RansSymbols: entries at and past a context's enc[ctx].n are zero.
  // Remade only for the contexts whose table a frame changes, and so is
  // `mirror`, the caller's copy that the last encode_tables filled.
  std::vector<DeltaCodingEntry> coding = std::vector<DeltaCodingEntry>(kDeltaContexts * 256);
  int coded_n[kDeltaContexts] = {};  // enc[ctx].n when its entries were made
  DeltaCodingEntry* mirror = nullptr;
  std::unique_ptr<DecodeTable[]> dec{new DecodeTable[kDeltaContexts]};
  // Whether enc / dec hold a table the next frame may reuse: the one the
  // last frame since the last keyframe coded the context with.
  bool enc_valid[kDeltaContexts] = {}, dec_valid[kDeltaContexts] = {};
  std::vector<size_t> lane_begin;  // decoder

  TileWalk walk(const DeltaLane& l, int t) const {
    const DeltaPlaneLayout& p = layout.planes[l.plane];
    const int tx = l.tx0 + t;
    return {layout.plane_offset[l.plane] + static_cast<size_t>(l.ty) * kDeltaTileH * p.row_bytes +
                static_cast<size_t>(tx) * kDeltaTileW,
            p.tile_width(tx), p.tile_height(l.ty), p.pixel_bytes, static_cast<size_t>(p.row_bytes)};
  }

  // Calls emit(context << 8 | value) for every symbol of lane `li` in
  // stream order: per tile its mode (delta frames), then, unless skipped,
  // per row its mask and the symbols of the groups the mask sets.
  // emit_row(row, above, c, mask_context, base, &mask) may emit a whole
  // tile row itself, its mask and its groups (returns whether it did).
  template <class Emit, class EmitRow>
  void walk_lane(int li, bool keyframe, const uint8_t* symbols, const uint8_t* modes,
                 int range, Emit emit, EmitRow emit_row) const {
    const DeltaLane& l = lanes[li];
    const uint8_t* const coding = symbol_coding_table();
    uint8_t flipped[256];
    for (int m = 0; m < 256; m++) flipped[m] = static_cast<uint8_t>(delta_flip_symbol(m, range));
    for (int t = 0; t < l.tiles; t++) {
      const int mode = modes[l.first_tile + t];
      if (!keyframe)
        emit(kDeltaModeContext << 8 | mode);
      if (mode == kDeltaSkip)
        continue;
      const TileWalk w = walk(l, t);
      const int groups = (w.w + kDeltaGroupBytes - 1) / kDeltaGroupBytes;
      unsigned above = 0;
      for (int y = 0; y < w.h; y++) {
        const uint8_t* row = symbols + w.base + static_cast<size_t>(y) * w.row;
        const int base = mode == kDeltaSpatial ? kDeltaActivityClasses : 0;
        if (w.w == kDeltaTileW && emit_row(row, y > 0 ? row - w.row : nullptr, w.c,
                                           delta_mask_context(y == 0, above), base, &above))
          continue;
        static_assert(kDeltaGroupBytes == sizeof(uint64_t), "a group is a word");
        // A whole group is tested as one 8-byte word, and its bit set
        // without a branch (most groups are all zero at some thresholds,
        // most are not lossless: byte by byte each cost eight loads and
        // branches, and a branch a group mispredicted on moving footage).
        // (A whole tile's row, the common case, has a constant count.)
        unsigned mask = 0;
        const auto test_group = [&](int g) {
          const int x0 = g * kDeltaGroupBytes, x1 = std::min(w.w, x0 + kDeltaGroupBytes);
          unsigned any = 0;
          if (x1 - x0 == kDeltaGroupBytes) {
            uint64_t word;
            std::memcpy(&word, row + x0, sizeof word);
            any = word != 0;
          } else {
            for (int x = x0; x < x1; x++) any |= row[x] != 0;
          }
          mask |= any << g;
        };
        if (w.w == kDeltaTileW) {
          for (int g = 0; g < kDeltaTileW / kDeltaGroupBytes; g++) test_group(g);
        } else {
          for (int g = 0; g < groups; g++) test_group(g);
        }
        emit(delta_mask_context(y == 0, above) << 8 | static_cast<int>(mask));
        for (int g = 0; g < groups; g++) {
          if (!(mask & (1u << g)))
            continue;
          const int x0 = g * kDeltaGroupBytes, x1 = std::min(w.w, x0 + kDeltaGroupBytes);
#if defined(__SSE2__)
          if (x1 - x0 == kDeltaGroupBytes) {  // a whole group
            const __m128i cur = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + x0));
            // The left neighbours: bytes c before; in the first group the
            // first c have none (0), so there they are the group shifted.
            const __m128i left =
                x0 >= w.c ? _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + x0 - w.c))
                          : _mm_slli_epi64(cur, 8 * w.c);
            const __m128i upper =
                y > 0 ? _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + x0 - w.row))
                      : _mm_setzero_si128();
            uint16_t pairs[kDeltaGroupBytes];
            coded_pairs8(cur, left, upper, base, range, pairs);
            for (uint16_t pair : pairs) emit(pair);
            continue;
          }
#endif
          for (int x = x0; x < x1; x++) {
            const DeltaSymbolCoding c = coding_at(coding, symbols, w, mode, x, y);
            emit(c.context << 8 | (c.flip ? flipped[row[x]] : row[x]));
          }
        }
        above = mask;
      }
    }
  }
};

Status DeltaTileEntropy::create(const DeltaLayout& layout, std::unique_ptr<DeltaTileEntropy>* out) {
  std::unique_ptr<DeltaTileEntropy> e(new DeltaTileEntropy());
  e->impl_.reset(new Impl());
  Impl& m = *e->impl_;
  m.layout = layout;
  m.lanes = delta_lanes(layout);
  size_t room = 0, seq = 0;
  for (const DeltaLane& l : m.lanes) {
    m.slot_offset.push_back(room);
    m.sequence_offset.push_back(seq);
    room += delta_lane_room(l);
    seq += delta_lane_most_pairs(l);
  }
  m.slot_offset.push_back(room);
  for (int li = 0; li < static_cast<int>(m.lanes.size()); li++)
    if (li == 0 || m.lanes[li].tx0 == 0)
      m.row_lanes.push_back(li);
  m.row_lanes.push_back(static_cast<int>(m.lanes.size()));
  m.row_share.assign(m.row_lanes.size() - 1, 0);
  delta_tile_row_shares(layout, m.row_first);
  m.room_bytes = room;
  m.sequence_length = seq;
  m.stream_size.resize(m.lanes.size());
  m.lane_begin.resize(m.lanes.size() + 1);
  m.sequence_size.resize(m.lanes.size());
  *out = std::move(e);
  return Status::ok();
}

DeltaTileEntropy::~DeltaTileEntropy() = default;

const std::vector<DeltaLane>& DeltaTileEntropy::lanes() const { return impl_->lanes; }

void DeltaTileEntropy::reset() {
  std::fill(std::begin(impl_->enc_valid), std::end(impl_->enc_valid), false);
  std::fill(std::begin(impl_->dec_valid), std::end(impl_->dec_valid), false);
}

void DeltaTileEntropy::count_frame(int quantiser, bool keyframe, const uint8_t* symbols,
                                   const uint8_t* modes) {
  Impl& m = *impl_;
  if (m.room.size() != m.room_bytes) {
    m.room.resize(m.room_bytes);
    m.sequence.resize(m.sequence_length);
    m.counts.assign(cpu_worker_count(), Impl::Histogram{});
  }
  for (auto& c : m.counts) std::fill(std::begin(c.n), std::end(c.n), 0u);
  m.counting = {true, quantiser, keyframe, symbols, modes};
}

void DeltaTileEntropy::count_row(int tile_row, int worker) {
  Impl& m = *impl_;
  const Impl::Counting& f = m.counting;
  if (!f.open || tile_row < 0 || tile_row >= static_cast<int>(m.row_share.size()) || worker < 0 ||
      worker >= static_cast<int>(m.counts.size()))
    return;  // no frame set up (encode() will count it), or no such row or worker
  const NearLossless nl(f.quantiser);
  static const DeltaRowPairs row_pairs = delta_row_pairs_avx2();
  // A lane is coded unless all its tiles are skipped (then it is absent).
  const auto present = [&](const DeltaLane& l) {
    bool any = f.keyframe;
    for (int t = 0; t < l.tiles && !any; t++) any = f.modes[l.first_tile + t] != kDeltaSkip;
    return any;
  };
  m.row_share[tile_row] = parallel_worker_share(worker);
  uint32_t* const counts = m.counts[worker].n;
  for (int li = m.row_lanes[tile_row]; li < m.row_lanes[tile_row + 1]; li++) {
    m.sequence_size[li] = 0;
    if (!present(m.lanes[li]))
      continue;
    uint16_t* seq = m.sequence.data() + m.sequence_offset[li];
    size_t n = 0;
    m.walk_lane(
        li, f.keyframe, f.symbols, f.modes, nl.range,
        [&](int pair) {
          counts[pair]++;  // counts[context * 256 + value]
          seq[n++] = static_cast<uint16_t>(2 * pair);
        },
        [&](const uint8_t* row, const uint8_t* above, int c, int mask_context, int base,
            unsigned* mask) {
          if (!row_pairs)
            return false;
          n += row_pairs(row, above, c, mask_context, base, nl.range, seq + n, counts, mask);
          return true;
        });
    m.sequence_size[li] = n;
  }
}

Status DeltaTileEntropy::encode(int quantiser, bool keyframe, const uint8_t* symbols,
                                const uint8_t* modes, std::vector<uint8_t>* out,
                                bool reuse_tables) {
  Impl& m = *impl_;
  const int n_lanes = static_cast<int>(m.lanes.size());
  // 1. Histograms of every context, each worker's rows into its own: done
  // row by row in the tile pass (count_frame, count_row) or else here.
  const Impl::Counting& f = m.counting;
  if (!(f.open && f.quantiser == quantiser && f.keyframe == keyframe && f.symbols == symbols &&
        f.modes == modes)) {
    count_frame(quantiser, keyframe, symbols, modes);
    parallel_for_shares(m.row_first, [&](int tile_row, int worker) { count_row(tile_row, worker); });
  }
  m.counting.open = false;
  uint32_t* const total = m.counts[0].n;
  for (size_t k = 1; k < m.counts.size(); k++)
    for (size_t v = 0; v < kDeltaContexts * 256; v++) total[v] += m.counts[k].n[v];
  // 2. Tables.
  CUDAFX_TRY(encode_tables(quantiser, keyframe, total, reuse_tables, out, nullptr));
  // 3. Lanes, each backwards into its own room, from the entries
  // encode_tables made (m.coding). A lane's coding is one chain of
  // dependent steps (two states taking turns), so a worker codes two lanes
  // side by side, their chains interleaved; the lanes are paired longest
  // with next longest and the longest pairs go first (the last to start
  // are the shortest, so the workers finish together).
  // Paired within the share of the thread that counted them (row_share),
  // so that a lane is coded on the core whose histogram pass wrote its
  // sequence.
  const auto longer = [&](int a, int b) {
    return m.sequence_size[a] != m.sequence_size[b] ? m.sequence_size[a] > m.sequence_size[b]
                                                    : a < b;
  };
  m.order.clear();
  const int rows = static_cast<int>(m.row_share.size());
  for (int k = 0; k < parallel_share_count(); k++) {
    const size_t first = m.order.size();
    m.pair_first[k] = static_cast<int>(first / 2);
    for (int r = 0; r < rows; r++)
      if (m.row_share[r] == k)
        for (int li = m.row_lanes[r]; li < m.row_lanes[r + 1]; li++) m.order.push_back(li);
    std::sort(m.order.begin() + first, m.order.end(), longer);
    if ((m.order.size() - first) % 2)
      m.order.push_back(-1);  // the share's shortest lane codes alone
  }
  m.pair_first[parallel_share_count()] = static_cast<int>(m.order.size() / 2);
  parallel_for_shares(m.pair_first, [&](int pair, int) {
    // Locals, not captures: the byte stores could alias what the closure
    // reaches, which would then be loaded again after each store.
    const char* const entries = reinterpret_cast<const char*>(m.coding.data());
    const auto sym = [entries](uint16_t index2) -> const RansSymbol& {
      return *reinterpret_cast<const RansSymbol*>(entries + size_t{index2} * 8);
    };
    const uint16_t* const sequence = m.sequence.data();
    uint8_t* const room = m.room.data();
    const int la = m.order[2 * pair];
    const int lb = m.order[2 * pair + 1];
    // The symbols, last first (rANS); each is twice its entry's index
    // (context << 8 | value): the entry's offset in 8-byte units, which
    // the loads take as a scaled index (an index of 16-byte entries cost
    // a shift and an add a symbol).
    const uint16_t* const seq_a = sequence + m.sequence_offset[la];
    uint8_t* const end_a = room + m.slot_offset[la + 1];
    const size_t na = m.sequence_size[la];
    RansWriter a(end_a);
    size_t ka = na;
    if (lb >= 0) {
      const uint16_t* const seq_b = sequence + m.sequence_offset[lb];
      uint8_t* const end_b = room + m.slot_offset[lb + 1];
      const size_t nb = m.sequence_size[lb];  // <= na
      RansWriter b(end_b);
      for (size_t kb = nb; kb > 0; ka--, kb--) {
        a.put(sym(seq_a[ka - 1]));
        b.put(sym(seq_b[kb - 1]));
      }
      // absent (a present lane has a mode or a mask)
      m.stream_size[lb] = nb ? static_cast<uint32_t>(end_b - b.finish()) : 0;
    }
    for (; ka > 0; ka--) a.put(sym(seq_a[ka - 1]));
    m.stream_size[la] = na ? static_cast<uint32_t>(end_a - a.finish()) : 0;
  });
  // 4. Directory: which lanes are present, their sizes; then the streams.
  append_lanes(m.stream_size.data(), out);
  for (int li = 0; li < n_lanes; li++) {
    const uint8_t* end = m.room.data() + m.slot_offset[li + 1];
    out->insert(out->end(), end - m.stream_size[li], end);
  }
  return Status::ok();
}

Status DeltaTileEntropy::encode_tables(int quantiser, bool keyframe, const uint32_t* total,
                                       bool reuse_tables, std::vector<uint8_t>* out,
                                       DeltaCodingEntry* coding) {
  Impl& m = *impl_;
  const NearLossless nl(quantiser);
  // Tables, written as they are made: the previous frame's where it codes
  // this frame's counts in fewer bits than a new one and its table. Values
  // are checked first, so that a frame refused leaves the tables as the
  // decoder has them.
  for (int ctx = 0; ctx < kDeltaContexts; ctx++)
    for (int v = alphabet_of(ctx, nl.range); v < 256; v++)
      if (total[ctx * 256 + v])
        return Status::invalid("delta v4 encoder: symbol " + std::to_string(v) +
                               " beyond the alphabet of context " + std::to_string(ctx));
  if (keyframe)
    reset();
  // Each context's choice is its own: made on every core, then written in
  // order (one core had taken them in turn while the others waited). Not
  // for a coder whose lanes run elsewhere (the CUDA encoder, `coding`
  // given): its host thread alone, which is what its host time counts.
  const auto for_each_context = [&](const std::function<void(int, int)>& fn) {
    if (coding) {
      for (int ctx = 0; ctx < kDeltaContexts; ctx++) fn(ctx, 0);
    } else {
      parallel_for(kDeltaContexts, fn);
    }
  };
  bool reuse[kDeltaContexts];
  for_each_context([&](int ctx, int) {
    const int alphabet = alphabet_of(ctx, nl.range);
    const uint32_t* counts = &total[ctx * 256];
    Table& fresh = m.fresh[ctx];
    const SeenValues seen(counts, alphabet);
    const double fresh_bits = choose_table(counts, seen, m.scaled, &fresh);
    const bool can_reuse = reuse_tables && m.enc_valid[ctx] && m.enc[ctx].n <= alphabet;
    reuse[ctx] =
        can_reuse && (fresh.n == 0 || coded_bits(counts, seen, m.enc[ctx]) <= fresh_bits);
  });
  BitWriter bits(out);
  bool changed[kDeltaContexts] = {};
  for (int ctx = 0; ctx < kDeltaContexts; ctx++) {
    if (reuse[ctx]) {
      bits.put(kTableReused, kTableCountBits);
      continue;
    }
    const Table& fresh = m.fresh[ctx];
    m.enc[ctx] = fresh;
    m.enc_valid[ctx] = fresh.n > 0;
    changed[ctx] = true;
    bits.put(static_cast<uint32_t>(fresh.n), kTableCountBits);
    if (m.scaled && fresh.n > 0)
      bits.put(static_cast<uint32_t>(fresh.shift), kTableShiftBits);
    for (int v = 0; v < fresh.n; v++) bits.gamma((fresh.freq[v] >> fresh.shift) + 1u);
  }
  bits.flush();
  static_assert(sizeof(RansSymbol) == sizeof(DeltaCodingEntry) &&
                    alignof(RansSymbol) <= alignof(DeltaCodingEntry),
                "coding entries are RansSymbols");
  const RansDivisors& div = rans_divisors();
  auto* sym = reinterpret_cast<RansSymbol*>(m.coding.data());
  const bool whole = coding && coding != m.mirror;  // a buffer not filled before
  for_each_context([&](int ctx, int) {
    if (!changed[ctx] && !whole)
      return;
    // Entries up to the longer of the old and the new table: past both
    // they are zero already.
    const Table& t = m.enc[ctx];
    const int upto = whole ? 256 : std::max(t.n, m.coded_n[ctx]);
    if (changed[ctx]) {
      for (int v = 0; v < upto; v++) {
        RansSymbol& e = sym[ctx * 256 + v];
        if (v < t.n && t.freq[v])
          e.set(t.start[v], t.freq[v], div);
        else
          e.clear();
      }
      m.coded_n[ctx] = t.n;
    }
    if (coding)
      std::copy(m.coding.begin() + ctx * 256, m.coding.begin() + ctx * 256 + upto,
                coding + ctx * 256);
  });
  m.mirror = coding;  // none: the next buffer is filled whole
  return Status::ok();
}

void DeltaTileEntropy::append_lanes(const uint32_t* sizes, std::vector<uint8_t>* out) const {
  // Sized once and written in place (two bytes inserted at a time, the
  // CUDA encoder's host spent ~40 us a 2160p RGBA frame here).
  const size_t n_lanes = impl_->lanes.size();
  const size_t dir = out->size();
  size_t present = 0;
  for (size_t li = 0; li < n_lanes; li++) present += sizes[li] != 0;
  out->resize(dir + (n_lanes + 7) / 8 + 2 * present, 0);
  uint8_t* bits = out->data() + dir;
  uint8_t* size_at = bits + (n_lanes + 7) / 8;
  for (size_t li = 0; li < n_lanes; li++)
    if (sizes[li]) {
      bits[li / 8] = static_cast<uint8_t>(bits[li / 8] | (1u << (li % 8)));
      put16(size_at, static_cast<uint16_t>(sizes[li]));
      size_at += 2;
    }
}

Status DeltaTileEntropy::decode_tables(int quantiser, bool keyframe, const uint8_t* data,
                                       size_t size, bool reuse_allowed,
                                       std::vector<size_t>* lane_begin) {
  Impl& m = *impl_;
  auto bad = [](const std::string& why) { return Status::invalid("v4 payload: " + why); };
  const NearLossless nl(quantiser);
  const int n_lanes = static_cast<int>(m.lanes.size());
  lane_begin->resize(n_lanes + 1);
  // 1. Tables.
  if (keyframe)
    reset();
  BitReader bits(data, size);
  for (int ctx = 0; ctx < kDeltaContexts; ctx++) {
    DecodeTable& t = m.dec[ctx];
    uint32_t n = 0;
    if (!bits.get(kTableCountBits, &n))
      return bad("truncated tables");
    if (n == kTableReused) {
      if (!reuse_allowed)
        return bad("table " + std::to_string(ctx) + " reused in a stream with intra refresh");
      if (!m.dec_valid[ctx])
        return bad("table " + std::to_string(ctx) + " reused, but there is none to reuse");
      if (t.n > alphabet_of(ctx, nl.range))
        return bad("reused table " + std::to_string(ctx) + " has more entries than its alphabet");
      continue;
    }
    m.dec_valid[ctx] = false;  // until it is whole
    if (static_cast<int>(n) > alphabet_of(ctx, nl.range))
      return bad("table " + std::to_string(ctx) + " has " + std::to_string(n) +
                 " entries, more than its alphabet");
    t.n = static_cast<int>(n);
    uint32_t shift = 0;
    if (m.scaled && t.n > 0) {
      if (!bits.get(kTableShiftBits, &shift))
        return bad("truncated tables");
      if (shift > static_cast<uint32_t>(kMaxTableShift))
        return bad("table " + std::to_string(ctx) + " has scale shift " + std::to_string(shift) +
                   ", beyond " + std::to_string(kMaxTableShift));
    }
    t.shift = static_cast<int>(shift);
    uint32_t sum = 0;
    for (int v = 0; v < t.n; v++) {
      uint32_t g = 0;  // 13: no frequency needs more
      if (!bits.gamma(&g, 13) || g - 1 > (static_cast<uint32_t>(kRansScale) >> shift))
        return bad("bad frequency in table " + std::to_string(ctx));
      t.freq[v] = static_cast<uint16_t>((g - 1) << shift);
      sum += (g - 1) << shift;
    }
    if (t.n && sum != kRansScale)
      return bad("frequencies of table " + std::to_string(ctx) + " add up to " +
                 std::to_string(sum));
    t.fill_starts();
    t.fill_lookup();
    m.dec_valid[ctx] = t.n > 0;
  }
  size_t pos = bits.bytes_read();
  // 2. Directory.
  const size_t present_bytes = (m.lanes.size() + 7) / 8;
  if (size - pos < present_bytes)
    return bad("truncated lane directory");
  const uint8_t* present = data + pos;
  pos += present_bytes;
  size_t n_present = 0;
  for (int li = 0; li < n_lanes; li++) {
    const bool on = present[li / 8] & (1u << (li % 8));
    if (keyframe && !on)
      return bad("keyframe without lane " + std::to_string(li));
    n_present += on;
  }
  for (size_t k = m.lanes.size(); k < present_bytes * 8; k++)
    if (present[k / 8] & (1u << (k % 8)))
      return bad("lane bits beyond the last lane");
  if ((size - pos) / 2 < n_present)
    return bad("truncated lane sizes");
  const uint8_t* sizes = data + pos;
  pos += 2 * n_present;
  size_t at = pos;
  for (int li = 0, k = 0; li < n_lanes; li++) {
    (*lane_begin)[li] = at;
    if (present[li / 8] & (1u << (li % 8))) {
      const size_t s = get16(sizes + 2 * k++);
      if (s < 8)
        return bad("lane " + std::to_string(li) + " shorter than its states");
      at += s;
    }
  }
  (*lane_begin)[n_lanes] = at;
  if (at != size)
    return bad("lane sizes add up to " + std::to_string(at - pos) + " bytes but " +
               std::to_string(size - pos) + " follow");
  return Status::ok();
}

void DeltaTileEntropy::set_scaled_tables(bool scaled) { impl_->scaled = scaled; }
bool DeltaTileEntropy::scaled_tables() const { return impl_->scaled; }

int DeltaTileEntropy::decoding_table(int ctx, uint8_t* slot_values, uint32_t* spans) const {
  const DecodeTable& t = impl_->dec[ctx];
  if (!t.n)
    return 0;
  std::memcpy(slot_values, t.symbol, kRansScale);
  for (int v = 0; v < t.n; v++)
    spans[v] = static_cast<uint32_t>(t.start[v]) | static_cast<uint32_t>(t.freq[v]) << 16;
  return t.n;
}

Status DeltaTileEntropy::decode(int quantiser, bool keyframe, const uint8_t* data, size_t size,
                                size_t coded, uint8_t* symbols, uint8_t* modes,
                                bool reuse_allowed) {
  Impl& m = *impl_;
  auto bad = [](const std::string& why) { return Status::invalid("v4 payload: " + why); };
  const NearLossless nl(quantiser);
  const int n_lanes = static_cast<int>(m.lanes.size());
  // 1, 2. Tables and directory.
  CUDAFX_TRY(decode_tables(quantiser, keyframe, data, size, reuse_allowed, &m.lane_begin));
  // 3. Lanes.
  std::atomic<int> failed{-1};
  std::atomic<size_t> decoded{0};
  parallel_for(n_lanes, [&](int li, int) {
    const DeltaLane& l = m.lanes[li];
    if (m.lane_begin[li] == m.lane_begin[li + 1]) {
      std::memset(modes + l.first_tile, kDeltaSkip, l.tiles);
      return;
    }
    RansReader reader(data + m.lane_begin[li], data + m.lane_begin[li + 1]);
    auto take = [&](int ctx, int* v) {
      const DecodeTable& t = m.dec[ctx];
      if (!t.n)
        return false;
      *v = t.symbol[reader.slot()];
      reader.take(t.start[*v], t.freq[*v]);
      return true;
    };
    const uint8_t* const coding = symbol_coding_table();
    size_t n = 0;
    bool ok = true;
    for (int t = 0; t < l.tiles && ok; t++) {
      int mode = kDeltaSpatial;
      if (!keyframe)
        ok = take(kDeltaModeContext, &mode);
      modes[l.first_tile + t] = static_cast<uint8_t>(mode);
      if (!ok || mode == kDeltaSkip)
        continue;
      const TileWalk w = m.walk(l, t);
      const int groups = (w.w + kDeltaGroupBytes - 1) / kDeltaGroupBytes;
      int above = 0;
      for (int y = 0; y < w.h && ok; y++) {
        uint8_t* row = symbols + w.base + static_cast<size_t>(y) * w.row;
        int mask = 0;
        ok = take(delta_mask_context(y == 0, static_cast<unsigned>(above)), &mask) &&
             (mask >> groups) == 0;
        for (int g = 0; g < groups && ok; g++) {
          const int x0 = g * kDeltaGroupBytes, x1 = std::min(w.w, x0 + kDeltaGroupBytes);
          if (!(mask & (1 << g))) {
            std::memset(row + x0, 0, x1 - x0);
            continue;
          }
          for (int x = x0; x < x1 && ok; x++) {
            int v = 0;
            const DeltaSymbolCoding c = coding_at(coding, symbols, w, mode, x, y);
            ok = take(c.context, &v);
            row[x] = static_cast<uint8_t>(c.flip ? delta_flip_symbol(v, nl.range) : v);
          }
        }
        above = mask;
      }
      n += static_cast<size_t>(w.w) * w.h;
    }
    if (!ok || !reader.finished_cleanly()) {
      // The lowest damaged lane, whichever thread finds it first (as the
      // GPU decoder's atomicMin): the message is the same every run.
      int seen = failed.load();
      while ((seen < 0 || li < seen) && !failed.compare_exchange_weak(seen, li)) {
      }
    }
    decoded += n;
  });
  if (failed.load() >= 0)
    return bad("lane " + std::to_string(failed.load()) + " is damaged");
  if (decoded.load() != coded)
    return bad("the lanes code " + std::to_string(decoded.load()) + " symbols, the header says " +
               std::to_string(coded));
  return Status::ok();
}

}  // namespace cudafx
