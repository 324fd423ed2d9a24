// The lanes of plane 0 an auto-contrast layout stretches (autocontrast.cpp).
#pragma once

#include "common/lane_tables.hpp"
#include "cudafx/autocontrast.hpp"

namespace cudafx {

LaneMap autocontrast_lane_map(const AutoContrastLayout& l);

}  // namespace cudafx
