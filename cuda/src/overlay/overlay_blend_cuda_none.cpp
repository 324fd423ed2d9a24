// Overlay blend without the CUDA toolkit.
#include "overlay/overlay_job.hpp"

namespace cudafx {

Status blend_overlay_cuda(StreamHandle, const OverlayJob&) {
  return Status::error(StatusCode::Unsupported, "this build of cudafx has no CUDA support");
}

}  // namespace cudafx
