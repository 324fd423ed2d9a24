// The CUDA entry points of the delta codec in a build without CUDA.
#include "cudafx/delta.hpp"
#include "cudafx/delta_tile_entropy_cuda.hpp"
#include "cudafx/delta_tiles.hpp"

namespace cudafx {
namespace {
Status no_cuda() {
  return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
}
}  // namespace

Status delta_residual_cuda(const DeltaLayout&, const ImageView&, const ImageView&, int, uint8_t*,
                           uint8_t*, StreamHandle) {
  return no_cuda();
}
Status delta_checksum_cuda(const DeltaLayout&, const ImageView&, uint64_t*, StreamHandle) {
  return no_cuda();
}
Status delta_apply_cuda(const DeltaLayout&, const uint8_t*, bool, const uint32_t*,
                        const ImageView&, StreamHandle) {
  return no_cuda();
}

Status delta_tiles_encode_cuda(const DeltaLayout&, const ImageView&, const ImageView&, int,
                               const DeltaIntra&, uint8_t*, uint8_t*, StreamHandle,
                               const DeltaMotionSearch*, uint8_t*) {
  return no_cuda();
}
Status delta_tiles_decode_cuda(const DeltaLayout&, const uint8_t*, const uint8_t*, int,
                               const ImageView&, StreamHandle, const DeltaVector*,
                               const ImageView*, const uint8_t*) {
  return no_cuda();
}

Status delta_lanes_count_cuda(const DeltaLayout&, const DeltaLaneDevice*, size_t, const uint8_t*,
                              const uint8_t*, bool, int, uint16_t*, uint32_t*, uint32_t*,
                              StreamHandle) {
  return no_cuda();
}
Status delta_lanes_code_cuda(const DeltaLaneDevice*, size_t, const uint16_t*, const uint32_t*,
                             const DeltaCodingEntry*, uint8_t*, uint32_t*, StreamHandle) {
  return no_cuda();
}
bool delta_lanes_decode_shared_tables_fit() { return false; }
Status delta_lanes_decode_cuda(const DeltaLayout&, const DeltaLaneDevice*, size_t, const uint32_t*,
                               const uint8_t*, const uint8_t*, bool, bool, int,
                               uint8_t*, uint8_t*, uint32_t*, StreamHandle) {
  return no_cuda();
}
Status delta_crc_pieces_cuda(const uint8_t*, const uint32_t*, size_t, uint32_t*, StreamHandle) {
  return no_cuda();
}
Status delta_lanes_offsets_cuda(const uint32_t*, size_t, uint32_t*, StreamHandle) {
  return no_cuda();
}
Status delta_lanes_pack_cuda(const DeltaLaneDevice*, size_t, const uint8_t*, const uint32_t*,
                             const uint32_t*, uint8_t*, uint8_t*, size_t, StreamHandle) {
  return no_cuda();
}

}  // namespace cudafx
