// Darkens one rectangle of a frame in place: cudatextoverlay's
// shaded-background, the box behind the text made darker so that the text
// reads on bright video. The semantics of textoverlay's shading (its
// gst_base_text_overlay_shade_* functions), identical bytes on both
// backends.
//
// Every frame pixel (x', y') with x <= x' < x + width, y <= y' < y + height
// (the rectangle clipped to the frame) has these bytes of plane 0 replaced,
// b -> max(0, b - value), and no other byte of the frame is written:
//   GRAY8, I420, NV12, Y444: the luma byte. Chroma is left as it is, so the
//     colour keeps its hue and gets darker (textoverlay shades only Y too).
//   RGB, BGR: the three colour bytes.
//   RGBA, BGRA, ARGB, ABGR: the three colour bytes; alpha is kept. Alpha
//     says how opaque a pixel is, not how bright: lowering it would make
//     the box more transparent wherever the frame is composited later, the
//     opposite of a shaded background (textoverlay keeps it too).
//   RGBx, BGRx: the three colour bytes; the padding byte is kept.
//     textoverlay subtracts from all four bytes of its xRGB-type formats;
//     the padding byte means nothing to any reader, and keeping it follows
//     blend_overlay (which never writes it either), so cudatextoverlay's
//     frames differ from textoverlay's there only: compare colour bytes.
// Row padding of any plane (pitch beyond the row) is never written.
//
// What this op does not do (the element's part): textoverlay pads the text
// box by 6 pixels on each side before shading (BOX_XPAD, BOX_YPAD) and then
// blends the text over the shaded box; the caller passes the padded box.
#pragma once

#include "cudafx/backend.hpp"
#include "cudafx/cuda_resources.hpp"
#include "cudafx/image.hpp"
#include "cudafx/status.hpp"

namespace cudafx {

// Shades the rectangle of `width` x `height` pixels whose top-left pixel is
// frame pixel (x, y), by `value` (0..255: 0 changes nothing, 255 makes the
// luma or colour bytes 0). Parts outside the frame are skipped; a rectangle
// wholly outside the frame, or with width <= 0 or height <= 0, is no work
// and no error (x + width may pass INT_MAX: the sums are taken in 64 bits).
//
// Checked before anything is written: the frame (validate_view, "shade
// frame: ..."), 0 <= value <= 255 ("shade: value V is not in 0..255"), and
// that the backend is built (also when there is nothing to do).
//
// Backend::Cuda: the frame is device memory; one kernel launch, one thread a
// pixel of the clipped rectangle (rectangles taller than 524 280 rows reuse
// threads for the rows past the grid's limit), queued on `stream`: no
// synchronisation, no allocation. Backend::Cpu: host memory, done on return
// (bands of rows on the cudafx pool for large rectangles). Both run the same
// per-pixel code.
Status shade_rect(Backend backend, StreamHandle stream, const ImageView& frame, int x, int y,
                  int width, int height, int value);

}  // namespace cudafx
