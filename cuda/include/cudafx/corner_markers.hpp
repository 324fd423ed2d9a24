// Marks corners on a frame in place: a cross or a ring of one colour around
// each corner of a list (cudaharris's draw=true), identical bytes on both
// backends.
//
// Pixel rule, in luma/RGB pixels: a marker is centred on (cx, cy) =
// (floor(x + 0.5), floor(y + 0.5)) of the corner; a Cross paints (cx + d, cy)
// and (cx, cy + d) for |d| <= size; a Circle paints the pixels whose squared
// distance q = dx^2 + dy^2 from the centre satisfies
// (2 size - 1)^2 <= 4 q < (2 size + 1)^2 (a one-pixel ring of radius size,
// integer arithmetic). Pixels outside the frame are skipped. Packed RGB
// formats get style.rgb in their channel order and 255 in an alpha or
// padding byte; GRAY8 gets style.yuv[0]; I420, NV12 and Y444 get style.yuv[0]
// in the luma plane and yuv[1], yuv[2] (U, V) at the chroma sample that
// holds each painted pixel (x >> subsampling, y >> subsampling). Every write
// of a call stores the same values, so overlapping markers need no order.
#pragma once

#include <cmath>
#include <cstdint>

#include "cudafx/backend.hpp"
#include "cudafx/cuda_resources.hpp"
#include "cudafx/harris.hpp"
#include "cudafx/hd.hpp"
#include "cudafx/image.hpp"
#include "cudafx/status.hpp"

namespace cudafx {

enum class MarkerShape { Cross, Circle };

// The pixel a corner coordinate falls in (pixel centres at integers): the
// marker's centre, and the pixel cudaharris's region metas name.
CUDAFX_HD int marker_centre(float x) { return static_cast<int>(floorf(x + 0.5f)); }

constexpr int kMarkerMaxSize = 64;

struct MarkerStyle {
  MarkerShape shape = MarkerShape::Cross;
  int size = 6;                      // arm length or radius, 1 .. kMarkerMaxSize
  uint8_t rgb[3] = {0, 255, 0};      // for packed RGB formats
  uint8_t yuv[3] = {150, 44, 21};    // for GRAY8 (Y) and the YUV formats
};

// Validates `style` for drawing on frames of `desc`.
Status check_marker_style(const ImageDesc& desc, const MarkerStyle& style);

// Draws the first min(*count, capacity) corners of `corners` on `frame`. For
// Backend::Cuda, `frame`, `corners` and `count` are device memory and the
// work is queued on `stream` (the count is read there, so a list that a
// kernel wrote earlier on the same stream needs no synchronisation); for
// Backend::Cpu, host memory, done on return.
Status draw_corner_markers(Backend backend, StreamHandle stream, const ImageView& frame,
                           const HarrisCorner* corners, const uint32_t* count, int capacity,
                           const MarkerStyle& style);

}  // namespace cudafx
