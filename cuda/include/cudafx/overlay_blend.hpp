// Blends one overlay rectangle onto a frame in place: the premultiplied
// "over" operator, on frames of every PixelFormat, identical bytes on both
// backends. For text and graphics that Cairo or GStreamer rendered
// (cudatextoverlay, GstVideoOverlayComposition).
//
// The overlay is what CAIRO_FORMAT_ARGB32 and a GstVideoOverlayRectangle
// with GST_VIDEO_OVERLAY_FORMAT_FLAG_PREMULTIPLIED give on little-endian
// machines: 4 bytes a pixel in memory order B, G, R, A, the colour
// premultiplied by alpha (B, G, R <= A). Its pixel (i, j) lies on frame pixel
// (x + i, y + j); pixels that fall outside the frame are skipped (an overlay
// wholly outside is no work and no error). Only frame pixels, and chroma
// samples, that the rectangle covers are written.
//
// Notation: a, b, g, r are an overlay pixel's bytes, d a frame byte,
// div255(v) = (v + 128 + ((v + 128) >> 8)) >> 8, which is v / 255 rounded to
// the nearest integer for 0 <= v <= 65025 (v / 255 is never half way, 255
// being odd). Results are clamped to 0..255: Full-range chroma of saturated
// colours reaches 255.5 (128 + 255 / 2), and overlays that break B, G, R <= A
// go further.
//
// Packed RGB formats, per channel in the frame's own byte order:
//   out = min(255, c + div255((255 - a) * d))     for c = r, g, b
// and the frame's alpha byte (RGBA BGRA ARGB ABGR) gets the "over" alpha,
//   A_out = min(255, a + div255((255 - a) * A)),
// while padding bytes (RGBx BGRx) are left as they were. Exact: out is the
// rational value rounded to the nearest integer, an opaque pixel (a = 255)
// writes its colour and a transparent one (a = 0, colour 0) nothing new.
//
// GRAY8 and the YUV formats (I420, NV12, Y444): the overlay is converted
// with the frame's matrix and range (OverlayColorimetry). With
// Kg = 1 - Kr - Kb, Y' = Kr r + Kg g + Kb b and (offY, sY, sC) =
// (16, 219, 224) for Limited range, (0, 255, 255) for Full, a premultiplied
// overlay pixel converts to
//   Y_p  = offY a / 255 + sY Y' / 255
//   Cb_p = 128 a / 255 + sC (b - Y') / (255 * 2 (1 - Kb))
//   Cr_p = 128 a / 255 + sC (r - Y') / (255 * 2 (1 - Kr))
// (the offsets scale with alpha: this is a/255 times the straight colour's
// Y'CbCr), and a frame value d becomes
//   out = V_p + (255 - a) d / 255.
// GRAY8 and the luma plane use Y_p per pixel; Y444's chroma planes use Cb_p
// and Cr_p per pixel. I420 and NV12 chroma: a sample blends the averages of
// Cb_p (Cr_p) and of a over the n frame pixels it covers (2x2, fewer on the
// frame's last odd column or row), covered pixels outside the rectangle
// counting as a = 0 and colour 0; a sample is written when the rectangle
// covers at least one of its pixels.
//
// Integers (the same on the CPU and the GPU): the coefficients are scaled by
// 2^14 and rounded to nearest (M_K = round(2^14 sY K) for luma's r and b,
// M_b = 2^13 sC for Cb and M_r = 2^13 sC for Cr exactly, the rest rounded),
// each row's remaining coefficient taken so that the row sums exactly
// (2^14 sY for luma, 0 for chroma: grey stays on 128). Over the n = 2^s
// pixels of a value, with A, B, G, R the sums of a, b, g, r,
//   T   = 2^14 (off A + (255 n - A) d) + M_b B + M_g G + M_r R
//   out = min(255, floor((T + 255 2^13 n) / (255 2^14 n)))   (0 if T < 0)
// one rounding, to nearest with halves up. Guarantee: |out - v| <= 0.5 +
// 2^-13 for v the exact value above (clamped to 0..255); so out is v
// rounded to nearest except within 2^-13 of a half, and a transparent
// overlay (a = 0, colour 0) leaves every value exactly as it was.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cudafx/backend.hpp"
#include "cudafx/cuda_resources.hpp"
#include "cudafx/image.hpp"
#include "cudafx/status.hpp"

namespace cudafx {

// Premultiplied B, G, R, A bytes, `pitch` bytes from one row to the next.
struct OverlayImage {
  const uint8_t* data = nullptr;
  size_t pitch = 0;
  int width = 0;
  int height = 0;
};

// Kr, Kb: BT601 0.299, 0.114; BT709 0.2126, 0.0722; BT2020 0.2627, 0.0593.
enum class ColorMatrix { BT601, BT709, BT2020 };
// Limited: Y 16..235, Cb/Cr 16..240; Full: 0..255 (chroma offset 128 in both).
enum class ColorRange { Limited, Full };

// How a GRAY8 or YUV frame encodes colour; ignored for packed RGB frames.
struct OverlayColorimetry {
  ColorMatrix matrix = ColorMatrix::BT601;
  ColorRange range = ColorRange::Limited;
};

// Validates an overlay for frames of `frame` and the colorimetry: sizes > 0,
// data present, pitch >= width * 4, known matrix and range.
Status check_overlay(const ImageDesc& frame, const OverlayImage& overlay,
                     const OverlayColorimetry& color);

// Blends `overlay`, its top-left pixel on frame pixel (x, y), onto `frame`.
// For Backend::Cuda, the frame and the overlay are device memory and the work
// is queued on `stream` (no synchronisation, no allocation); for
// Backend::Cpu, host memory, done on return.
Status blend_overlay(Backend backend, StreamHandle stream, const ImageView& frame,
                     const OverlayImage& overlay, int x, int y, const OverlayColorimetry& color);

// One sub-image of an atlas (a glyph, say) placed on the frame: the atlas's
// pixels [src_x, src_x + width) x [src_y, src_y + height), its top-left one
// on frame pixel (x, y).
struct OverlayPlacement {
  int src_x, src_y, width, height;
  int x, y;
};

// The most placements one blend_overlay_list call takes: they travel by value
// in the CUDA kernel's parameters (64 x 24 bytes, inside the 4 KB limit), so a
// call uploads and allocates nothing.
constexpr int kMaxOverlayPlacements = 64;

// Blends `count` sub-images of `atlas` onto `frame`, with one CUDA launch
// (issue #14: a changing time code costs the host one call a frame, not one
// a glyph). The result is, byte for byte on both backends, that of
//   for i in 0 .. count - 1:
//     blend_overlay(backend, stream, frame, sub-image i of the atlas,
//                   placements[i].x, placements[i].y, color)
// the sub-image being {atlas.data + src_y * atlas.pitch + src_x * 4,
// atlas.pitch, width, height}: the header's rules one placement at a time, in
// list order, overlapping placements included. In particular a 4:2:0 chroma
// sample that two placements touch is blended twice, each time with that
// placement's own average over the sample's pixels (the other's pixels
// counting as transparent) -- even where the placements share no luma pixel.
// Atlas pixels outside a placement's sub-image never count.
//
// Checked before anything is written (where the sequence of calls would stop
// half way, this writes nothing): the atlas and the colorimetry as
// check_overlay, the frame, 0 <= count <= kMaxOverlayPlacements, `placements`
// not null when count > 0, every sub-image non-empty and inside the atlas.
// Placements may lie partly or wholly off the frame (those parts are no
// work); count 0 is no work.
//
// Backend::Cuda: the frame and the atlas are device memory, `placements`
// host memory (read before the call returns); the work is queued on `stream`
// (no synchronisation, no allocation). How the GPU keeps the order: one
// thread a frame pixel (and, in the same launch, one a chroma sample) over
// the bounding box of the placements' clipped rectangles; each thread
// applies, in list order, every placement whose rectangle (for chroma: whose
// chroma samples) holds its pixel (sample), each with the per-pixel
// (per-sample) code of blend_overlay, reading back what the previous one
// wrote. A pixel's result depends only on its own bytes and the placements
// over it, and a chroma sample's only on its own bytes and those
// placements' pixels in its 2x2 (never on luma), so this is the sequence;
// no two threads write the same byte. Cost: a rectangle test per placement
// for each pixel of the box. Backend::Cpu: host memory, done on return, each
// placement's rectangle in list order (over bands of rows) with the same
// per-pixel code.
Status blend_overlay_list(Backend backend, StreamHandle stream, const ImageView& frame,
                          const OverlayImage& atlas, const OverlayPlacement* placements,
                          int count, const OverlayColorimetry& color);

}  // namespace cudafx
