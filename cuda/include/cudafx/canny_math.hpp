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

// dx and dy at (x, y) of a grey plane read through grey(xs, ys) with
// replicated borders, aperture 2r + 1.
template <class Grey>
CUDAFX_HD void canny_gradient(Grey grey, int x, int y, int w, int h, int r, int* dx, int* dy) {
  int d[kSobelMaxTaps], s[kSobelMaxTaps];
  for (int k = 0; k < 2 * r + 1; k++) {
    d[k] = sobel_tap(r, k, true);
    s[k] = sobel_tap(r, k, false);
  }
  int gx = 0, gy = 0;
  for (int i = -r; i <= r; i++) {
    const int ys = y + i < 0 ? 0 : (y + i >= h ? h - 1 : y + i);
    for (int j = -r; j <= r; j++) {
      const int xs = x + j < 0 ? 0 : (x + j >= w ? w - 1 : x + j);
      const int v = grey(xs, ys);
      gx += s[i + r] * d[j + r] * v;
      gy += d[i + r] * s[j + r] * v;
    }
  }
  if (r == 3) {  // aperture 7: scaled by 1/16, as OpenCV's Canny does
    gx = canny_div16_even(gx);
    gy = canny_div16_even(gy);
  }
  *dx = canny_saturate16(gx);
  *dy = canny_saturate16(gy);
}

// L2: dx^2 + dy^2 in 64 bits, capped at INT_MAX (only -32768 on both axes
// passes it: OpenCV's int wraps there).
CUDAFX_HD int canny_magnitude(int dx, int dy, bool l2) {
  if (!l2)
    return (dx < 0 ? -dx : dx) + (dy < 0 ? -dy : dy);
  const long long m = static_cast<long long>(dx) * dx + static_cast<long long>(dy) * dy;
  return m > 2147483647LL ? 2147483647 : static_cast<int>(m);
}

// 0: not a candidate; 1: a candidate (weak); 2: strong. mag(xs, ys) is 0
// outside the frame.
template <class Mag>
CUDAFX_HD uint8_t canny_classify(Mag mag, int x, int y, int dx, int dy, int low, int high) {
  const int m = mag(x, y);
  if (!(m > low))
    return 0;
  const long long ax = dx < 0 ? -dx : dx;
  const long long ay = static_cast<long long>(dy < 0 ? -dy : dy) << kCannyShift;
  const long long tg22x = ax * kCannyTg22;
  bool max;
  if (ay < tg22x) {
    max = m > mag(x - 1, y) && m >= mag(x + 1, y);
  } else if (ay > tg22x + (ax << (kCannyShift + 1))) {
    max = m > mag(x, y - 1) && m >= mag(x, y + 1);
  } else {
    const int s = (dx ^ dy) < 0 ? -1 : 1;
    max = m > mag(x - s, y - 1) && m > mag(x + s, y + 1);
  }
  return max ? (m > high ? 2 : 1) : 0;
}

}  // namespace cudafx
