// The (context, value) pairs of a whole tile row with AVX2, for the
// format-4 CPU encoder's histogram pass (delta_tile_entropy.cpp): the math
// of its SSE2 coded_pairs8 on 16 symbols at a time, compiled with a
// function target attribute and chosen at run time (the library is built
// for x86-64's baseline). The pairs are delta_symbol_coding's, symbol for
// symbol (tests/test_delta_v4.cpp compares them with the per-symbol math at
// every neighbour pair and alphabet).
#pragma once

#include <cstddef>
#include <cstdint>

namespace cudafx {

// Appends to `seq`, in order, the (context << 8 | value) pairs of one tile
// row of kDeltaTileW symbols at `row`, each doubled (the histogram pass's
// sequence: DeltaTileEntropy's coding pass takes it as an index): its mask
// (context `mask_context`; bit g set where group g is not all zero; also
// into *mask_out), then the pairs of the groups the mask sets; and counts
// each pair: counts[pair]++.
// `above` is the tile's row above (null on its first row: no upper
// neighbours), `c` the bytes a pixel (the left neighbour is c bytes
// before; none in a tile's first c bytes), `base` the mode's first
// context, `range` the alphabet. Returns how many pairs it appended.
using DeltaRowPairs = int (*)(const uint8_t* row, const uint8_t* above, int c, int mask_context,
                              int base, int range, uint16_t* seq, uint32_t* counts,
                              unsigned* mask_out);
// The AVX2 version, or null where the CPU (or the compiler) lacks it.
DeltaRowPairs delta_row_pairs_avx2();

}  // namespace cudafx
