// The motion search's block sums (motion_sad.hpp): a portable version and,
// on x86-64, one for AVX2 compiled with function target attributes (the
// rest of the library stays at the baseline, and nothing here is inline in
// a header, so no other code picks up its instructions), chosen at run
// time by what the CPU reports. (An AVX-512BW version, a row in one
// register, was level with AVX2 on the development machine's AMD EPYC,
// whose 512-bit operations run as two 256-bit halves: left out.)
//
// A half-pixel mean of four bytes, (a + b + c + d + 2) >> 2, is made from
// byte averages (pavgb: (x + y + 1) >> 1) as avg(p, q) - ((p ^ q) & ((a ^ b)
// | (c ^ d)) & 1) with p = avg(a, b), q = avg(c, d): avg(p, q) rounds up
// once too often exactly when p + q is odd and a + b or c + d was
// (checked over all 2^32 byte quadruples while it was written; the tests
// compare the kernels with the per-byte math).
#include "delta/motion_sad.hpp"

#include "common/cpu_features.hpp"

#include "cudafx/delta.hpp"
#if defined(__x86_64__) && defined(__GNUC__)
#include "delta/avx2_lanes.hpp"
#define CUDAFX_SAD_X86 1
#endif

namespace cudafx {
namespace {

static_assert(kDeltaTileW == 64, "the kernels sum rows of 64 bytes");

// -- portable: psadbw on 16 bytes (SSE2) or byte by byte --

int whole_portable(const uint8_t* cur, size_t cp, const uint8_t* ref, size_t rp, int h, int limit) {
  int sum = 0;
  for (int y = 0; y < h && sum < limit; y++) sum += sad_bytes(cur + y * cp, ref + y * rp, kDeltaTileW);
  return sum;
}

int half_portable(const uint8_t* cur, size_t cp, const uint8_t* ref, size_t rp, int right, bool fx,
                  bool fy, int h, int limit) {
  int sum = 0;
  for (int y = 0; y < h && sum < limit; y++) {
    const uint8_t* a = ref + y * rp;
    uint8_t mean[kDeltaTileW];
    half_pixel_mean(a, a + right, a + rp, a + rp + right, fx, fy, kDeltaTileW, mean);
    sum += sad_bytes(cur + y * cp, mean, kDeltaTileW);
  }
  return sum;
}

int whole_best_portable(const uint8_t* cur, size_t cp, const uint8_t* ref, size_t rp, int h,
                        const ptrdiff_t* offsets, int n, int* best) {
  int chosen = -1;
  for (int k = 0; k < n; k++) {
    const int sum = whole_portable(cur, cp, ref + offsets[k], rp, h, *best);
    if (sum < *best) {
      *best = sum;
      chosen = k;
    }
  }
  return chosen;
}

constexpr DeltaBlockSad kPortable{"portable", whole_portable, half_portable, whole_best_portable};

#if defined(CUDAFX_SAD_X86)

// -- AVX2: a row as two 32-byte halves --

CUDAFX_AVX2 inline __m256i mean4_32(__m256i a, __m256i b, __m256i c, __m256i d) {
  const __m256i p = _mm256_avg_epu8(a, b), q = _mm256_avg_epu8(c, d);
  const __m256i odd = _mm256_and_si256(
      _mm256_and_si256(_mm256_xor_si256(p, q),
                       _mm256_or_si256(_mm256_xor_si256(a, b), _mm256_xor_si256(c, d))),
      _mm256_set1_epi8(1));
  return _mm256_sub_epi8(_mm256_avg_epu8(p, q), odd);
}
// A tile's sum against the block at ref from row y on, `acc` holding the
// rows before it; stops at every fourth row once it reaches `limit`.
CUDAFX_AVX2 inline int whole_rows_avx2(const uint8_t* cur, size_t cp, const uint8_t* ref,
                                       size_t rp, int y, int h, int limit, __m256i acc) {
  for (cur += y * cp, ref += y * rp; y < h; y++, cur += cp, ref += rp) {
    acc = _mm256_add_epi64(acc, _mm256_add_epi64(_mm256_sad_epu8(load32(cur), load32(ref)),
                                                 _mm256_sad_epu8(load32(cur + 32), load32(ref + 32))));
    if ((y & 3) == 3 && y + 1 < h && sum_lanes64x4(acc) >= limit)
      break;
  }
  return sum_lanes64x4(acc);
}

CUDAFX_AVX2 inline int whole_avx2(const uint8_t* cur, size_t cp, const uint8_t* ref, size_t rp,
                                  int h, int limit) {
  return whole_rows_avx2(cur, cp, ref, rp, 0, h, limit, _mm256_setzero_si256());
}

CUDAFX_AVX2 int half_avx2(const uint8_t* cur, size_t cp, const uint8_t* ref, size_t rp, int right,
                          bool fx, bool fy, int h, int limit) {
  __m256i acc = _mm256_setzero_si256();
  const size_t other = fx ? static_cast<size_t>(right) : rp;
  for (int y = 0; y < h; y++, cur += cp, ref += rp) {
    for (int x = 0; x < kDeltaTileW; x += 32) {
      const uint8_t* a = ref + x;
      const __m256i m = fx && fy ? mean4_32(load32(a), load32(a + right), load32(a + rp),
                                            load32(a + rp + right))
                                 : _mm256_avg_epu8(load32(a), load32(a + other));
      acc = _mm256_add_epi64(acc, _mm256_sad_epu8(load32(cur + x), m));
    }
    if ((y & 3) == 3 && y + 1 < h && sum_lanes64x4(acc) >= limit)
      break;
  }
  return sum_lanes64x4(acc);
}

// Two candidates' sums side by side, each row of the tile loaded once for
// both (a candidate's sum is load-bound: two loads of the tile's row and
// two of the block's for two psadbw); each as whole_avx2 gives it against
// `limit` (exact below it, at least `limit` otherwise). Once one reaches
// the limit, the other goes on alone.
CUDAFX_AVX2 inline void whole2_avx2(const uint8_t* cur, size_t cp, const uint8_t* ra,
                                    const uint8_t* rb, size_t rp, int h, int limit, int* sa,
                                    int* sb) {
  __m256i acc_a = _mm256_setzero_si256(), acc_b = _mm256_setzero_si256();
  const uint8_t* c = cur;
  const uint8_t *a = ra, *b = rb;
  for (int y = 0; y < h; y++, c += cp, a += rp, b += rp) {
    const __m256i c0 = load32(c), c1 = load32(c + 32);
    acc_a = _mm256_add_epi64(acc_a, _mm256_add_epi64(_mm256_sad_epu8(c0, load32(a)),
                                                     _mm256_sad_epu8(c1, load32(a + 32))));
    acc_b = _mm256_add_epi64(acc_b, _mm256_add_epi64(_mm256_sad_epu8(c0, load32(b)),
                                                     _mm256_sad_epu8(c1, load32(b + 32))));
    if ((y & 3) == 3 && y + 1 < h) {
      const int sum_a = sum_lanes64x4(acc_a), sum_b = sum_lanes64x4(acc_b);
      if (sum_a >= limit) {
        *sa = sum_a;
        *sb = sum_b >= limit ? sum_b : whole_rows_avx2(cur, cp, rb, rp, y + 1, h, limit, acc_b);
        return;
      }
      if (sum_b >= limit) {
        *sa = whole_rows_avx2(cur, cp, ra, rp, y + 1, h, limit, acc_a);
        *sb = sum_b;
        return;
      }
    }
  }
  *sa = sum_lanes64x4(acc_a);
  *sb = sum_lanes64x4(acc_b);
}

// whole_best_portable's loop, two candidates at a time (whole2_avx2), both
// against the best before the first: the second's sum is exact wherever it
// could take the best (below the best before, and so below any best after
// the first), so the choice is the one by one loop's.
CUDAFX_AVX2 int whole_best_avx2(const uint8_t* cur, size_t cp, const uint8_t* ref, size_t rp,
                                int h, const ptrdiff_t* offsets, int n, int* best) {
  int chosen = -1;
  const auto take = [&](int sum, int k) {
    if (sum < *best) {
      *best = sum;
      chosen = k;
    }
  };
  int k = 0;
  for (; k + 1 < n; k += 2) {
    int sa = 0, sb = 0;
    whole2_avx2(cur, cp, ref + offsets[k], ref + offsets[k + 1], rp, h, *best, &sa, &sb);
    take(sa, k);
    take(sb, k + 1);
  }
  if (k < n)
    take(whole_avx2(cur, cp, ref + offsets[k], rp, h, *best), k);
  return chosen;
}

constexpr DeltaBlockSad kAvx2{"avx2", whole_avx2, half_avx2, whole_best_avx2};

#endif  // CUDAFX_SAD_X86

}  // namespace

const DeltaBlockSad* delta_block_sad_portable() { return &kPortable; }

const DeltaBlockSad* delta_block_sad_avx2() {
#if defined(CUDAFX_SAD_X86)
  if (cpu_uses_avx2())
    return &kAvx2;
#endif
  return nullptr;
}

const DeltaBlockSad& delta_block_sad() {
  static const DeltaBlockSad* const chosen = [] {
    if (const DeltaBlockSad* k = delta_block_sad_avx2())
      return k;
    return delta_block_sad_portable();
  }();
  return *chosen;
}

}  // namespace cudafx
