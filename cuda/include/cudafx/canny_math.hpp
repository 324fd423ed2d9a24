// The per-pixel arithmetic of the Canny op (canny.hpp states the rule),
// shared by the CPU and the CUDA backend: the gradient at a pixel, its
// magnitude, and the candidate/strong classification.
#pragma once

#include <cstdint>

#include "cudafx/hd.hpp"
#include "cudafx/sobel_taps.hpp"

namespace cudafx {

constexpr int kCannyShift = 15;
constexpr int kCannyTg22 = 13573;  // round(tan(22.5 deg) * 2^15)

CUDAFX_HD int canny_saturate16(int v) { return v < -32768 ? -32768 : (v > 32767 ? 32767 : v); }

// v / 16 rounded to the nearest integer, ties to even (cvRound of the
// float quotient, exact below 2^24).
CUDAFX_HD int canny_div16_even(int v) {
  const int q = v >> 4;  // floor
  const int rem = v & 15;
  return rem > 8 || (rem == 8 && (q & 1)) ? q + 1 : q;
}

// dx and dy from the raw Sobel sums: for aperture 7 (r = 3) scaled by 1/16,
// as OpenCV's Canny does, then saturated to 16 bits.
CUDAFX_HD void canny_finish_gradient(int gx, int gy, int r, int* dx, int* dy) {
  if (r == 3) {
    gx = canny_div16_even(gx);
    gy = canny_div16_even(gy);
  }
  *dx = canny_saturate16(gx);
  *dy = canny_saturate16(gy);
}

// dx and dy at (x, y), aperture 2r + 1, of a grey plane read through
// grey(xs, ys), which answers for positions outside the frame too (the
// border rule is the reader's).
template <class Grey>
CUDAFX_HD void canny_gradient_at(Grey grey, int x, int y, int r, int* dx, int* dy) {
  int d[kSobelMaxTaps], s[kSobelMaxTaps];
  for (int k = 0; k < 2 * r + 1; k++) {
    d[k] = sobel_tap(r, k, true);
    s[k] = sobel_tap(r, k, false);
  }
  int gx = 0, gy = 0;
  for (int i = -r; i <= r; i++)
    for (int j = -r; j <= r; j++) {
      const int v = grey(x + j, y + i);
      gx += s[i + r] * d[j + r] * v;
      gy += d[i + r] * s[j + r] * v;
    }
  canny_finish_gradient(gx, gy, r, dx, dy);
}

// The same with replicated borders (grey(xs, ys) asked inside the frame
// only).
template <class Grey>
CUDAFX_HD void canny_gradient(Grey grey, int x, int y, int w, int h, int r, int* dx, int* dy) {
  auto clamped = [&](int xs, int ys) {
    return grey(xs < 0 ? 0 : (xs >= w ? w - 1 : xs), ys < 0 ? 0 : (ys >= h ? h - 1 : ys));
  };
  canny_gradient_at(clamped, x, y, r, dx, dy);
}

// L2: dx^2 + dy^2 (at most 2^31, so unsigned 32 bits hold it), capped at
// INT_MAX (only -32768 on both axes passes it: OpenCV's int wraps there).
CUDAFX_HD int canny_magnitude(int dx, int dy, bool l2) {
  if (!l2)
    return (dx < 0 ? -dx : dx) + (dy < 0 ? -dy : dy);
  const uint32_t m = static_cast<uint32_t>(dx * dx) + static_cast<uint32_t>(dy * dy);
  return m > 2147483647u ? 2147483647 : static_cast<int>(m);
}

// 0: not a candidate; 1: a candidate (weak); 2: strong. mag(xs, ys) is 0
// outside the frame.
template <class Mag>
CUDAFX_HD uint8_t canny_classify(Mag mag, int x, int y, int dx, int dy, int low, int high) {
  const int m = mag(x, y);
  if (!(m > low))
    return 0;
  // |dx|, |dy| <= 2^15: ay <= 2^30, tg22x < 4.5e8 and tg22x + 2^16 ax <
  // 2.6e9, all within unsigned 32 bits.
  const uint32_t ax = static_cast<uint32_t>(dx < 0 ? -dx : dx);
  const uint32_t ay = static_cast<uint32_t>(dy < 0 ? -dy : dy) << kCannyShift;
  const uint32_t tg22x = ax * kCannyTg22;
  // The two neighbours across the gradient, chosen without branches (the
  // GPU's warps would diverge on them): (x - ox, y - oy) and (x + ox,
  // y + oy); the second comparison is >= only off the diagonals.
  const bool horizontal = ay < tg22x;
  const bool vertical = !horizontal && ay > tg22x + (ax << (kCannyShift + 1));
  const int s = (dx ^ dy) < 0 ? -1 : 1;
  const int ox = horizontal ? 1 : (vertical ? 0 : s), oy = horizontal ? 0 : 1;
  const int before = mag(x - ox, y - oy), after = mag(x + ox, y + oy);
  const bool max = m > before && (horizontal || vertical ? m >= after : m > after);
  return max ? (m > high ? 2 : 1) : 0;
}

}  // namespace cudafx
