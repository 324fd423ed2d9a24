// Helpers of the CPU encoder's AVX2 kernels (motion_sad.cpp,
// temporal_avx2.cpp), for x86-64 with GCC or Clang: each compiled with a
// function target attribute, as the kernels are, so that the library
// stays at x86-64's baseline and AVX2 runs only where the CPU reports it.
#pragma once
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include <cstdint>

#define CUDAFX_AVX2 __attribute__((target("avx2")))

namespace cudafx {

CUDAFX_AVX2 inline __m256i load32(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
CUDAFX_AVX2 inline void store32(uint8_t* p, __m256i v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
}
// The total of an accumulator's four 64-bit lanes (each below 2^31), as
// _mm256_sad_epu8 sums leave them.
CUDAFX_AVX2 inline int sum_lanes64x4(__m256i acc) {
  const __m128i s = _mm_add_epi64(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  return _mm_cvtsi128_si32(s) + _mm_cvtsi128_si32(_mm_srli_si128(s, 8));
}

}  // namespace cudafx
#endif
