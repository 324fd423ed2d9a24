// CPU half of lane_tables.hpp.
#include <algorithm>

#include "common/lane_tables.hpp"
#include "cudafx/parallel.hpp"

namespace cudafx {

void apply_lane_tables_cpu(const PlaneView& p, const LaneMap& map, const uint8_t (*tables)[256]) {
  const int n = std::min(cpu_worker_count(), p.height);
  parallel_for(n, [&](int band, int) {
    const int y0 = static_cast<int>(static_cast<long>(p.height) * band / n);
    const int y1 = static_cast<int>(static_cast<long>(p.height) * (band + 1) / n);
    for (int c = 0; c < map.channels; c++) {
      if (map.table[c] < 0)
        continue;
      const uint8_t* t = tables[map.table[c]];
      for (int y = y0; y < y1; y++) {
        uint8_t* row = p.data + static_cast<size_t>(y) * p.pitch + c;
        for (int x = 0; x < p.width; x++) {
          uint8_t& b = row[static_cast<size_t>(x) * map.channels];
          b = t[b];
        }
      }
    }
  });
}

}  // namespace cudafx
