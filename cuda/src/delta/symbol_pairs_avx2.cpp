// A tile row's (context, value) pairs with AVX2 (symbol_pairs_avx2.hpp):
// coded_pairs8's steps (delta_tile_entropy.cpp, where each is explained)
// on two groups at a time, in functions compiled with a target attribute;
// nothing here is inline in a header, so no other code picks up AVX2
// instructions.
#include "delta/symbol_pairs_avx2.hpp"

#include "common/cpu_features.hpp"

#include "cudafx/delta.hpp"
#include "cudafx/delta_predict_math.hpp"
#if defined(__x86_64__) && defined(__GNUC__)
#include "delta/avx2_lanes.hpp"
#define CUDAFX_PAIRS_AVX2 1
#endif

namespace cudafx {
namespace {

#if defined(CUDAFX_PAIRS_AVX2)
static_assert(kDeltaTileW == 64 && kDeltaGroupBytes == 8, "a tile row is four pairs of groups");
static_assert(kDeltaActivityClasses == 8, "seven thresholds");

CUDAFX_AVX2 inline __m256i set16(int v) { return _mm256_set1_epi16(static_cast<short>(v)); }

// The pairs of 16 symbols `cur` with their neighbours `left` and `upper`.
CUDAFX_AVX2 inline __m256i pairs16(__m128i cur, __m128i left, __m128i upper, __m256i base,
                                   __m256i range) {
  const __m256i zero = _mm256_setzero_si256(), one = set16(1);
  const __m256i m = _mm256_cvtepu8_epi16(cur);
  const __m256i l = _mm256_cvtepu8_epi16(left), u = _mm256_cvtepu8_epi16(upper);
  const __m256i mag_l = _mm256_srli_epi16(_mm256_add_epi16(l, one), 1);
  const __m256i mag_u = _mm256_srli_epi16(_mm256_add_epi16(u, one), 1);
  const __m256i neg_l = _mm256_sub_epi16(zero, _mm256_and_si256(l, one));
  const __m256i neg_u = _mm256_sub_epi16(zero, _mm256_and_si256(u, one));
  const __m256i k_sum =
      _mm256_add_epi16(_mm256_sub_epi16(_mm256_xor_si256(mag_l, neg_l), neg_l),
                       _mm256_sub_epi16(_mm256_xor_si256(mag_u, neg_u), neg_u));
  const __m256i a = _mm256_add_epi16(mag_l, mag_u);
  __m256i cls = base;
  for (int t : {1, 2, 3, 5, 9, 17, 33})
    cls = _mm256_sub_epi16(cls, _mm256_cmpgt_epi16(a, set16(t - 1)));
  const __m256i flip = _mm256_cmpgt_epi16(zero, k_sum);
  const __m256i odd = _mm256_cmpeq_epi16(_mm256_and_si256(m, one), one);
  const __m256i plus = _mm256_add_epi16(m, one);
  const __m256i below = _mm256_cmpgt_epi16(range, plus);
  const __m256i up_odd = _mm256_blendv_epi8(m, plus, below);
  const __m256i down_even = _mm256_andnot_si256(_mm256_cmpeq_epi16(m, zero), _mm256_sub_epi16(m, one));
  const __m256i flipped = _mm256_blendv_epi8(down_even, up_odd, odd);
  const __m256i value = _mm256_blendv_epi8(m, flipped, flip);
  return _mm256_or_si256(_mm256_slli_epi16(cls, 8), value);
}

// Counts the four pairs of a 64-bit word. (Taken from registers: 16-bit
// loads from a vector just stored stall on the store forwarding.)
inline void count4(uint64_t four, uint32_t* counts) {
  counts[four & 0xffff]++;
  counts[(four >> 16) & 0xffff]++;
  counts[(four >> 32) & 0xffff]++;
  counts[four >> 48]++;
}

// Stores the 8 pairs of `v` at seq and counts them.
CUDAFX_AVX2 inline void put8(__m128i v, uint16_t* seq, uint32_t* counts) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(seq), _mm_add_epi16(v, v));
  count4(static_cast<uint64_t>(_mm_cvtsi128_si64(v)), counts);
  count4(static_cast<uint64_t>(_mm_extract_epi64(v, 1)), counts);
}

CUDAFX_AVX2 int row_pairs_avx2(const uint8_t* row, const uint8_t* above, int c, int mask_context,
                               int base, int range, uint16_t* seq, uint32_t* counts,
                               unsigned* mask_out) {
  // The mask: a bit for each group (8 bytes, a 64-bit lane) not all zero.
  const __m256i zero = _mm256_setzero_si256();
  const unsigned zero_groups = static_cast<unsigned>(
      _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(load32(row), zero))) |
      _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(load32(row + 32), zero))) << 4);
  const unsigned mask = ~zero_groups & 0xffu;
  *mask_out = mask;
  const uint16_t mask_pair = static_cast<uint16_t>(mask_context << 8 | mask);
  counts[mask_pair]++;
  seq[0] = static_cast<uint16_t>(2 * mask_pair);
  const __m256i base16 = set16(base), range16 = set16(range);
  // The first 16 symbols' left neighbours: the row shifted by c bytes,
  // zero in front (shuffle index i - c, negative -- a zero -- for i < c).
  const __m128i shift_in =
      _mm_sub_epi8(_mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                   _mm_set1_epi8(static_cast<char>(c)));
  int n = 1;
  for (int h = 0; h < kDeltaTileW / 16; h++) {
    const unsigned two = (mask >> (2 * h)) & 3u;
    if (!two)
      continue;
    const __m128i cur = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 16 * h));
    const __m128i left = h == 0 ? _mm_shuffle_epi8(cur, shift_in)
                                : _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 16 * h - c));
    const __m128i upper = above ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(above + 16 * h))
                                : _mm_setzero_si128();
    const __m256i pairs = pairs16(cur, left, upper, base16, range16);
    if (two & 1u) {
      put8(_mm256_castsi256_si128(pairs), seq + n, counts);
      n += 8;
    }
    if (two & 2u) {
      put8(_mm256_extracti128_si256(pairs, 1), seq + n, counts);
      n += 8;
    }
  }
  return n;
}
#endif  // CUDAFX_PAIRS_AVX2

}  // namespace

DeltaRowPairs delta_row_pairs_avx2() {
#if defined(CUDAFX_PAIRS_AVX2)
  if (cpu_uses_avx2())
    return row_pairs_avx2;
#endif
  return nullptr;
}

}  // namespace cudafx
