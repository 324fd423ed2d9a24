// The per-frame arithmetic of the auto-contrast op (semantics in
// autocontrast.hpp), shared by the CPU and the CUDA backend: the levels of
// a histogram, their smoothing and the table, in double with each operation
// rounded once (hd.hpp), in a fixed order.
#pragma once

#include <cmath>
#include <cstdint>

#include "cudafx/hd.hpp"

namespace cudafx {

// The (low, high) levels of histogram `h` with `n` values, clipped by
// percents clip_low and clip_high.
CUDAFX_HD void autocontrast_levels(const uint64_t* h, uint64_t n, double clip_low,
                                   double clip_high, double* low, double* high) {
  const double dn = static_cast<double>(n);
  const uint64_t k_lo = static_cast<uint64_t>(floor(div_rn(mul_rn(dn, clip_low), 100.0)));
  const uint64_t k_hi = static_cast<uint64_t>(floor(div_rn(mul_rn(dn, clip_high), 100.0)));
  int lo = 0, hi = 255;
  uint64_t cum = 0;
  for (lo = 0; lo < 255; lo++) {
    cum += h[lo];
    if (cum > k_lo)
      break;
  }
  cum = 0;
  for (hi = 255; hi > 0; hi--) {
    cum += h[hi];
    if (cum > k_hi)
      break;
  }
  *low = lo;
  *high = hi;
}

// Moves the kept levels `s` (low, high) towards the frame's.
CUDAFX_HD void autocontrast_smooth(double low, double high, double weight, bool fresh,
                                   double* s) {
  if (fresh || weight >= 1.0) {
    s[0] = low;
    s[1] = high;
    return;
  }
  s[0] = add_rn(s[0], mul_rn(weight, sub_rn(low, s[0])));
  s[1] = add_rn(s[1], mul_rn(weight, sub_rn(high, s[1])));
}

// Entry v of the table for kept levels s = (low, high).
CUDAFX_HD uint8_t autocontrast_table_value(const double* s, int v) {
  const double span = sub_rn(s[1], s[0]);
  if (!(span >= 1.0))
    return static_cast<uint8_t>(v);
  const double r =
      floor(add_rn(div_rn(mul_rn(sub_rn(static_cast<double>(v), s[0]), 255.0), span), 0.5));
  return static_cast<uint8_t>(r < 0.0 ? 0.0 : (r > 255.0 ? 255.0 : r));
}

}  // namespace cudafx
