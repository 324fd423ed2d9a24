// The CUDA half of the auto-contrast op in a build without CUDA (create()
// refuses Backend::Cuda before these are reached).
#include "cudafx/autocontrast.hpp"

namespace cudafx {

Status AutoContrastOp::prepare_cuda() {
  return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
}

Status AutoContrastOp::submit_cuda(StreamHandle, const ImageView&, const AutoContrastLayout&,
                                   const AutoContrastParams&, double) {
  return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
}

}  // namespace cudafx
