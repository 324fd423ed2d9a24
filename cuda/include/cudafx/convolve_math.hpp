// The per-value arithmetic of the convolution op (convolve.hpp states it),
// shared by the CPU and the CUDA backend.
#pragma once

#include <cmath>
#include <cstdint>

#include "cudafx/hd.hpp"

namespace cudafx {

// The integer path's byte: s / d rounded half up, plus the offset, saturated.
CUDAFX_HD uint8_t convolve_integer_result(int s, int d, int offset) {
  long long n = s, m = d;
  if (m < 0) {
    n = -n;
    m = -m;
  }
  const long long q = floor_div(2 * n + m, 2 * m) + offset;
  return static_cast<uint8_t>(q < 0 ? 0 : (q > 255 ? 255 : q));
}

// convolve_integer_result(s, d, offset) for a divisor fixed in advance,
// without a 64-bit division (a software routine of some 70 instructions on
// a GPU, run for every byte): q = floor((2s + d') / 2d') (d' = |d|, s
// negated with d) estimated through the double reciprocal of 2d' -- off by
// at most one, as |2s + d'| < 2^33 and the reciprocal is within 2^-53 of
// 1 / 2d' -- then corrected with the exact remainder. Equal to
// convolve_integer_result for every s, d and offset of the integer path.
struct ConvolveDivision {
  long long two_d = 2;   // 2 |d|
  int d = 1, sign = 1;   // |d|, and -1 where d < 0
  double inverse = 0.5;  // 1 / (2 |d|)
  float inverse_f = 0.5f;
  int offset = 0;
  ConvolveDivision() = default;
  ConvolveDivision(int divisor, int off) : d(divisor < 0 ? -divisor : divisor), sign(divisor < 0 ? -1 : 1),
                                           offset(off) {
    two_d = 2LL * d;
    inverse = 1.0 / static_cast<double>(two_d);
    inverse_f = static_cast<float>(inverse);
  }
  // The same for |s| <= 2^24 in 32-bit arithmetic (the packed and exact
  // float sums): |n| < 2^26, the float estimate within a few units of q,
  // the remainder brings it home.
  CUDAFX_HD uint8_t small(int s) const {
    const int n = 2 * sign * s + d, m = static_cast<int>(two_d);
    int q = static_cast<int>(floorf(static_cast<float>(n) * inverse_f));
    int r = n - q * m;
    while (r < 0) {
      q--;
      r += m;
    }
    while (r >= m) {
      q++;
      r -= m;
    }
    q += offset;
    return static_cast<uint8_t>(q < 0 ? 0 : (q > 255 ? 255 : q));
  }
  CUDAFX_HD uint8_t operator()(int s) const {
    const long long n = 2LL * sign * s + d;
    long long q = static_cast<long long>(floor(static_cast<double>(n) * inverse));
    const long long r = n - q * two_d;
    if (r < 0)
      q--;
    else if (r >= two_d)
      q++;
    q += offset;
    return static_cast<uint8_t>(q < 0 ? 0 : (q > 255 ? 255 : q));
  }
};

// convolve_integer_result(s, d, offset) in a handful of 32-bit operations,
// for |s| <= kMaxSum = 2^25 and 1 <= |d| <= 2^24 (applies()): with m = 2|d|
// and n = 2 sign(d) s + |d| (|n| <= 2^26 + 2^24), the result is
// floor(n / m) + offset. n is made non-negative by adding K m (K =
// ceil(2^26 / m), so 2^26 <= K m < 2^26 + m: 0 < n + K m < 2^28), and the
// quotient of that by m is a multiply-high by M = ceil(2^(32+sh) / m),
// sh = floor(log2 m), and a shift: exact, as M m - 2^(32+sh) = e < m <
// 2^(sh+1) makes the estimate's excess n e / (m 2^(32+sh)) < 2^(29+sh) /
// (m 2^(32+sh)) < 1 / m, less than the room 1 - r / m >= 1 / m the
// remainder r leaves; M < 2^32 unless m is a power of two, where the
// quotient is the shift alone, n >> sh = mulhi(n, 2^31) >> (sh - 1) (m >= 2).
// The tensor-core convolution's epilogue: a multiply-add, a multiply-high,
// a shift and an add a value (quotient), saturated four at a time there.
struct ConvolveMagicDivision {
  static constexpr long long kMaxSum = 1LL << 25;  // |s|
  uint32_t magic = 0x80000000u;
  int shift = 0;
  int two_sign = 2;    // 2 sign(d)
  uint32_t base = 0;   // |d| + K m
  int add = 0;         // offset - K
  static bool applies(long long divisor) {
    return divisor != 0 && divisor >= -(1LL << 24) && divisor <= (1LL << 24);
  }
  ConvolveMagicDivision() = default;
  ConvolveMagicDivision(int divisor, int offset) : two_sign(divisor < 0 ? -2 : 2) {
    const uint64_t d = divisor < 0 ? -static_cast<int64_t>(divisor) : divisor;
    const uint64_t m = 2 * d;
    while ((2ull << shift) <= m)
      shift++;
    if ((1ull << shift) != m)
      magic = static_cast<uint32_t>(((1ull << (32 + shift)) + m - 1) / m);
    else
      shift--;  // magic 2^31
    const uint64_t k = ((1ull << 26) + m - 1) / m;
    base = static_cast<uint32_t>(d + k * m);
    add = offset - static_cast<int>(k);
  }
  // floor((2 sign(d) s + |d|) / 2|d|) + offset, not saturated.
  CUDAFX_HD int quotient(int s) const {
    const uint32_t n = static_cast<uint32_t>(two_sign * s) + base;
#ifdef __CUDA_ARCH__
    const uint32_t q = __umulhi(n, magic) >> shift;
#else
    const uint32_t q = static_cast<uint32_t>((static_cast<uint64_t>(n) * magic) >> 32) >> shift;
#endif
    return static_cast<int>(q) + add;
  }
  CUDAFX_HD uint8_t operator()(int s) const {
    const int r = quotient(s);
    return static_cast<uint8_t>(r < 0 ? 0 : (r > 255 ? 255 : r));
  }
};

// The float path's byte: acc + offset (one rounding) to the nearest integer,
// ties to even, saturated.
CUDAFX_HD uint8_t convolve_float_result(float acc, float offset) {
  const float v = add_rn(acc, offset);
  if (!(v > 0.0f))
    return 0;  // negatives and NaN
  if (v >= 255.0f)
    return 255;
  return static_cast<uint8_t>(rintf(v));
}

}  // namespace cudafx
