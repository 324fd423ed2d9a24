// The Gaussian op object: plans once, owns the scratch of its backend, and
// dispatches each frame to the CPU or CUDA implementation.
#include "cudafx/gaussian.hpp"

namespace cudafx {

Status GaussianOp::create(Backend backend, const ImageDesc& desc, const GaussianParams& params,
                          std::unique_ptr<GaussianOp>* out) {
  out->reset();
  if (backend == Backend::Cuda && !cuda_built())
    return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
  std::unique_ptr<GaussianOp> op(new GaussianOp(backend));
  CUDAFX_TRY(plan_gaussian(desc, params, &op->plan_));
  CUDAFX_TRY(op->prepare_scratch());
  *out = std::move(op);
  return Status::ok();
}

GaussianOp::~GaussianOp() = default;

Status GaussianOp::prepare_scratch() {
  if (backend_ == Backend::Cpu) {
    const size_t need = gaussian_cpu_scratch_floats(plan_);
    if (host_scratch_.size() < need)
      host_scratch_.resize(need);
    return Status::ok();
  }
  const size_t need = gaussian_cuda_scratch_bytes(plan_);
  if (device_scratch_.size() < need)
    return device_scratch_.allocate(need);
  return Status::ok();
}

Status GaussianOp::set_params(const GaussianParams& params) {
  GaussianPlan plan;
  CUDAFX_TRY(plan_gaussian(plan_.desc, params, &plan));
  plan_ = std::move(plan);
  return prepare_scratch();
}

Status GaussianOp::submit(StreamHandle stream, const ImageView& src, const ImageView& dst) {
  CUDAFX_TRY(check_distinct(src, dst, "gaussian"));
  if (backend_ == Backend::Cpu)
    return gaussian_cpu(plan_, src, dst, host_scratch_);
  return gaussian_cuda(plan_, src, dst, device_scratch_.get(), device_scratch_.size(), stream);
}

}  // namespace cudafx
