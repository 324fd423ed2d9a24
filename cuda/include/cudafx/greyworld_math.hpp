// The per-frame arithmetic of the grey-world op (semantics in
// greyworld.hpp), shared by the CPU and the CUDA backend: double operations
// rounded once each (hd.hpp's _rn helpers), in a fixed order, so both
// backends compute the same tables.
#pragma once

#include <cstdint>

#include "cudafx/hd.hpp"

namespace cudafx {

// Below this mean a colour channel gets an offset instead of a gain.
constexpr double kGreyWorldMinMean = 0.05;

// Moves the smoothed means `s` towards this frame's (sums over `count`
// bytes each); `fresh`: take them as they are.
CUDAFX_HD void greyworld_smooth(const uint64_t* sums, const uint64_t* counts, int n, double weight,
                                bool fresh, double* s) {
  for (int i = 0; i < n; i++) {
    const double m = div_rn(static_cast<double>(sums[i]), static_cast<double>(counts[i]));
    s[i] = (fresh || weight >= 1.0) ? m : add_rn(s[i], mul_rn(weight, sub_rn(m, s[i])));
  }
}

// Entry v of channel i's table, from the smoothed means.
CUDAFX_HD uint8_t greyworld_table_value(bool rgb, const double* s, int i, int v) {
  if (rgb) {
    const double grey = div_rn(add_rn(add_rn(s[0], s[1]), s[2]), 3.0);
    const double r = s[i] > kGreyWorldMinMean
                         ? floor(add_rn(mul_rn(static_cast<double>(v), div_rn(grey, s[i])), 0.5))
                         : add_rn(static_cast<double>(v), floor(add_rn(grey, 0.5)));
    return static_cast<uint8_t>(r > 255.0 ? 255.0 : r);
  }
  const double r = add_rn(static_cast<double>(v), floor(add_rn(sub_rn(128.0, s[i]), 0.5)));
  return static_cast<uint8_t>(r < 0.0 ? 0.0 : (r > 255.0 ? 255.0 : r));
}

}  // namespace cudafx
