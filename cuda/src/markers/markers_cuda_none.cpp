// Corner markers without the CUDA toolkit.
#include "cudafx/corner_markers.hpp"
#include "markers/markers_math.hpp"

namespace cudafx {

Status draw_corner_markers_cuda(StreamHandle, const ImageView&, const HarrisCorner*,
                                const uint32_t*, int, const MarkerStyle&, const MarkerPaint&) {
  return Status::error(StatusCode::Unsupported, "this build of cudafx has no CUDA support");
}

}  // namespace cudafx
