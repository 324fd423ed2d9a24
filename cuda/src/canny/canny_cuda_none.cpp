// The CUDA half of the Canny op in a build without CUDA (create() refuses
// Backend::Cuda before these are reached).
#include "cudafx/canny.hpp"

namespace cudafx {

Status CannyOp::prepare_cuda() {
  return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
}

Status CannyOp::submit_cuda(StreamHandle, const ImageView&, const PlaneView&, const uint8_t*) {
  return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
}

}  // namespace cudafx
