// Byte tables applied in place to the lanes of a plane (byte i of every
// pixel through table map.table[i]): the last step of the grey-world and
// auto-contrast ops, which build one 256-entry table a channel per frame.
#pragma once

#include <cstdint>

#include "cudafx/cuda_resources.hpp"
#include "cudafx/image.hpp"

namespace cudafx {

constexpr int kMaxLaneTables = 3;

// Which table maps each byte lane of a plane's `channels`-byte pixels
// (-1: the lane is kept).
struct LaneMap {
  int channels = 1;
  int table[4] = {-1, -1, -1, -1};
};

// CPU: done on return (bands of rows on the cudafx pool).
void apply_lane_tables_cpu(const PlaneView& plane, const LaneMap& map,
                           const uint8_t (*tables)[256]);

// CUDA: queued on `stream`; `tables` is device memory holding
// kMaxLaneTables x 256 bytes. A block a row (rows past the grid's limit
// strided), the tables in shared memory.
Status apply_lane_tables_cuda(const PlaneView& plane, const LaneMap& map, const uint8_t* tables,
                              StreamHandle stream);

}  // namespace cudafx
