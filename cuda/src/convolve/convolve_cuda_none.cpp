// The CUDA entry points of the convolution op in a build without CUDA.
#include "cudafx/convolve.hpp"

namespace cudafx {

size_t convolve_cuda_scratch_bytes(const ConvolvePlan&) { return 0; }

bool convolve_cuda_tensor_cores(const ConvolvePlan&, int) { return false; }

Status convolve_cuda(const ConvolvePlan&, const ImageView&, const ImageView&, void*, size_t,
                     StreamHandle) {
  return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
}

}  // namespace cudafx
