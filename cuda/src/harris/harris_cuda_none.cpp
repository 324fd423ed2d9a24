// The CUDA entry points of the Harris op in a build without CUDA.
#include "cudafx/harris.hpp"

namespace cudafx {

Status harris_cuda_prepare(const HarrisPlan&, HarrisCudaBuffers*) {
  return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
}

Status harris_cuda(const HarrisPlan&, const ImageView&, const HarrisResponseView&, bool,
                   HarrisCudaBuffers*, StreamHandle) {
  return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
}

}  // namespace cudafx
