// The CUDA entry point of the resize op in a build without CUDA.
#include "cudafx/resize.hpp"

namespace cudafx {

Status resize_cuda_prepare(const ResizePlan&, ResizeLaunch*) {
  return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
}

Status resize_cuda(const ResizePlan&, const ResizeDeviceTaps&, const ResizeLaunch&,
                   const ImageView&, const ImageView&, StreamHandle) {
  return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
}

}  // namespace cudafx
