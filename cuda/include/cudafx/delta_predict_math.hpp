// Per-byte math of the delta codec's format 4, shared by the CPU and CUDA
// paths (integer arithmetic only: both give the same bytes). The format is
// in docs/delta-format.md, "Version 4".
//
// Each tile is predicted (from the reference: temporal; from its own
// reconstructed neighbours: spatial, LOCO-I's median edge detector) and the
// prediction error quantised with JPEG-LS's near-lossless quantiser (ITU-T
// T.87 A.4): step 2T+1, the quantised error reduced modulo RANGE so that
// the alphabet has RANGE <= 256 symbols, and the reconstruction clamped to
// 0..255. |source - reconstruction| <= T holds for every byte, whatever the
// prediction, and T = 0 is lossless.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cudafx/hd.hpp"

namespace cudafx {

// A tile's coding mode (format 4). Skip keeps the reference's bytes.
enum DeltaTileMode : uint8_t {
  kDeltaSkip = 0,
  kDeltaTemporal = 1,
  kDeltaSpatial = 2,
  kDeltaModeCount = 3,
};

// The quantiser of one threshold T: step 2T+1 and the alphabet size RANGE
// = floor((255 + 2T) / step) + 1 (256 at T = 0, 86 at T = 1, 2 at T = 255).
struct NearLossless {
  int t = 0, step = 1, range = 256;
  CUDAFX_HD explicit NearLossless(int threshold)
      : t(threshold),
        step(2 * threshold + 1),
        range((255 + 2 * threshold) / (2 * threshold + 1) + 1) {}

  // The quantised error of `err` = source - prediction, reduced into
  // [-range/2, (range+1)/2 - 1].
  CUDAFX_HD int quantise(int err) const {
    int k = err > 0 ? (err + t) / step : -((t - err) / step);
    if (k < 0)
      k += range;
    if (k >= (range + 1) / 2)
      k -= range;
    return k;
  }
  // The byte the decoder rebuilds from a prediction and a quantised error:
  // pred + k * step, brought back into [-T, 255 + T] by one RANGE * step
  // (which is > 255 + 2T, so the unreduced value is found) and clamped.
  CUDAFX_HD int reconstruct(int pred, int k) const { return reconstruct_offset(pred, k * step); }
  // The same from k * step (which a CPU encoder tabulates per error).
  CUDAFX_HD int reconstruct_offset(int pred, int offset) const {
    int r = pred + offset;
    if (r < -t)
      r += range * step;
    else if (r > 255 + t)
      r -= range * step;
    return r < 0 ? 0 : (r > 255 ? 255 : r);
  }
};

// The encoder's quantiser for an error bound T: a dead zone of T (an error
// within T is sent as 0: the prediction stands) around the near-lossless
// quantiser of Q = T / 2, whose finer steps leave the bytes it does send
// within T/2, so that noise crosses the bound again less often (vtest.avi at
// T = 10: 86x smaller than raw against 48x with Q = T; docs/delta-format.md). Every
// byte ends within T; the decoder needs Q only.
CUDAFX_HD int delta_quantiser_for(int bound) { return bound / 2; }

// The reference encoder's dead zone on a keyframe followed by delta frames:
// 4T/5 rather than T. A keyframe codes every byte, and the delta frames after
// it skip a tile only while all its bytes stay within T of the reference;
// bytes left up to T off by the keyframe cross that bound at the first
// noise, so the frames after a keyframe cost more than the rest. Measured
// with the library's CPU encoder, a keyframe every 30 frames (ratio to raw,
// T = 10): vtest.avi (795 frames) 72.1x with T, 74.0x with 4T/5 (its
// keyframes 21 % larger, the frames between them 11 % smaller), against
// 88.0x with one keyframe (90.3x with 4T/5: the first keyframe gains too); bigbuckbunny.mp4 78.4x -> 79.7x, bikes.mp4 50.4x ->
// 50.6x; at T = 4 and 20 too (vtest.avi, 300 frames: 31.8x -> 32.1x, 137.4x
// -> 145.2x); 3T/5 and 9T/10 were worse. A stream of keyframes only has no
// frames after them to gain: it keeps T (DeltaEncodeSettings::keyframes_only).
CUDAFX_HD int delta_keyframe_dead_zone(int bound) { return bound * 4 / 5; }

struct DeltaEncoderQuantiser {
  NearLossless nl;
  int bound;  // the dead zone
  CUDAFX_HD explicit DeltaEncoderQuantiser(int b) : nl(delta_quantiser_for(b)), bound(b) {}
  // The quantiser of error bound `b` behind a dead zone of `dead_zone` (at
  // most b; e.g. delta_keyframe_dead_zone(b)).
  CUDAFX_HD DeltaEncoderQuantiser(int b, int dead_zone)
      : nl(delta_quantiser_for(b)), bound(dead_zone < b ? dead_zone : b) {}
  CUDAFX_HD int quantise(int err) const {
    return (err <= bound && err >= -bound) ? 0 : nl.quantise(err);
  }
};

// The symbol of a quantised error: 0, -1, 1, -2, 2, ... as 0, 1, 2, 3, 4,
// ... (JPEG-LS's mapping), so small errors have small symbols; < range.
CUDAFX_HD int delta_fold(int k) { return k >= 0 ? 2 * k : -2 * k - 1; }
// (For m >= 0; without a branch: an odd m's -((m + 1) >> 1) is ~(m >> 1).)
CUDAFX_HD int delta_unfold(int m) { return (m >> 1) ^ -(m & 1); }

// LOCO-I's median edge detector from the left (a), above (b) and upper-left
// (c) neighbours.
CUDAFX_HD int delta_med(int a, int b, int c) {
  const int mx = a > b ? a : b, mn = a > b ? b : a;
  return c >= mx ? mn : (c <= mn ? mx : a + b - c);
}

// A keyframe's tiles each choose one of eight spatial predictors (the
// packet's predictor section, docs/delta-format.md), from the left (a),
// above (b), upper-left (c) and upper-right (d) rebuilt bytes (the spec's
// a, b, d and e: its c is the bytes a pixel):
//   0 LOCO-I's MED, the only one of delta frames' spatial tiles;
//   1 the plane through a, b and c, a + b - c;
//   2 halfway between that plane and the mean of a and b,
//     (3a + 3b - 2c) / 4;
//   3 the mean weighted 3:1 toward a, (3a + b) / 4;
//   4 a;
//   5 the mean of b and d;
//   6 (2a + b + d) / 4;
//   7 (3a + b - c + d) / 4: half a, a quarter the plane, a quarter d.
// (Clamped to 0..255 where a sum can leave it; rounded as written, in
// integers: the same bytes on the CPU and the device.) Why: MED follows
// edges, but on a camera's noise the smoother ones predict better, and
// diagonal structure (bigbuckbunny.mp4's and bikes.mp4's) needs the byte
// to the upper right. Chosen by measurement before building: every set of
// eight that holds MED out of twenty candidates, each tile's cheapest member
// by the encoder's cost estimate, keyframes of vtest.avi, bikes.mp4 and
// bigbuckbunny.mp4 at T = 0, 4 and 10, then the best few coded with a model
// of the codec's entropy stage (against the eight without d of the earlier
// development streams, keyframes at T = 10: vtest.avi -2.6 %, bikes.mp4
// -5.0 %, bigbuckbunny.mp4 -12.5 %; all twenty would have gained 0.3-1.3 %
// more for 2.5 times the tries). In the library encoder, keyframes of
// streams with one every 30 frames: -2.0 %, -1.8 %, -7.1 % at T = 10, -1.9 %,
// -1.1 %, -3.8 % at T = 4, lossless level (docs/benchmarks.md).
constexpr int kDeltaSpatialPredictors = 8;
// v / 4 rounded and clamped to 0..255 (a negative v gives 0 either way, so
// it is never shifted below 0).
CUDAFX_HD int delta_quarter_clamped(int v) {
  return v < 0 ? 0 : ((v + 2) >> 2 < 255 ? (v + 2) >> 2 : 255);
}
// Whether predictor kPredictor reads the upper-right byte: a wavefront over
// a tile must then code a row's byte only after the row above has coded the
// byte one pixel to its right (a steeper diagonal, docs/design.md).
template <int kPredictor>
constexpr bool delta_predictor_uses_upper_right = kPredictor >= 5;
template <int kPredictor>
CUDAFX_HD int delta_intra_predictor(int a, int b, int c, int d) {
  static_assert(kPredictor >= 0 && kPredictor < kDeltaSpatialPredictors, "predictor 0..7");
  if constexpr (kPredictor == 0) {
    return delta_med(a, b, c);
  } else if constexpr (kPredictor == 1) {
    const int v = a + b - c;  // -255 .. 510
    return v < 0 ? 0 : (v < 255 ? v : 255);
  } else if constexpr (kPredictor == 2) {
    return delta_quarter_clamped(3 * a + 3 * b - 2 * c);  // -510 .. 1530
  } else if constexpr (kPredictor == 3) {
    return (3 * a + b + 2) >> 2;
  } else if constexpr (kPredictor == 4) {
    return a;
  } else if constexpr (kPredictor == 5) {
    return (b + d + 1) >> 1;
  } else if constexpr (kPredictor == 6) {
    return (2 * a + b + d + 2) >> 2;
  } else {
    return delta_quarter_clamped(3 * a + b - c + d);  // -255 .. 1275
  }
}
// The spatial prediction of the byte at (x, y) of a tile (bytes x, rows y,
// counted from the tile's corner), `c` bytes a pixel, by predictor
// kPredictor: from the tile's own reconstruction only, so that tiles code
// and decode independently. `upper_right` is the byte above one pixel to
// the right, or `above` where that is past the tile's right edge (only
// predictors 5-7 read it). Whatever the predictor, the first pixel of the
// first row predicts 128; the rest of the first row, the left neighbour;
// the first pixel of other rows, the one above.
template <int kPredictor = 0>
CUDAFX_HD int delta_spatial_prediction(int x, int y, int c, int left, int above, int upper_left,
                                       int upper_right) {
  if (y == 0)
    return x < c ? 128 : left;
  if (x < c)
    return above;
  return delta_intra_predictor<kPredictor>(left, above, upper_left, upper_right);
}
// Calls fn(std::integral_constant<int, p>{}) for a predictor p known only
// at run time (0..7; any other value as 0), so that the per-byte loops are
// compiled once for each predictor rather than branching on it a byte.
template <class F>
CUDAFX_HD auto delta_with_predictor(int p, F&& fn) {
  switch (p) {
    case 1: return fn(std::integral_constant<int, 1>{});
    case 2: return fn(std::integral_constant<int, 2>{});
    case 3: return fn(std::integral_constant<int, 3>{});
    case 4: return fn(std::integral_constant<int, 4>{});
    case 5: return fn(std::integral_constant<int, 5>{});
    case 6: return fn(std::integral_constant<int, 6>{});
    case 7: return fn(std::integral_constant<int, 7>{});
    default: return fn(std::integral_constant<int, 0>{});
  }
}

// Intra refresh: with a period of P frames, tile row ty of a plane with
// tiles_y rows is coded spatially (decodable without the reference) in the
// frames whose phase (frame number mod P) is floor(ty * P / tiles_y), so one
// sweep of P frames covers every row of every plane once.
CUDAFX_HD bool delta_in_refresh_band(int ty, int tiles_y, int period, int phase) {
  return period > 0 && static_cast<int>(static_cast<long long>(ty) * period / tiles_y) == phase;
}

// Entropy contexts: 8 activity classes for the symbols of each of the two
// predicting modes, then one for tile modes, then 5 for row masks (a tile
// row's bytes in groups of 8, bit g set when group g has a non-zero
// symbol: clear groups are not coded), by the mask of the row above.
constexpr int kDeltaActivityClasses = 8;
constexpr int kDeltaSymbolContexts = 2 * kDeltaActivityClasses;
constexpr int kDeltaModeContext = kDeltaSymbolContexts;
constexpr int kDeltaMaskContext0 = kDeltaModeContext + 1;
constexpr int kDeltaMaskContexts = 5;
constexpr int kDeltaContexts = kDeltaMaskContext0 + kDeltaMaskContexts;
constexpr int kDeltaGroupBytes = 8;

// The context of a tile row's mask: the first row of a tile has its own;
// the others go by the number of groups set above: 0, 1-2, 3-5, 6-8.
CUDAFX_HD int delta_mask_context(bool first_row, unsigned above) {
  if (first_row)
    return kDeltaMaskContext0;
  int n = 0;
  for (; above; above &= above - 1) n++;
  return kDeltaMaskContext0 + 1 + (n == 0 ? 0 : n <= 2 ? 1 : n <= 5 ? 2 : 3);
}

// How the entropy stage codes a symbol, from the quantised errors kl and ku
// of its left and upper neighbours in the same tile and channel (0 where
// there is none): in the context of its mode and of the activity |kl| +
// |ku| (classes 0, 1, 2, 3-4, 5-8, 9-16, 17-32, 33 and up), and with its
// error's sign flipped when kl + ku < 0 (JPEG-LS's sign merging: an error
// tends to have its neighbours' sign, so one context serves both).
struct DeltaSymbolCoding {
  int context;
  bool flip;
};
CUDAFX_HD int delta_activity_class(int a) {
  // 1 + ceil(log2 a): 3 for 3-4, 4 for 5-8, ... at most 7; it is a itself
  // for a = 1 and 2, so on a device (where __clz(0) is 32) the lane
  // decoder's step takes no branch.
#if defined(__CUDA_ARCH__)
  const int c = a ? 33 - __clz(a - 1) : 0;
#else
  if (a < 3)
    return a;
  const int c = 33 - __builtin_clz(static_cast<unsigned>(a - 1));
#endif
  return c < kDeltaActivityClasses - 1 ? c : kDeltaActivityClasses - 1;
}
CUDAFX_HD DeltaSymbolCoding delta_symbol_coding(int mode, int kl, int ku) {
  const int a = (kl < 0 ? -kl : kl) + (ku < 0 ? -ku : ku);
  return {(mode == kDeltaSpatial ? kDeltaActivityClasses : 0) + delta_activity_class(a),
          kl + ku < 0};
}

// The symbol of the error's sign flip -k, reduced into the alphabet as
// NearLossless::quantise reduces, from the symbol m of k: 0 stays; 2k and
// 2k-1 swap, but for the error -range/2 of an even range, which maps to
// itself. Its own inverse.
CUDAFX_HD int delta_flip_symbol(int m, int range) {
  if (m == 0)
    return 0;
  if (m & 1)
    return m + 1 < range ? m + 1 : m;
  return m - 1;
}


// The encoder's estimate of a symbol's cost, in quarter bits, for choosing a
// tile's mode: a two-sided geometric guess (0 almost free, then about two
// bits a doubling). Only the encoder uses it; any choice decodes.
constexpr int kDeltaMinSymbolCost = 1;  // delta_symbol_cost(0), the least a symbol costs
CUDAFX_HD int delta_symbol_cost(int m) {
  if (m == 0)
    return kDeltaMinSymbolCost;
  int bits = 0;
  while ((m >> bits) != 0) bits++;
  return 8 + 8 * bits;
}

}  // namespace cudafx
