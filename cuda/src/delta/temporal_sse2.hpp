// Coding of 16 bytes at a time with SSE2, for the format-4 CPU encoder's
// tiles (delta_tiles_cpu.cpp): temporal at any threshold, and lossless
// spatial with MED; the symbols, the reconstruction and the sum of
// delta_symbol_cost that the per-byte math (delta_predict_math.hpp) gives,
// byte for byte (tests/test_delta_v4.cpp compares them over every byte
// pair at every threshold, and every tile's spatial coding).
#pragma once
#if defined(__SSE2__)
#include <emmintrin.h>

#include <cstdint>

#include "cudafx/delta_predict_math.hpp"

namespace cudafx {

// The sum of delta_symbol_cost over 16 symbols m, added into `cost`
// (64-bit halves): 1 for 0, else 8 + 8 * bits(m), bits(m) counted as the
// powers of two m reaches.
inline void add_symbol_costs16(__m128i m, __m128i* cost) {
  const __m128i zero = _mm_setzero_si128();
  __m128i bits = zero;
  for (int k = 0; k < 8; k++) {
    const __m128i p = _mm_set1_epi8(static_cast<char>(1 << k));
    bits = _mm_sub_epi8(bits, _mm_cmpeq_epi8(_mm_min_epu8(m, p), p));  // +1 where m >= 2^k
  }
  const __m128i is_zero = _mm_cmpeq_epi8(m, zero);
  const __m128i per_byte =
      _mm_or_si128(_mm_andnot_si128(is_zero, _mm_slli_epi16(_mm_add_epi8(bits, _mm_set1_epi8(1)), 3)),
                   _mm_and_si128(is_zero, _mm_set1_epi8(1)));
  *cost = _mm_add_epi64(*cost, _mm_sad_epu8(per_byte, zero));
}

// The total of an accumulator's two 64-bit halves (each below 2^31), as
// _mm_sad_epu8 sums leave them.
inline int sum_halves16(__m128i cost) {
  return _mm_cvtsi128_si32(cost) + _mm_cvtsi128_si32(_mm_srli_si128(cost, 8));
}

// The lossless symbols of 16 bytes from their predictions: the fold of
// (cur - pred) mod 256 as a signed byte, into `sym`, their costs added
// into `cost`.
inline void code_difference16(__m128i cur, __m128i pred, uint8_t* sym, __m128i* cost) {
  const __m128i e = _mm_sub_epi8(cur, pred);
  const __m128i m = _mm_xor_si128(_mm_add_epi8(e, e), _mm_cmplt_epi8(e, _mm_setzero_si128()));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(sym), m);
  add_symbol_costs16(m, cost);
}

// Lossless temporal coding of 16 bytes (error bound and quantiser 0: the
// reference is the prediction and the reconstruction is cur itself): the
// symbols into `sym`, cur into `rec`, their costs added into `cost`.
inline void code_lossless16(const uint8_t* cur, const uint8_t* ref, uint8_t* sym, uint8_t* rec,
                            __m128i* cost) {
  const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(cur));
  code_difference16(c, _mm_loadu_si128(reinterpret_cast<const __m128i*>(ref)), sym, cost);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(rec), c);
}

// Near-lossless temporal coding of 16 bytes with any encoder quantiser (the
// lossless one takes code_lossless16), in 16-bit lanes: the dead zone, the
// quantiser's division by its step as a multiply by a reciprocal (exact for
// every odd step and every numerator |e| + t <= 382 that occurs), the
// reduction into the alphabet, the fold, the reconstruction with its wrap
// and clamp (NearLossless::reconstruct_offset; both wraps tested on the
// original sum, as its else-if), and delta_symbol_cost. What the tabulated
// path gives, byte for byte; its table lookups, three a byte, had made this the
// encoder's second-largest cost at T > 0.
class NearLosslessTemporal16 {
 public:
  explicit NearLosslessTemporal16(const DeltaEncoderQuantiser& q)
      : divide_(q.nl.step > 1),
        bound_(_mm_set1_epi16(static_cast<short>(q.bound))),
        t_(_mm_set1_epi16(static_cast<short>(q.nl.t))),
        reciprocal_(_mm_set1_epi16(static_cast<short>(65536 / q.nl.step + 1))),
        step_(_mm_set1_epi16(static_cast<short>(q.nl.step))),
        range_(_mm_set1_epi16(static_cast<short>(q.nl.range))),
        top_(_mm_set1_epi16(static_cast<short>((q.nl.range + 1) / 2 - 1))),
        range_step_(_mm_set1_epi16(static_cast<short>(q.nl.range * q.nl.step))),
        low_(_mm_set1_epi16(static_cast<short>(-q.nl.t))),
        high_(_mm_set1_epi16(static_cast<short>(255 + q.nl.t))) {}

  void code16(const uint8_t* cur, const uint8_t* ref, uint8_t* sym, uint8_t* rec,
              __m128i* cost) const {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(rec),
                     code16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(cur)),
                            _mm_loadu_si128(reinterpret_cast<const __m128i*>(ref)), sym, cost));
  }
  // The same from registers (c the bytes, r their predictions); returns
  // the reconstruction.
  __m128i code16(__m128i c, __m128i r, uint8_t* sym, __m128i* cost) const {
    const __m128i zero = _mm_setzero_si128();
    __m128i m_lo, m_hi, rec_lo, rec_hi, cost_lo, cost_hi;
    code8(_mm_unpacklo_epi8(c, zero), _mm_unpacklo_epi8(r, zero), &m_lo, &rec_lo, &cost_lo);
    code8(_mm_unpackhi_epi8(c, zero), _mm_unpackhi_epi8(r, zero), &m_hi, &rec_hi, &cost_hi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(sym), _mm_packus_epi16(m_lo, m_hi));
    *cost = _mm_add_epi64(*cost, _mm_sad_epu8(_mm_packus_epi16(cost_lo, cost_hi), zero));
    // packus clamps the reconstruction to 0..255, as reconstruct_offset
    return _mm_packus_epi16(rec_lo, rec_hi);
  }

 private:
  // Eight bytes widened to 16 bits: symbol, unclamped reconstruction, cost.
  void code8(__m128i c, __m128i r, __m128i* m_out, __m128i* rec_out, __m128i* cost_out) const {
    const __m128i zero = _mm_setzero_si128();
    const __m128i e = _mm_sub_epi16(c, r);
    const __m128i neg = _mm_cmpgt_epi16(zero, e);
    const __m128i ae = _mm_sub_epi16(_mm_xor_si128(e, neg), neg);
    // |k| = (|e| + t) / step, k with e's sign; 0 within the dead zone
    const __m128i n = _mm_add_epi16(ae, t_);
    const __m128i q = divide_ ? _mm_mulhi_epu16(n, reciprocal_) : n;
    __m128i k = _mm_and_si128(_mm_sub_epi16(_mm_xor_si128(q, neg), neg), _mm_cmpgt_epi16(ae, bound_));
    k = _mm_add_epi16(k, _mm_and_si128(_mm_cmpgt_epi16(zero, k), range_));  // k < 0: + range
    k = _mm_sub_epi16(k, _mm_and_si128(_mm_cmpgt_epi16(k, top_), range_));  // past the top: - range
    const __m128i m = _mm_xor_si128(_mm_add_epi16(k, k), _mm_srai_epi16(k, 15));
    __m128i v = _mm_add_epi16(r, _mm_mullo_epi16(k, step_));
    const __m128i below = _mm_cmpgt_epi16(low_, v), above = _mm_cmpgt_epi16(v, high_);
    v = _mm_sub_epi16(_mm_add_epi16(v, _mm_and_si128(below, range_step_)),
                      _mm_and_si128(above, range_step_));
    // delta_symbol_cost: 1 for 0, else 8 + 8 * bits(m), bits counted as the
    // powers of two m reaches (each compare -1 where it does)
    __m128i minus_bits = zero;
    for (int b = 0; b < 8; b++)
      minus_bits = _mm_add_epi16(minus_bits,
                                 _mm_cmpgt_epi16(m, _mm_set1_epi16(static_cast<short>((1 << b) - 1))));
    const __m128i is_zero = _mm_cmpeq_epi16(m, zero);
    *cost_out = _mm_add_epi16(_mm_sub_epi16(_mm_set1_epi16(8), _mm_slli_epi16(minus_bits, 3)),
                              _mm_and_si128(is_zero, _mm_set1_epi16(-7)));
    *m_out = m;
    *rec_out = v;
  }

  bool divide_;
  __m128i bound_, t_, reciprocal_, step_, range_, top_, range_step_, low_, high_;
};

// Transposes a 16 x 16 block of bytes held as 16 registers (row r in
// v[r], its column c in byte c) in place: four rounds that each interleave
// register k with register k + 8, byte by byte. A round moves the byte at
// (register s, byte l) to (2 (s mod 8) + l / 8, 2 (l mod 8) + s / 8): the
// eight bits of (s, l) rotated left by one, so four rounds swap s and l.
inline void transpose16x16(__m128i v[16]) {
  for (int round = 0; round < 4; round++) {
    __m128i out[16];
    for (int k = 0; k < 8; k++) {
      out[2 * k] = _mm_unpacklo_epi8(v[k], v[k + 8]);
      out[2 * k + 1] = _mm_unpackhi_epi8(v[k], v[k + 8]);
    }
    for (int k = 0; k < 16; k++) v[k] = out[k];
  }
}

// MED of 16 bytes (delta_med(a, b, c) byte by byte): min(a, b) if c >=
// max(a, b), max(a, b) if c <= min(a, b), else a + b - c (in 0..255
// there, so mod 256 is exact).
inline __m128i med16(__m128i a, __m128i b, __m128i c) {
  const __m128i mx = _mm_max_epu8(a, b), mn = _mm_min_epu8(a, b);
  const __m128i c_high = _mm_cmpeq_epi8(_mm_max_epu8(c, mx), c);  // c >= max
  const __m128i c_low = _mm_cmpeq_epi8(_mm_min_epu8(c, mn), c);   // c <= min
  const __m128i plane = _mm_sub_epi8(_mm_add_epi8(a, b), c);
  return _mm_or_si128(_mm_and_si128(c_high, mn),
                      _mm_andnot_si128(c_high, _mm_or_si128(_mm_and_si128(c_low, mx),
                                                           _mm_andnot_si128(c_low, plane))));
}

// `v` moved up by c bytes (1 to 4; byte i takes byte i - c, the first c
// take `fill`): the left neighbours of a tile row's first 16 bytes, which
// have none before them in the tile.
inline __m128i shift_in_bytes(__m128i v, int c, __m128i fill) {
  const __m128i ones = _mm_set1_epi8(-1);
  switch (c) {  // (byte shifts take constants)
    case 1: return _mm_or_si128(_mm_slli_si128(v, 1), _mm_and_si128(fill, _mm_srli_si128(ones, 15)));
    case 2: return _mm_or_si128(_mm_slli_si128(v, 2), _mm_and_si128(fill, _mm_srli_si128(ones, 14)));
    case 3: return _mm_or_si128(_mm_slli_si128(v, 3), _mm_and_si128(fill, _mm_srli_si128(ones, 13)));
    default: return _mm_or_si128(_mm_slli_si128(v, 4), _mm_and_si128(fill, _mm_srli_si128(ones, 12)));
  }
}

// Lossless spatial coding with MED of one tile row's 16 bytes from byte x
// (a multiple of 16) of a tile, c bytes a pixel: lossless, the
// reconstruction is the source, so each byte's prediction reads source
// bytes only and a row's bytes are independent (delta_spatial_prediction
// with predictor 0: the first row predicts 128 then the left byte, a row's
// first pixel the byte above). `row` and `up` point at the tile row and
// the one above it (up unused on the first row); symbols into `sym`, costs
// added into `cost`.
inline void code_lossless_med16(const uint8_t* row, const uint8_t* up, int x, int y, int c,
                                uint8_t* sym, __m128i* cost) {
  const __m128i cur = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + x));
  __m128i pred;
  if (y == 0) {
    pred = x == 0 ? shift_in_bytes(cur, c, _mm_set1_epi8(static_cast<char>(128)))
                  : _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + x - c));
  } else {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(up + x));
    __m128i a, d;
    if (x == 0) {  // no left neighbours for the first pixel: it predicts b
      a = shift_in_bytes(cur, c, b);
      d = shift_in_bytes(_mm_loadu_si128(reinterpret_cast<const __m128i*>(up)), c, b);
    } else {
      a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + x - c));
      d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(up + x - c));
    }
    // Where the first pixel took a = d = b, MED gives b.
    pred = med16(a, b, d);
  }
  code_difference16(cur, pred, sym, cost);
}

}  // namespace cudafx
#endif
