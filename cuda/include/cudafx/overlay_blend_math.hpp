// The per-value integer rules of overlay_blend.hpp, shared by the CPU loop
// and the CUDA kernels (the per-pixel code that applies them is private:
// src/overlay/overlay_job.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cudafx/hd.hpp"
#include "cudafx/overlay_blend.hpp"

namespace cudafx {

// v / 255 rounded to nearest, for 0 <= v <= 65025 (checked for every v).
CUDAFX_HD int div255(int v) { return (v + 128 + ((v + 128) >> 8)) >> 8; }

// Premultiplied "over" of one byte: overlay value c with alpha a onto d.
CUDAFX_HD uint8_t over_u8(int c, int a, int d) {
  const int v = c + div255((255 - a) * d);
  return static_cast<uint8_t>(v < 255 ? v : 255);
}

constexpr int kOverlayCoeffBits = 14;
constexpr uint32_t kOverlayDivisor = 255u << kOverlayCoeffBits;

// One output row of the conversion: out = off a / 255 + (b_ b + g_ g + r_ r)
// / (255 2^14), the coefficients already scaled by 2^14.
struct OverlayYuvRow {
  int off;
  int b, g, r;
};

struct OverlayYuvCoeffs {
  OverlayYuvRow y, u, v;
};

// The frame value d "over"ed by the sums sa, sb, sg, sr of a and the
// premultiplied b, g, r over n = 2^s pixels: the T and floor rule of
// overlay_blend.hpp. Ranges: sa, sb, sg, sr <= 255 n, n <= 4, so T fits 64
// bits easily and (T + D n / 2) / n stays below 2.14e9 < 2^32 (the most, for
// luma, 2 * 65025 * 2^14 + D / 2, needs an overlay whose colour exceeds its
// alpha).
CUDAFX_HD uint8_t over_yuv(const OverlayYuvRow& k, int sa, int sb, int sg, int sr, int d, int s) {
  const int64_t t =
      (static_cast<int64_t>(k.off * sa + ((255 << s) - sa) * d) << kOverlayCoeffBits) +
      static_cast<int64_t>(k.b) * sb + static_cast<int64_t>(k.g) * sg +
      static_cast<int64_t>(k.r) * sr;
  if (t <= 0)
    return 0;
  // floor((t + D n / 2) / (D n)) == floor(floor((t + D n / 2) / n) / D).
  const uint64_t half = static_cast<uint64_t>(kOverlayDivisor / 2) << s;
  const uint32_t q = static_cast<uint32_t>((static_cast<uint64_t>(t) + half) >> s);
  const uint32_t v = q / kOverlayDivisor;
  return static_cast<uint8_t>(v < 255u ? v : 255u);
}

// The 2^14-scaled rows for Y, Cb, Cr of `color` (the header's rounding rule;
// each row sums to 2^14 sY or 0 exactly).
OverlayYuvCoeffs overlay_yuv_coeffs(const OverlayColorimetry& color);

}  // namespace cudafx
