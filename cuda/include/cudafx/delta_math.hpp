// The per-byte decision of the delta encoder, shared by the CPU and CUDA
// paths (integer arithmetic: both give the same bytes).
#pragma once

#include "cudafx/hd.hpp"

namespace cudafx {

// The residual q the encoder sends for a byte (the decoder adds it mod 256):
// 0 when |cur - ref| <= t; else the multiple of 2t+1 nearest to cur - ref,
// clamped so that ref + q stays within 0..255. Either way ref + q is within
// t of cur, and for t > 0 the residuals fall on few values, which the
// entropy stage codes far more cheaply than the exact differences
// (near-lossless quantisation). t = 0 sends cur - ref exactly.
CUDAFX_HD int delta_residual(int cur, int ref, int t) {
  const int d = cur - ref;
  if (d <= t && d >= -t)
    return 0;
  const int s = 2 * t + 1;
  int q = d >= 0 ? (d + t) / s * s : -((-d + t) / s * s);
  if (q > 255 - ref)
    q = 255 - ref;
  if (q < -ref)
    q = -ref;
  return q;
}

}  // namespace cudafx
