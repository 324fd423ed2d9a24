// Sobel taps of aperture 3, 5 and 7 as cv::getDerivKernels makes them: the
// first derivative and the smoothing taps of each (the smoothing taps are
// binomial coefficients, also the Harris op's binomial window). A function,
// not a namespace-scope table, so that device code can use it.
#pragma once

#include "cudafx/hd.hpp"

namespace cudafx {

constexpr int kSobelMaxTaps = 7;

// Tap k (0 = leftmost) of aperture 2r + 1 (r = 1, 2, 3): the derivative's,
// or the smoothing's.
CUDAFX_HD int sobel_tap(int r, int k, bool derivative) {
  const int d[3][kSobelMaxTaps] = {{-1, 0, 1}, {-1, -2, 0, 2, 1}, {-1, -4, -5, 0, 5, 4, 1}};
  const int s[3][kSobelMaxTaps] = {{1, 2, 1}, {1, 4, 6, 4, 1}, {1, 6, 15, 20, 15, 6, 1}};
  return derivative ? d[r - 1][k] : s[r - 1][k];
}

}  // namespace cudafx
