// Sums of absolute differences for the CPU encoder's motion search
// (delta_tiles_cpu.cpp): a tile kDeltaTileW bytes wide against a block of
// the reference that lies inside its plane, at a whole pixel or at a half
// pixel (the rounded mean of delta_moved_byte). The library is built for
// x86-64's baseline (SSE2); where the CPU runs AVX2, a version compiled for
// it is chosen at run time (delta_block_sad). Every version
// gives the exact sum, so the search finds the same vectors on any CPU
// (tests/test_delta_v4.cpp compares each with the per-byte math).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#if defined(__SSE2__)
#include <emmintrin.h>

#include "delta/temporal_sse2.hpp"
#endif

namespace cudafx {

// The sum of |a[x] - b[x]| over n bytes: 16 at a time with SSE2's psadbw
// (the compiler had widened the bytes to 32-bit lanes instead), the rest
// one by one.
inline int sad_bytes(const uint8_t* a, const uint8_t* b, int n) {
  int x = 0, sum = 0;
#if defined(__SSE2__)
  __m128i acc = _mm_setzero_si128();
  for (; x + 16 <= n; x += 16)
    acc = _mm_add_epi64(acc, _mm_sad_epu8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + x)),
                                          _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + x))));
  sum = sum_halves16(acc);
#endif
  for (; x < n; x++) sum += std::abs(a[x] - b[x]);
  return sum;
}

// A half-pixel prediction from the whole-pixel tiles at and right of /
// below it (tl at (ix, iy), tr at (ix + 1, iy), bl at (ix, iy + 1), br at
// both), n bytes: the rounded mean of tl and tr (fx), of tl and bl (fy), or
// of all four (both), as delta_moved_byte. `out` may be tl.
inline void half_pixel_mean(const uint8_t* tl, const uint8_t* tr, const uint8_t* bl,
                            const uint8_t* br, bool fx, bool fy, int n, uint8_t* out) {
  if (fx && fy) {
    for (int k = 0; k < n; k++)
      out[k] = static_cast<uint8_t>((tl[k] + tr[k] + bl[k] + br[k] + 2) >> 2);
  } else {
    const uint8_t* other = fx ? tr : bl;
    for (int k = 0; k < n; k++) out[k] = static_cast<uint8_t>((tl[k] + other[k] + 1) >> 1);
  }
}

// One instruction set's kernels. `cur`: the tile's first byte, `cp` bytes
// a row; `ref`: the block's first byte, `rp` a row; h rows of kDeltaTileW
// bytes, every byte read inside the plane. Each stops (the vector versions
// at every fourth row, the portable one at any row) once the sum has
// reached `limit` and returns what it has then, which is at least `limit`:
// a sum that large loses to the search's best anyway.
struct DeltaBlockSad {
  const char* name;
  // Against the block at ref.
  int (*whole)(const uint8_t* cur, size_t cp, const uint8_t* ref, size_t rp, int h, int limit);
  // Against the half-pixel block whose whole pixel before it is at ref:
  // the rounded mean of ref and the block `right` bytes right of it (fx;
  // one pixel), of ref and the block a row below (fy), or of all four
  // ((a + b + c + d + 2) >> 2, both); at least one of fx, fy.
  int (*half)(const uint8_t* cur, size_t cp, const uint8_t* ref, size_t rp, int right, bool fx,
              bool fy, int h, int limit);
  // A list of candidates, the blocks at ref + offsets[k] for k = 0..n-1 in
  // order, each summed as `whole` against the best so far (*best) and
  // taking its place when its sum is below it: the search's loop over a
  // stage, in one call (called per candidate through this table, the
  // call had cost as much as many a sum that stops after four rows).
  // Returns the index of the last candidate that took the best, -1 when
  // none did.
  int (*whole_best)(const uint8_t* cur, size_t cp, const uint8_t* ref, size_t rp, int h,
                    const ptrdiff_t* offsets, int n, int* best);
};

// The fastest version this CPU runs (chosen once).
const DeltaBlockSad& delta_block_sad();
// Each version, for the tests: null where the CPU (or the compiler) lacks
// it; portable is SSE2 on x86-64, byte by byte elsewhere, and always there.
const DeltaBlockSad* delta_block_sad_portable();
const DeltaBlockSad* delta_block_sad_avx2();

}  // namespace cudafx
