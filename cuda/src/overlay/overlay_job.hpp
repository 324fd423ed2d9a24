// The overlay blend as a job over frame pixels and chroma samples: what the
// CPU loop and the CUDA kernel run, one function a pixel or sample and
// placement, so both backends write the same bytes. blend_overlay is a job
// of one placement, blend_overlay_list one of up to kMaxOverlayPlacements.
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

// One placed overlay, clipped to the frame: it covers frame pixels
// [x0, x1) x [y0, y1) (not empty), `src` being the overlay pixel on frame
// pixel (x0, y0), its rows the job's `pitch` apart.
struct OverlayRect {
  const uint8_t* src;
  int x0, y0, x1, y1;
};

// Everything a pixel or a sample needs: the frame and its per-format rules,
// and the placed overlays in the order they blend. Passed by value as the
// CUDA kernel's parameter (under 4 KB).
struct OverlayJob {
  ImageView frame;
  bool packed;  // plane 0: packed RGB (else one luma byte)
  OverlayPackedLayout layout;
  OverlayChroma chroma;
  int chroma_shift;  // 1 for 4:2:0, else 0
  OverlayYuvCoeffs k;
  size_t pitch;            // the overlays' row pitch
  int count;               // rects in use
  int x0, y0, x1, y1;      // the bounding box of the rects
  int cx0, cy0, cx1, cy1;  // chroma samples that hold a pixel of the box
  OverlayRect rects[kMaxOverlayPlacements];
};

// The chroma samples that hold a pixel of r: [cx0, cx1) x [cy0, cy1).
struct OverlayChromaRect {
  int cx0, cy0, cx1, cy1;
};

CUDAFX_HD OverlayChromaRect overlay_chroma_rect(const OverlayJob& j, const OverlayRect& r) {
  const int s = j.chroma_shift;
  return {r.x0 >> s, r.y0 >> s, ((r.x1 - 1) >> s) + 1, ((r.y1 - 1) >> s) + 1};
}

CUDAFX_HD const uint8_t* overlay_pixel(const OverlayJob& j, const OverlayRect& r, int fx,
                                       int fy) {
  return r.src + static_cast<size_t>(fy - r.y0) * j.pitch + static_cast<size_t>(fx - r.x0) * 4;
}

// Frame pixel (fx, fy), one that `rect` covers: its plane-0 bytes (RGB or luma).
CUDAFX_HD void overlay_blend_pixel(const OverlayJob& j, const OverlayRect& rect, int fx,
                                    int fy) {
  const uint8_t* o = overlay_pixel(j, rect, fx, fy);
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

// Chroma sample (cx, cy), one of r's chroma rectangle: U and V from the sums
// over the frame pixels it covers, those outside r transparent.
CUDAFX_HD void overlay_blend_chroma(const OverlayJob& j, const OverlayRect& r, int cx, int cy) {
  const int shift = j.chroma_shift;
  const int fx0 = cx << shift, fy0 = cy << shift;
  const int W = j.frame.desc.width, H = j.frame.desc.height;
  const int fx1 = fx0 + (1 << shift) < W ? fx0 + (1 << shift) : W;
  const int fy1 = fy0 + (1 << shift) < H ? fy0 + (1 << shift) : H;
  int sa = 0, sb = 0, sg = 0, sr = 0;
  for (int fy = fy0; fy < fy1; fy++) {
    for (int fx = fx0; fx < fx1; fx++) {
      if (fy < r.y0 || fy >= r.y1 || fx < r.x0 || fx >= r.x1)
        continue;
      const uint8_t* o = overlay_pixel(j, r, fx, fy);
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

// Frame pixel (fx, fy) of the box: every rect that covers it, in order,
// each reading what the one before wrote -- the pixel's bytes after the
// sequence of single blends.
CUDAFX_HD void overlay_blend_pixel_all(const OverlayJob& j, int fx, int fy) {
  for (int i = 0; i < j.count; i++) {
    const OverlayRect& r = j.rects[i];
    if (fx >= r.x0 && fx < r.x1 && fy >= r.y0 && fy < r.y1)
      overlay_blend_pixel(j, r, fx, fy);
  }
}

// Chroma sample (cx, cy) of the box: every rect whose chroma rectangle
// holds it, in order, each with its own sums.
CUDAFX_HD void overlay_blend_chroma_all(const OverlayJob& j, int cx, int cy) {
  for (int i = 0; i < j.count; i++) {
    const OverlayChromaRect c = overlay_chroma_rect(j, j.rects[i]);
    if (cx >= c.cx0 && cx < c.cx1 && cy >= c.cy0 && cy < c.cy1)
      overlay_blend_chroma(j, j.rects[i], cx, cy);
  }
}

// Queues the job (count >= 1) on `stream` as one kernel launch
// (overlay_blend_cuda.cu).
Status blend_overlay_cuda(StreamHandle stream, const OverlayJob& job);

}  // namespace cudafx
