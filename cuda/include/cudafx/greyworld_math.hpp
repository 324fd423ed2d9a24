// The per-frame arithmetic of the grey-world op (semantics in
// greyworld.hpp), shared by the CPU and the CUDA backend: double operations
// rounded once each, in a fixed order (on the device through the _rn
// intrinsics, which nvcc cannot contract; the host library is built with
// -ffp-contract=off), so both backends compute the same tables.
#pragma once

#include <cstdint>

#include "cudafx/hd.hpp"

namespace cudafx {

CUDAFX_HD double d_add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
CUDAFX_HD double d_sub(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
CUDAFX_HD double d_mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
CUDAFX_HD double d_div(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}

// Below this mean a colour channel gets an offset instead of a gain.
constexpr double kGreyWorldMinMean = 0.05;

// Moves the smoothed means `s` towards this frame's (sums over `count`
// bytes each); `fresh`: take them as they are.
CUDAFX_HD void greyworld_smooth(const uint64_t* sums, const uint64_t* counts, int n, double weight,
                                bool fresh, double* s) {
  for (int i = 0; i < n; i++) {
    const double m = d_div(static_cast<double>(sums[i]), static_cast<double>(counts[i]));
    s[i] = (fresh || weight >= 1.0) ? m : d_add(s[i], d_mul(weight, d_sub(m, s[i])));
  }
}

// Entry v of channel i's table, from the smoothed means.
CUDAFX_HD uint8_t greyworld_table_value(bool rgb, const double* s, int i, int v) {
  if (rgb) {
    const double grey = d_div(d_add(d_add(s[0], s[1]), s[2]), 3.0);
    const double r = s[i] > kGreyWorldMinMean
                         ? floor(d_add(d_mul(static_cast<double>(v), d_div(grey, s[i])), 0.5))
                         : d_add(static_cast<double>(v), floor(d_add(grey, 0.5)));
    return static_cast<uint8_t>(r > 255.0 ? 255.0 : r);
  }
  const double r = d_add(static_cast<double>(v), floor(d_add(d_sub(128.0, s[i]), 0.5)));
  return static_cast<uint8_t>(r < 0.0 ? 0.0 : (r > 255.0 ? 255.0 : r));
}

}  // namespace cudafx
