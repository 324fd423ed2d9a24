// The entropy stage "rans" of delta frames: the raw payload of a delta frame
// (tile bitmaps, then the residual bytes of every set tile) coded with
// adaptive context models and rANS. Format: docs/delta-format.md,
// "Compression 2".
//
// Why not zstd alone: residuals are mostly zero, and the non-zero ones cluster
// where something moved; a residual's neighbours (left and above, same
// channel) predict its size far better than the byte strings zstd matches
// (vtest.avi: 45 % smaller than zstd level 3 at threshold 10, 19 % at 0).
//
// The models adapt over the whole stream from its last keyframe, in encoder
// and decoder alike, so nothing about them is sent; reset() at every
// keyframe. Large frames are cut into slices of tiles, each with its own
// models and rANS stream, coded in parallel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "cudafx/delta.hpp"
#include "cudafx/status.hpp"

namespace cudafx {

class DeltaEntropyCoder {
 public:
  static Status create(const DeltaLayout& layout, std::unique_ptr<DeltaEntropyCoder>* out);
  ~DeltaEntropyCoder();

  // Forgets what the models learnt: at every keyframe, on both sides.
  void reset();
  // Codes the raw payload of a delta frame (as pack_delta_payload makes it)
  // coded with `threshold`, appending to *out.
  Status encode(const uint8_t* raw, size_t raw_size, int threshold, std::vector<uint8_t>* out);
  // Decodes `size` bytes into the raw payload of `raw_size` bytes (which the
  // packet header gives) at `raw`. Validates everything it reads; on an
  // error the models are in an undefined state until reset().
  Status decode(const uint8_t* data, size_t size, int threshold, uint8_t* raw, size_t raw_size);

  // Slices a frame of this layout is cut into, and those of one plane
  // (docs/delta-format.md).
  static int slice_count(const DeltaLayout& layout);
  static int plane_slice_count(const DeltaLayout& layout, int plane);

 private:
  DeltaEntropyCoder() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudafx
