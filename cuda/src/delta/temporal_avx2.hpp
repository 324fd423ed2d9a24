// Temporal coding of a whole tile with AVX2, for the format-4 CPU encoder
// (delta_tiles_cpu.cpp) on CPUs that run it: the math of the SSE2 kernels
// (delta/temporal_sse2.hpp: code_lossless16, NearLosslessTemporal16) on 32
// bytes at a time, compiled with a function target attribute and chosen at
// run time (the library is built for x86-64's baseline). The symbols, the
// reconstruction and the summed delta_symbol_cost are the per-byte math's,
// byte for byte (tests/test_delta_v4.cpp compares every byte pair at every
// bound).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cudafx/delta_predict_math.hpp"

namespace cudafx {

// Codes h rows of kDeltaTileW bytes of `cur` (cp a row) against `ref` (rp
// a row) with quantiser q: symbols into `sym` and the reconstruction into
// `rec` (kDeltaTileW a row); returns the summed cost.
using DeltaTemporalTile = int (*)(const uint8_t* cur, size_t cp, const uint8_t* ref, size_t rp,
                                  int h, const DeltaEncoderQuantiser& q, uint8_t* sym,
                                  uint8_t* rec);
// The AVX2 version, or null where the CPU (or the compiler) lacks it.
DeltaTemporalTile delta_temporal_tile_avx2();

}  // namespace cudafx
