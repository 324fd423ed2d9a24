// The per-value arithmetic of the convolution op (convolve.hpp states it),
// shared by the CPU and the CUDA backend.
#pragma once

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
