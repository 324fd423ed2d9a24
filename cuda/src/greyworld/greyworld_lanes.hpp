// The lanes of plane `plane` that a grey-world layout balances, as a
// LaneMap (table i for channel i); false when the plane has none.
#pragma once

#include "common/lane_tables.hpp"
#include "cudafx/greyworld.hpp"

namespace cudafx {

inline bool greyworld_lane_map(const GreyWorldLayout& l, int plane, LaneMap* out) {
  LaneMap m;
  bool any = false;
  for (int i = 0; i < l.count; i++) {
    if (l.ch[i].plane != plane)
      continue;
    m.channels = l.ch[i].channels;
    m.table[l.ch[i].offset] = i;
    any = true;
  }
  *out = m;
  return any;
}

}  // namespace cudafx
