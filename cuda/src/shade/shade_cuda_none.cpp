// Shade without the CUDA toolkit.
#include "shade/shade_math.hpp"

namespace cudafx {

Status shade_rect_cuda(StreamHandle, const ShadeJob&) {
  return Status::error(StatusCode::Unsupported, "this build of cudafx has no CUDA support");
}

}  // namespace cudafx
