// What every convolution kernel is told about the plane it filters: the
// images, the plane's size, which bytes of a pixel are filtered, the
// kernel's size and anchor and the border rule. Each kernel's own
// arguments extend it (convolve_cuda.cu fills it once a plane).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cudafx/border.hpp"

namespace cudafx {

struct ConvolvePlaneArgs {
  const uint8_t* src;
  uint8_t* dst;
  size_t src_pitch, dst_pitch;
  int width, height;  // pixels
  unsigned lanes;     // bit c: byte c of a pixel is filtered
  int kw, kh, ax, ay;
  BorderMode border;
};

}  // namespace cudafx
