// The overlay blend as a job over frame pixels and chroma samples: what the
// CPU loop and the CUDA kernels run, one function a pixel or sample, so both
// backends write the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cudafx/hd.hpp"
#include "cudafx/image.hpp"
#include "cudafx/overlay_blend.hpp"
#include "cudafx/overlay_blend_math.hpp"

namespace cudafx {

// Where B, G, R and alpha sit in a packed frame pixel (alpha -1: none).
struct OverlayPackedLayout {
  int channels;
  int b, g, r, a;
};

// What the chroma planes are: none (packed RGB, GRAY8), 2x2 subsampled in
// two planes (I420) or interleaved (NV12), or full size (Y444).
enum class OverlayChroma { None, Planar420, NV12, Planar444 };

// Everything a pixel or a sample needs: the frame, the overlay and where it
// lies, the part of the frame it covers, and the per-format rules.
struct OverlayJob {
  ImageView frame;
  const uint8_t* ov;       // overlay pixel (0, 0)
  size_t ov_pitch;
  int ox, oy;              // overlay origin in the frame
  int x0, y0, x1, y1;      // covered frame pixels [x0, x1) x [y0, y1), not empty
  int cx0, cy0, cx1, cy1;  // chroma samples that hold a covered pixel
  bool packed;             // plane 0: packed RGB (else one luma byte)
  OverlayPackedLayout layout;
  OverlayChroma chroma;
  OverlayYuvCoeffs k;
};

CUDAFX_HD const uint8_t* overlay_pixel(const OverlayJob& j, int fx, int fy) {
  return j.ov + static_cast<size_t>(fy - j.oy) * j.ov_pitch + static_cast<size_t>(fx - j.ox) * 4;
}

// Frame pixel (fx, fy), a covered one: its plane-0 bytes (RGB or luma).
CUDAFX_HD void overlay_blend_pixel(const OverlayJob& j, int fx, int fy) {
  const uint8_t* o = overlay_pixel(j, fx, fy);
  const int b = o[0], g = o[1], r = o[2], a = o[3];
  if (j.packed) {
    const OverlayPackedLayout& L = j.layout;
    uint8_t* d = j.frame.data[0] + static_cast<size_t>(fy) * j.frame.pitch[0] +
                 static_cast<size_t>(fx) * L.channels;
    d[L.b] = over_u8(b, a, d[L.b]);
    d[L.g] = over_u8(g, a, d[L.g]);
    d[L.r] = over_u8(r, a, d[L.r]);
    if (L.a >= 0)
      d[L.a] = over_u8(a, a, d[L.a]);
    return;
  }
  uint8_t* d = j.frame.data[0] + static_cast<size_t>(fy) * j.frame.pitch[0] + fx;
  *d = over_yuv(j.k.y, a, b, g, r, *d, 0);
}

// Chroma sample (cx, cy) of [cx0, cx1) x [cy0, cy1): U and V from the sums
// over the frame pixels it covers, those outside the rectangle transparent.
CUDAFX_HD void overlay_blend_chroma(const OverlayJob& j, int cx, int cy) {
  const int shift = j.chroma == OverlayChroma::Planar444 ? 0 : 1;
  const int fx0 = cx << shift, fy0 = cy << shift;
  const int W = j.frame.desc.width, H = j.frame.desc.height;
  const int fx1 = fx0 + (1 << shift) < W ? fx0 + (1 << shift) : W;
  const int fy1 = fy0 + (1 << shift) < H ? fy0 + (1 << shift) : H;
  int sa = 0, sb = 0, sg = 0, sr = 0;
  for (int fy = fy0; fy < fy1; fy++) {
    for (int fx = fx0; fx < fx1; fx++) {
      if (fy < j.y0 || fy >= j.y1 || fx < j.x0 || fx >= j.x1)
        continue;
      const uint8_t* o = overlay_pixel(j, fx, fy);
      sb += o[0];
      sg += o[1];
      sr += o[2];
      sa += o[3];
    }
  }
  // n = (fx1 - fx0) (fy1 - fy0) is 1, 2 or 4 = 2^s.
  const int s = (fx1 - fx0 - 1) + (fy1 - fy0 - 1);
  uint8_t* u = j.frame.data[1] + static_cast<size_t>(cy) * j.frame.pitch[1];
  uint8_t* v;
  if (j.chroma == OverlayChroma::NV12) {
    u += 2 * static_cast<size_t>(cx);
    v = u + 1;
  } else {
    u += cx;
    v = j.frame.data[2] + static_cast<size_t>(cy) * j.frame.pitch[2] + cx;
  }
  *u = over_yuv(j.k.u, sa, sb, sg, sr, *u, s);
  *v = over_yuv(j.k.v, sa, sb, sg, sr, *v, s);
}

// Queues the job's kernels on `stream` (overlay_blend_cuda.cu).
Status blend_overlay_cuda(StreamHandle stream, const OverlayJob& job);

}  // namespace cudafx
