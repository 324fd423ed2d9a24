// Motion-compensated temporal tiles of the delta codec's format 4
// (docs/delta-format.md, "Tiles and modes" and "Vector section"): a
// temporal tile may carry one vector (dx, dy), in half pixels of its
// plane; its bytes are then predicted from the reference's bytes at the
// moved place (at a half pixel, the rounded mean of the two or four whole
// pixels around it), each pixel clamped to the plane and its channel kept.
// Packets with vectors set
// header flag 5 and carry them in a section of their own, so the lanes and
// their coders are those of tiles without motion.
//
// The per-byte math (where a moved byte is read) and the reference
// encoder's search rule are shared by the CPU and CUDA paths, so both find
// the same vectors and make the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cudafx/hd.hpp"
#include "cudafx/image.hpp"
#include "cudafx/status.hpp"

namespace cudafx {

struct DeltaLayout;  // delta.hpp, which includes this header
struct DeltaPlaneLayout;

// One tile's vector, in half pixels; (0, 0) is none (a plain temporal
// tile).
struct DeltaVector {
  int8_t dx = 0, dy = 0;
};
// Largest |dx| and |dy| the format allows, in half pixels.
constexpr int kDeltaMaxVector = 127;

CUDAFX_HD bool delta_vector_set(DeltaVector v) { return v.dx != 0 || v.dy != 0; }
// The whole pixels of a half-pixel offset, rounded down (-3 -> -2).
CUDAFX_HD int delta_whole_pixels(int half) { return (half - (half & 1)) / 2; }

// Where the prediction of byte column `col` of a plane `row_bytes` wide, c
// bytes a pixel, moved dx pixels, is read: the same channel of pixel
// col / c + dx, clamped to the plane's pixels.
CUDAFX_HD int delta_moved_column(int col, int dx, int c, int row_bytes) {
  const int px = col / c, channel = col - px * c, last = row_bytes / c - 1;
  int q = px + dx;
  q = q < 0 ? 0 : (q > last ? last : q);
  return q * c + channel;
}
// The same for row `row` of a plane `height` rows high, moved dy rows.
CUDAFX_HD int delta_moved_row(int row, int dy, int height) {
  const int r = row + dy;
  return r < 0 ? 0 : (r >= height ? height - 1 : r);
}
// The prediction of byte (col, row) of a plane (`pitch` bytes a row, c a
// pixel, row_bytes wide, `height` rows) moved by v: the byte at the whole
// pixel (ix, iy) = v / 2 rounded down; for an odd dx the rounded mean with
// the byte one pixel right of it, for an odd dy with the byte a row below,
// for both the rounded mean of the four; every one of them read as
// delta_moved_column / delta_moved_row place it.
CUDAFX_HD int delta_moved_byte(const uint8_t* plane, size_t pitch, int col, int row, DeltaVector v,
                               int c, int row_bytes, int height) {
  const int ix = delta_whole_pixels(v.dx), iy = delta_whole_pixels(v.dy);
  const bool fx = v.dx & 1, fy = v.dy & 1;
  const uint8_t* r0 = plane + static_cast<size_t>(delta_moved_row(row, iy, height)) * pitch;
  const int c0 = delta_moved_column(col, ix, c, row_bytes);
  if (!fx && !fy)
    return r0[c0];
  const int c1 = fx ? delta_moved_column(col, ix + 1, c, row_bytes) : c0;
  if (!fy)
    return (r0[c0] + r0[c1] + 1) >> 1;
  const uint8_t* r1 = plane + static_cast<size_t>(delta_moved_row(row, iy + 1, height)) * pitch;
  if (!fx)
    return (r0[c0] + r1[c0] + 1) >> 1;
  return (r0[c0] + r0[c1] + r1[c0] + r1[c1] + 2) >> 2;
}

// -- the reference encoder's search (an encoder's own business: any vector
// within the format's bound decodes) --
//
// Every tile that is not skipped is searched (also those with few bytes
// off: at T = 10 searching only tiles with an eighth of their symbols
// non-zero lost a third of the gain on bigbuckbunny.mp4): each candidate
// vector v != (0, 0) is scored by the sum of absolute differences between
// the tile and the reference moved by v, and becomes the best when its sum
// is smaller than the best's so far (which starts as (0, 0) with its own
// sum). Stages 1 and 2 try whole pixels within kDeltaMaxSearch: stage 1,
// in this order, the tile's vector in the previous frame, the plane's most
// frequent vector in the previous frame (delta_global_vectors; both
// rounded down to whole pixels), and for r = 2, 4, 8, 16 the 8 points (±r
// or 0, ±r or 0); stage 2 the 24 points within 2 of stage 1's best (rows
// dy - 2 .. dy + 2, each dx - 2 .. dx + 2, the best itself left out).
// Stage 3 tries the 8 half pixels around stage 2's best (row by row, the
// best itself left out; around (0, 0) too), whose mean of the whole
// pixels beside them also halves the reference's noise (session 21:
// +21 % and +39 % at T = 4 on the moving clips). The best, when it is not
// (0, 0), is then coded; the tile keeps it when that costs less than the
// plain temporal coding, and then competes with spatial coding as a
// temporal tile does (temporal on a tie).
constexpr int kDeltaSearchStage1 = 2 + 4 * 8;
constexpr int kDeltaSearchStage2 = 24;
constexpr int kDeltaSearchStage3 = 8;
constexpr int kDeltaMaxSearch = (kDeltaMaxVector - 1) / 2;  // whole pixels: 63

// Candidate k of stage 1 into (*dx, *dy), whole pixels.
CUDAFX_HD void delta_search_stage1(int k, DeltaVector own, DeltaVector global, int* dx,
                                          int* dy) {
  if (k < 2) {
    const DeltaVector v = k == 0 ? own : global;
    *dx = delta_whole_pixels(v.dx);
    *dy = delta_whole_pixels(v.dy);
    return;
  }
  k -= 2;
  const int r = 2 << (k / 8), d = k % 8;  // d: the 8 directions, row by row
  const int p = d < 4 ? d : d + 1;        // 0..8 without the centre, 4
  *dx = (p % 3 - 1) * r;
  *dy = (p / 3 - 1) * r;
}
// Candidate k of stage 2 around (bx, by).
CUDAFX_HD void delta_search_stage2(int k, int bx, int by, int* dx, int* dy) {
  const int p = k < 12 ? k : k + 1;  // 0..24 without the centre, 12
  *dx = bx + p % 5 - 2;
  *dy = by + p / 5 - 2;
}
// Candidate k of stage 3 around stage 2's best (bx, by) (whole pixels),
// in half pixels.
CUDAFX_HD void delta_search_stage3(int k, int bx, int by, int* hx, int* hy) {
  const int p = k < 4 ? k : k + 1;  // 0..8 without the centre, 4
  *hx = 2 * bx + p % 3 - 1;
  *hy = 2 * by + p / 3 - 1;
}
// Whether a whole-pixel candidate (stages 1 and 2) is scored.
CUDAFX_HD bool delta_search_candidate(int dx, int dy) {
  return (dx != 0 || dy != 0) && dx >= -kDeltaMaxSearch && dx <= kDeltaMaxSearch &&
         dy >= -kDeltaMaxSearch && dy <= kDeltaMaxSearch;
}
// Whether a half-pixel candidate (stage 3) is scored.
CUDAFX_HD bool delta_search_half_candidate(int hx, int hy) {
  return (hx != 0 || hy != 0) && hx >= -kDeltaMaxVector && hx <= kDeltaMaxVector &&
         hy >= -kDeltaMaxVector && hy <= kDeltaMaxVector;
}

// What the encoders need to search: the reference before this frame (the
// encoder overwrites its reference tile by tile, and a moved tile reads its
// neighbours'), the previous frame's vectors (one a tile, all planes; all
// (0, 0) after a keyframe or a frame without search) and each plane's most
// frequent one, and where this frame's go. Host memory for the CPU encoder,
// device memory (but `global`) for the CUDA one.
// `margin`: pixels (and rows) around each plane of `prev` that may be read
// and repeat the plane's edge, as the moved bytes' clamping reads them
// (the CPU encoder's references: delta_margin_image); 0 for none.
struct DeltaMotionSearch {
  ImageView prev;
  const DeltaVector* previous = nullptr;
  DeltaVector global[kMaxPlanes];
  DeltaVector* vectors = nullptr;
  int margin = 0;
};

// The margin of the CPU encoder's copy of the reference: every byte the
// search reads (whole pixels within kDeltaMaxSearch, half pixels one
// further) falls inside it, so no candidate clamps.
constexpr int kDeltaSearchMargin = kDeltaMaxSearch + 1;
// An image of `layout` with kDeltaSearchMargin pixels and rows around each
// plane, in `storage` (resized here when its size is not the layout's);
// *view is its planes. Its bytes are as `storage` held them (zero when
// new).
void delta_margin_image(const DeltaLayout& layout, std::vector<uint8_t>* storage,
                        ImageView* view);
// Fills the margin beside rows [y0, y1) of a plane of such an image (p's
// plane, its first byte at `plane`, `pitch` bytes a row) with their edge
// pixels, and with y0 = 0 or y1 = p.height the rows above or below the
// plane with its first or last row (margins included).
void delta_fill_margin_rows(const DeltaPlaneLayout& p, uint8_t* plane, size_t pitch, int y0,
                            int y1);
// The same for every plane of such an image, all rows (in parallel).
void delta_fill_margins(const DeltaLayout& layout, const ImageView& view);

// Each plane's most frequent vector other than (0, 0) in `v` (one a tile,
// all planes), the earliest in tile order among equally frequent ones;
// (0, 0) for a plane with none.
void delta_global_vectors(const DeltaLayout& layout, const DeltaVector* v,
                          DeltaVector global[kMaxPlanes]);
bool delta_any_vector(const DeltaLayout& layout, const DeltaVector* v);

// The vector section (docs/delta-format.md): appends its 4-byte size and
// its bit stream to `out`.
void write_delta_vectors(const DeltaLayout& layout, const DeltaVector* v,
                         std::vector<uint8_t>* out);
// Reads a vector section at `data` (`size` bytes available) into `v` (one a
// tile), setting *used to its length. Every violation of the format is an
// InvalidArgument naming it.
Status read_delta_vectors(const DeltaLayout& layout, const uint8_t* data, size_t size,
                          size_t* used, DeltaVector* v);

}  // namespace cudafx
