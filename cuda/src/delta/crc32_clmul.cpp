// CRC-32 by folding with carry-less multiplication (Gopal et al., "Fast CRC
// Computation for Generic Polynomials Using PCLMULQDQ Instruction", Intel,
// 2009): four 128-bit lanes folded 64 bytes at a time, then into one, then
// reduced to 32 bits (Barrett). Compiled with function target attributes
// (pclmul, SSE4.1) and chosen at run time, as the encoder's AVX2 kernels
// are; zlib's table-driven crc32 ran at ~1.8 GB/s (H100's host) to ~3 GB/s
// (the development machine), and a packet's CRC is serial work on the
// encoder's and the decoder's frame path (1-2 % of the CPU encoder's time
// on bikes.mp4 lossless, the other core idle meanwhile).
#include "delta/crc32_clmul.hpp"

#include "common/cpu_features.hpp"

#include <zlib.h>

#include <algorithm>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CUDAFX_CRC_CLMUL 1
#define CUDAFX_CLMUL __attribute__((target("pclmul,sse4.1")))
#endif

namespace cudafx {

uint32_t delta_crc32_zlib(uint32_t crc, const uint8_t* p, size_t n) {
  uLong c = crc;
  while (n > 0) {  // zlib takes uInt lengths
    const uInt chunk = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    c = crc32(c, p, chunk);
    p += chunk;
    n -= chunk;
  }
  return static_cast<uint32_t>(c);
}

namespace {

#if defined(CUDAFX_CRC_CLMUL)
// The folding constants of the reflected polynomial: x^(4*128+32) and
// x^(4*128-32) mod P (fold by four lanes), x^(128+32) and x^(128-32) mod P
// (by one), x^64 mod P (128 to 64 bits), and P' with mu = x^64 / P
// (Barrett), all bit-reflected, as the paper and zlib-ng's tables give them.
constexpr uint64_t kFold4[2] = {0x0154442bd4ull, 0x01c6e41596ull};
constexpr uint64_t kFold1[2] = {0x01751997d0ull, 0x00ccaa009eull};
constexpr uint64_t kFold64 = 0x0163cd6124ull;
constexpr uint64_t kBarrett[2] = {0x01db710641ull, 0x01f7011641ull};

CUDAFX_CLMUL inline __m128i load16(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
CUDAFX_CLMUL inline __m128i constants(const uint64_t k[2]) {
  return _mm_set_epi64x(static_cast<long long>(k[1]), static_cast<long long>(k[0]));
}
// x * k folded onto the next 16 bytes: the lane's low half times k[0],
// its high half times k[1], both added to `next`.
CUDAFX_CLMUL inline __m128i fold(__m128i x, __m128i k, __m128i next) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
                                     _mm_clmulepi64_si128(x, k, 0x11)),
                       next);
}

// The register form of the CRC (not inverted) over n bytes, n >= 64 and a
// multiple of 16.
CUDAFX_CLMUL uint32_t fold_crc(uint32_t state, const uint8_t* p, size_t n) {
  __m128i x1 = _mm_xor_si128(load16(p), _mm_cvtsi32_si128(static_cast<int>(state)));
  __m128i x2 = load16(p + 16), x3 = load16(p + 32), x4 = load16(p + 48);
  p += 64;
  n -= 64;
  const __m128i k4 = constants(kFold4);
  for (; n >= 64; p += 64, n -= 64) {
    x1 = fold(x1, k4, load16(p));
    x2 = fold(x2, k4, load16(p + 16));
    x3 = fold(x3, k4, load16(p + 32));
    x4 = fold(x4, k4, load16(p + 48));
  }
  const __m128i k1 = constants(kFold1);
  x1 = fold(x1, k1, x2);
  x1 = fold(x1, k1, x3);
  x1 = fold(x1, k1, x4);
  for (; n >= 16; p += 16, n -= 16) x1 = fold(x1, k1, load16(p));
  // 128 bits to 64, then Barrett's reduction to 32.
  const __m128i low32 = _mm_setr_epi32(~0, 0, ~0, 0);
  x1 = _mm_xor_si128(_mm_clmulepi64_si128(x1, k1, 0x10), _mm_srli_si128(x1, 8));
  x1 = _mm_xor_si128(
      _mm_clmulepi64_si128(_mm_and_si128(x1, low32),
                           _mm_cvtsi64_si128(static_cast<long long>(kFold64)), 0x00),
      _mm_srli_si128(x1, 4));
  const __m128i barrett = constants(kBarrett);
  __m128i t = _mm_clmulepi64_si128(_mm_and_si128(x1, low32), barrett, 0x10);
  t = _mm_clmulepi64_si128(_mm_and_si128(t, low32), barrett, 0x00);
  return static_cast<uint32_t>(_mm_extract_epi32(_mm_xor_si128(x1, t), 1));
}
#endif

}  // namespace

bool delta_crc32_folds() {
#if defined(CUDAFX_CRC_CLMUL)
  return cpu_uses_clmul();
#else
  return false;
#endif
}

uint32_t delta_crc32(uint32_t crc, const uint8_t* p, size_t n) {
#if defined(CUDAFX_CRC_CLMUL)
  if (n >= 64 && delta_crc32_folds()) {
    const size_t bulk = n & ~size_t(15);
    crc = ~fold_crc(~crc, p, bulk);
    p += bulk;
    n -= bulk;
  }
#endif
  return delta_crc32_zlib(crc, p, n);
}

}  // namespace cudafx
