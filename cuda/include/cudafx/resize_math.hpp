// The per-value arithmetic of the resize op, shared by the CPU and CUDA
// paths. All of it is integer, so both backends agree bit for bit whatever
// order they accumulate in: a horizontal sum h = sum_k wx[k] * p[k] (exact in
// int32), a vertical sum v = sum_k wy[k] * h[k] (exact in int32: |w| sums to
// at most 1.375 * 2^11 an axis, so |v| < 255 * 2816^2 < 2^31), then
// resize_finish.
#pragma once

#include <cstdint>

#include "cudafx/hd.hpp"

namespace cudafx {

// Rounds a vertical sum (weights of 2 * 11 bits) to a byte, half up, and
// saturates (bicubic overshoots at edges).
CUDAFX_HD uint8_t resize_finish(int32_t v) {
  const int32_t r = (v + (1 << 21)) >> 22;  // arithmetic shift: floor
  return static_cast<uint8_t>(r < 0 ? 0 : (r > 255 ? 255 : r));
}

// Where the tap window of phase j of a periodic axis (resize.hpp,
// ResizeAxis::period: scale q / p) starts, relative to p m for output sample
// q m + j, before clamping. Nearest: floor(j p / q), cv::resize's
// floor(x * src / dst). Filters: floor(u) - (taps / 2 - 1) at the source
// coordinate u = (j + 0.5) p / q - 0.5 = ((2j + 1) p - q) / 2q, exact in
// integers here (the planner computes u in floating point and then checks
// that every sample agrees). Plain constexpr: the CUDA code is compiled
// with --expt-relaxed-constexpr.
constexpr int resize_periodic_base(int taps, int q, int p, int j) {
  const int num = taps == 1 ? j * p : (2 * j + 1) * p - q, den = taps == 1 ? q : 2 * q;
  const int fl = num >= 0 ? num / den : -((-num + den - 1) / den);
  return taps == 1 ? fl : fl - (taps / 2 - 1);
}

// Sample index i kept inside [0, n): out-of-image taps repeat the edge.
CUDAFX_HD int resize_clamp(int i, int n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }

}  // namespace cudafx
