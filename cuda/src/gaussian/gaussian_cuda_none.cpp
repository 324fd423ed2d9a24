// The CUDA entry points of the Gaussian op in a build without CUDA.
#include "cudafx/gaussian.hpp"

namespace cudafx {

size_t gaussian_cuda_scratch_bytes(const GaussianPlan&) { return 0; }

Status gaussian_cuda(const GaussianPlan&, const ImageView&, const ImageView&, void*, size_t,
                     StreamHandle) {
  return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
}

}  // namespace cudafx
