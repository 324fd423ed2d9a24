// The shade as a job over the pixels of a clipped rectangle: what the CPU
// loop and the CUDA kernel run, one function a pixel, so both backends write
// the same bytes (shade.hpp has the rules).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cudafx/cuda_resources.hpp"
#include "cudafx/hd.hpp"
#include "cudafx/status.hpp"

namespace cudafx {

// Plane 0 of the frame, which of each pixel's bytes are shaded, by how much,
// and where. Passed by value as the CUDA kernel's parameter.
struct ShadeJob {
  uint8_t* plane;  // plane 0 of the frame
  size_t pitch;
  int channels;     // bytes a pixel of plane 0 (4, 3 or 1)
  int first, count;  // the shaded bytes of a pixel: [first, first + count)
  int value;         // 0..255
  int x0, y0, x1, y1;  // the rectangle, clipped to the frame, not empty
};

CUDAFX_HD uint8_t shade_byte(int b, int value) {
  return static_cast<uint8_t>(b > value ? b - value : 0);
}

// Frame pixel (fx, fy) of the job's rectangle.
CUDAFX_HD void shade_pixel(const ShadeJob& j, int fx, int fy) {
  uint8_t* p = j.plane + static_cast<size_t>(fy) * j.pitch +
               static_cast<size_t>(fx) * j.channels + j.first;
  for (int k = 0; k < j.count; k++)
    p[k] = shade_byte(p[k], j.value);
}

// Queues the job on `stream` as one kernel launch (shade_cuda.cu).
Status shade_rect_cuda(StreamHandle stream, const ShadeJob& job);

}  // namespace cudafx
