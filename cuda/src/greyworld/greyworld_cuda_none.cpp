// The CUDA half of the grey-world op in a build without CUDA (create()
// refuses Backend::Cuda before these are reached).
#include "cudafx/greyworld.hpp"

namespace cudafx {

Status GreyWorldOp::prepare_cuda() {
  return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
}

Status GreyWorldOp::submit_cuda(StreamHandle, const ImageView&, double) {
  return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
}

}  // namespace cudafx
