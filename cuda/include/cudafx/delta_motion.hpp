// Motion-compensated temporal tiles of the delta codec's format 4
// (docs/delta-format.md, "Tiles and modes" and "Vector section"): a
// temporal tile may carry one integer vector (dx, dy), in pixels of its
// plane; its bytes are then predicted from the reference's bytes at the
// moved place, the pixel clamped to the plane and its channel kept. Packets with vectors set
// header flag 4 and carry them in a section of their own, so the lanes and
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

// One tile's vector; (0, 0) is none (a plain temporal tile).
struct DeltaVector {
  int8_t dx = 0, dy = 0;
};
// Largest |dx| and |dy| the format allows.
constexpr int kDeltaMaxVector = 64;

CUDAFX_HD bool delta_vector_set(DeltaVector v) { return v.dx != 0 || v.dy != 0; }

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

// -- the reference encoder's search (an encoder's own business: any vector
// within the format's bound decodes) --
//
// Every tile that is not skipped is searched (also those with few bytes
// off: at T = 10 searching only tiles with an eighth of their symbols
// non-zero lost a third of the gain on bigbuckbunny.mp4): each candidate
// vector v != (0, 0) within
// kDeltaMaxVector is scored by the sum of absolute differences between the
// tile and the reference moved by v, and becomes the best when its sum is
// smaller than the best's so far (which starts as (0, 0) with its own sum).
// Stage 1 tries, in this order, the tile's vector in the previous frame,
// the plane's most frequent vector in the previous frame
// (delta_global_vectors), and for r = 2, 4, 8, 16 the 8 points (±r or 0,
// ±r or 0); stage 2 the 24 points within 2 of stage 1's best (rows dy - 2
// .. dy + 2, each dx - 2 .. dx + 2, the best itself left out). The best,
// when it is not (0, 0), is then coded; the tile keeps it when that costs
// less than the plain temporal coding, and then competes with spatial
// coding as a temporal tile does (temporal on a tie).
constexpr int kDeltaSearchStage1 = 2 + 4 * 8;
constexpr int kDeltaSearchStage2 = 24;

// Candidate k of stage 1 into (*dx, *dy).
CUDAFX_HD void delta_search_stage1(int k, DeltaVector own, DeltaVector global, int* dx,
                                          int* dy) {
  if (k < 2) {
    const DeltaVector v = k == 0 ? own : global;
    *dx = v.dx;
    *dy = v.dy;
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
// Whether a candidate is scored.
CUDAFX_HD bool delta_search_candidate(int dx, int dy) {
  return (dx != 0 || dy != 0) && dx >= -kDeltaMaxVector && dx <= kDeltaMaxVector &&
         dy >= -kDeltaMaxVector && dy <= kDeltaMaxVector;
}

// What the encoders need to search: the reference before this frame (the
// encoder overwrites its reference tile by tile, and a moved tile reads its
// neighbours'), the previous frame's vectors (one a tile, all planes; all
// (0, 0) after a keyframe or a frame without search) and each plane's most
// frequent one, and where this frame's go. Host memory for the CPU encoder,
// device memory (but `global`) for the CUDA one.
struct DeltaMotionSearch {
  ImageView prev;
  const DeltaVector* previous = nullptr;
  DeltaVector global[kMaxPlanes];
  DeltaVector* vectors = nullptr;
};

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
