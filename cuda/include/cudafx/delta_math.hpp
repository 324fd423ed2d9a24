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
//
// In two steps: delta_quantise(d, t), the multiple of 2t+1 nearest to the
// difference d (0 within the threshold), which depends on d and t only (the
// CPU tabulates it once per frame), and the clamp of that into -ref .. 255-ref.
CUDAFX_HD int delta_quantise(int d, int t) {
  if (d <= t && d >= -t)
    return 0;
  const int s = 2 * t + 1;
  return d >= 0 ? (d + t) / s * s : -((-d + t) / s * s);
}

CUDAFX_HD int delta_clamp_residual(int q, int ref) {
  return q > 255 - ref ? 255 - ref : (q < -ref ? -ref : q);
}

CUDAFX_HD int delta_residual(int cur, int ref, int t) {
  return delta_clamp_residual(delta_quantise(cur - ref, t), ref);
}

}  // namespace cudafx
