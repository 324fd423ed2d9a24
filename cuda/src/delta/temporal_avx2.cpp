// Temporal coding of a whole tile with AVX2 (temporal_avx2.hpp): the SSE2
// kernels' steps (delta/temporal_sse2.hpp, where each is explained) on
// 32-byte halves of a tile row, in functions compiled with a target
// attribute; nothing here is inline in a header, so no other code picks
// up AVX2 instructions. Widening with unpacklo/hi and narrowing with
// packus both work within each 128-bit half, so the bytes come back in
// their order.
#include "delta/temporal_avx2.hpp"

#include "common/cpu_features.hpp"

#include "cudafx/delta.hpp"
#if defined(__x86_64__) && defined(__GNUC__)
#include "delta/avx2_lanes.hpp"
#define CUDAFX_TEMPORAL_AVX2 1
#endif

namespace cudafx {
namespace {

#if defined(CUDAFX_TEMPORAL_AVX2)
static_assert(kDeltaTileW == 64, "a tile row is two 32-byte halves");

// delta_symbol_cost of 16-bit symbols m: 1 for 0, else 8 + 8 * bits(m).
CUDAFX_AVX2 inline __m256i symbol_costs16(__m256i m) {
  const __m256i zero = _mm256_setzero_si256();
  __m256i minus_bits = zero;
  for (int b = 0; b < 8; b++)
    minus_bits = _mm256_add_epi16(
        minus_bits, _mm256_cmpgt_epi16(m, _mm256_set1_epi16(static_cast<short>((1 << b) - 1))));
  const __m256i is_zero = _mm256_cmpeq_epi16(m, zero);
  return _mm256_add_epi16(_mm256_sub_epi16(_mm256_set1_epi16(8), _mm256_slli_epi16(minus_bits, 3)),
                          _mm256_and_si256(is_zero, _mm256_set1_epi16(-7)));
}

CUDAFX_AVX2 inline __m256i set(int v) { return _mm256_set1_epi16(static_cast<short>(v)); }

// NearLosslessTemporal16's constants, 16 lanes wide.
struct Quantiser16 {
  bool divide;
  __m256i bound, t, reciprocal, step, range, top, range_step, low, high;
};

// NearLosslessTemporal16::code8 on 16 lanes: symbol, unclamped
// reconstruction, cost.
CUDAFX_AVX2 inline void code16(const Quantiser16& q, __m256i c, __m256i r, __m256i* m_out,
                               __m256i* rec_out, __m256i* cost_out) {
  const __m256i zero = _mm256_setzero_si256();
  const __m256i e = _mm256_sub_epi16(c, r);
  const __m256i neg = _mm256_cmpgt_epi16(zero, e);
  const __m256i ae = _mm256_sub_epi16(_mm256_xor_si256(e, neg), neg);
  const __m256i n = _mm256_add_epi16(ae, q.t);
  const __m256i quot = q.divide ? _mm256_mulhi_epu16(n, q.reciprocal) : n;
  __m256i k = _mm256_and_si256(_mm256_sub_epi16(_mm256_xor_si256(quot, neg), neg),
                               _mm256_cmpgt_epi16(ae, q.bound));
  k = _mm256_add_epi16(k, _mm256_and_si256(_mm256_cmpgt_epi16(zero, k), q.range));
  k = _mm256_sub_epi16(k, _mm256_and_si256(_mm256_cmpgt_epi16(k, q.top), q.range));
  const __m256i m = _mm256_xor_si256(_mm256_add_epi16(k, k), _mm256_srai_epi16(k, 15));
  __m256i v = _mm256_add_epi16(r, _mm256_mullo_epi16(k, q.step));
  const __m256i below = _mm256_cmpgt_epi16(q.low, v), above = _mm256_cmpgt_epi16(v, q.high);
  v = _mm256_sub_epi16(_mm256_add_epi16(v, _mm256_and_si256(below, q.range_step)),
                       _mm256_and_si256(above, q.range_step));
  *cost_out = symbol_costs16(m);
  *m_out = m;
  *rec_out = v;
}

CUDAFX_AVX2 int near_lossless_tile(const uint8_t* cur, size_t cp, const uint8_t* ref, size_t rp,
                                   int h, const DeltaEncoderQuantiser& dq, uint8_t* sym,
                                   uint8_t* rec) {
  const Quantiser16 q{dq.nl.step > 1,
                      set(dq.bound),
                      set(dq.nl.t),
                      set(65536 / dq.nl.step + 1),
                      set(dq.nl.step),
                      set(dq.nl.range),
                      set((dq.nl.range + 1) / 2 - 1),
                      set(dq.nl.range * dq.nl.step),
                      set(-dq.nl.t),
                      set(255 + dq.nl.t)};
  const __m256i zero = _mm256_setzero_si256();
  __m256i acc = zero;
  for (int y = 0; y < h; y++, cur += cp, ref += rp, sym += kDeltaTileW, rec += kDeltaTileW)
    for (int x = 0; x < kDeltaTileW; x += 32) {
      const __m256i c = load32(cur + x), r = load32(ref + x);
      __m256i m_lo, m_hi, rec_lo, rec_hi, cost_lo, cost_hi;
      code16(q, _mm256_unpacklo_epi8(c, zero), _mm256_unpacklo_epi8(r, zero), &m_lo, &rec_lo,
             &cost_lo);
      code16(q, _mm256_unpackhi_epi8(c, zero), _mm256_unpackhi_epi8(r, zero), &m_hi, &rec_hi,
             &cost_hi);
      store32(sym + x, _mm256_packus_epi16(m_lo, m_hi));
      store32(rec + x, _mm256_packus_epi16(rec_lo, rec_hi));  // clamped to 0..255
      acc = _mm256_add_epi64(acc, _mm256_sad_epu8(_mm256_packus_epi16(cost_lo, cost_hi), zero));
    }
  return sum_lanes64x4(acc);
}

// code_lossless16 on 32 bytes: the fold of (cur - ref) mod 256, cur as the
// reconstruction, the costs counted in bytes (add_symbol_costs16).
CUDAFX_AVX2 int lossless_tile(const uint8_t* cur, size_t cp, const uint8_t* ref, size_t rp, int h,
                              uint8_t* sym, uint8_t* rec) {
  const __m256i zero = _mm256_setzero_si256();
  __m256i acc = zero;
  for (int y = 0; y < h; y++, cur += cp, ref += rp, sym += kDeltaTileW, rec += kDeltaTileW)
    for (int x = 0; x < kDeltaTileW; x += 32) {
      const __m256i c = load32(cur + x);
      const __m256i e = _mm256_sub_epi8(c, load32(ref + x));
      const __m256i m = _mm256_xor_si256(_mm256_add_epi8(e, e), _mm256_cmpgt_epi8(zero, e));
      store32(sym + x, m);
      store32(rec + x, c);
      __m256i bits = zero;
      for (int k = 0; k < 8; k++) {
        const __m256i p = _mm256_set1_epi8(static_cast<char>(1 << k));
        bits = _mm256_sub_epi8(bits, _mm256_cmpeq_epi8(_mm256_min_epu8(m, p), p));
      }
      const __m256i is_zero = _mm256_cmpeq_epi8(m, zero);
      const __m256i per_byte = _mm256_or_si256(
          _mm256_andnot_si256(is_zero, _mm256_slli_epi16(_mm256_add_epi8(bits, _mm256_set1_epi8(1)), 3)),
          _mm256_and_si256(is_zero, _mm256_set1_epi8(1)));
      acc = _mm256_add_epi64(acc, _mm256_sad_epu8(per_byte, zero));
    }
  return sum_lanes64x4(acc);
}

int temporal_tile_avx2(const uint8_t* cur, size_t cp, const uint8_t* ref, size_t rp, int h,
                       const DeltaEncoderQuantiser& q, uint8_t* sym, uint8_t* rec) {
  if (q.bound == 0 && q.nl.step == 1)
    return lossless_tile(cur, cp, ref, rp, h, sym, rec);
  return near_lossless_tile(cur, cp, ref, rp, h, q, sym, rec);
}

#endif  // CUDAFX_TEMPORAL_AVX2

}  // namespace

DeltaTemporalTile delta_temporal_tile_avx2() {
#if defined(CUDAFX_TEMPORAL_AVX2)
  if (cpu_uses_avx2())
    return temporal_tile_avx2;
#endif
  return nullptr;
}

}  // namespace cudafx
