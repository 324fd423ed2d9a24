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

// The CPU encoder's division by the step: floor(n / (2t+1)) for every n in
// 0 .. 255 + t as ((n * mul) >> 16) >> shift, all in 16 bits, which lets it
// quantise 8 or 16 bytes an instruction. The smallest shift whose rounded-up
// multiplier is exact over that range; one exists for every t in 1..255
// (tested exhaustively).
struct DeltaStepDivisor {
  unsigned mul = 0, shift = 0;
};
inline DeltaStepDivisor delta_step_divisor(int t) {
  const unsigned s = 2u * static_cast<unsigned>(t) + 1;
  for (unsigned shift = 0; shift <= 15; shift++) {
    const unsigned long long mul = ((1ull << (16 + shift)) + s - 1) / s;
    if (mul > 0xffff)
      break;
    bool exact = true;
    for (unsigned n = 0; n <= 255u + static_cast<unsigned>(t) && exact; n++)
      exact = ((n * mul) >> 16 >> shift) == n / s;
    if (exact)
      return {static_cast<unsigned>(mul), shift};
  }
  return {};
}

}  // namespace cudafx
