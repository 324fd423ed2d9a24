// The per-pixel rule of corner_markers.hpp, shared by the CPU loop and the
// CUDA kernel.
#pragma once

#include <cmath>

#include "cudafx/corner_markers.hpp"
#include "cudafx/hd.hpp"

namespace cudafx {

// True when offset (dx, dy) from the centre is painted; |dx|, |dy| <= size.
CUDAFX_HD bool marker_covers(MarkerShape shape, int size, int dx, int dy) {
  if (shape == MarkerShape::Cross)
    return dx == 0 || dy == 0;
  const int q4 = 4 * (dx * dx + dy * dy);
  return (2 * size - 1) * (2 * size - 1) <= q4 && q4 < (2 * size + 1) * (2 * size + 1);
}

// What a painted pixel becomes, per plane: the bytes of one pixel of plane
// 0 (up to 4) and of the chroma planes.
struct MarkerPaint {
  uint8_t px[4];   // plane 0, `channels` bytes
  int channels;
  int n_planes;
  uint8_t u, v;    // I420/Y444: planes 1 and 2; NV12: plane 1 holds u, v
  int xs, ys;      // chroma subsampling shifts
  bool nv12;
};

// Paints luma/RGB pixel (px, py), inside the frame, and its chroma sample.
CUDAFX_HD void marker_paint(const ImageView& f, const MarkerPaint& p, int px, int py) {
  uint8_t* d = f.data[0] + static_cast<size_t>(py) * f.pitch[0] + static_cast<size_t>(px) * p.channels;
  for (int c = 0; c < p.channels; c++)
    d[c] = p.px[c];
  if (p.n_planes == 1)
    return;
  const int cx = px >> p.xs, cy = py >> p.ys;
  if (p.nv12) {
    uint8_t* uv = f.data[1] + static_cast<size_t>(cy) * f.pitch[1] + 2 * static_cast<size_t>(cx);
    uv[0] = p.u;
    uv[1] = p.v;
  } else {
    f.data[1][static_cast<size_t>(cy) * f.pitch[1] + cx] = p.u;
    f.data[2][static_cast<size_t>(cy) * f.pitch[2] + cx] = p.v;
  }
}

// The paint for `style` on frames of `format`.
MarkerPaint marker_paint_of(PixelFormat format, const MarkerStyle& style);

}  // namespace cudafx
