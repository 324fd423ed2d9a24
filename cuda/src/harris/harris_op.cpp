// The Harris op object: plans once, owns its backend's scratch and result,
// and dispatches each frame.
#include <cstddef>
#include <cstring>

#include "cudafx/harris.hpp"

namespace cudafx {

Status HarrisOp::create(Backend backend, const ImageDesc& desc, const HarrisParams& params,
                        std::unique_ptr<HarrisOp>* out) {
  out->reset();
  if (backend == Backend::Cuda && !cuda_built())
    return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
  std::unique_ptr<HarrisOp> op(new HarrisOp(backend));
  CUDAFX_TRY(plan_harris(desc, params, &op->plan_));
  CUDAFX_TRY(op->prepare());
  *out = std::move(op);
  return Status::ok();
}

HarrisOp::~HarrisOp() = default;

Status HarrisOp::prepare() {
  if (backend_ == Backend::Cpu)
    return harris_cpu_prepare(plan_, &cpu_);
  return harris_cuda_prepare(plan_, &cuda_);
}

Status HarrisOp::set_params(const HarrisParams& params) {
  HarrisPlan plan;
  CUDAFX_TRY(plan_harris(plan_.desc, params, &plan));
  plan_ = plan;
  return prepare();
}

Status HarrisOp::submit(StreamHandle stream, const ImageView& src,
                        const HarrisResponseView& response) {
  if (backend_ == Backend::Cpu)
    return harris_cpu(plan_, src, response, true, &cpu_);
  return harris_cuda(plan_, src, response, true, &cuda_, stream);
}

Status HarrisOp::submit_response(StreamHandle stream, const ImageView& src,
                                 const HarrisResponseView& response) {
  if (!response.data)
    return Status::invalid("harris response: no memory given for the response map");
  if (backend_ == Backend::Cpu)
    return harris_cpu(plan_, src, response, false, &cpu_);
  return harris_cuda(plan_, src, response, false, &cuda_, stream);
}

HarrisCornerList HarrisOp::corners() const {
  const uint8_t* base = backend_ == Backend::Cpu ? cpu_.result.data() : cuda_.host.bytes();
  HarrisCornerList list;
  if (!base)
    return list;
  HarrisResultHeader h;
  std::memcpy(&h, base, sizeof h);
  list.count = static_cast<int>(h.count);
  list.candidates = static_cast<int>(h.candidates);
  list.max_response = h.max_response;
  list.threshold = h.threshold;
  list.corners = reinterpret_cast<const HarrisCorner*>(base + sizeof h);
  return list;
}

HarrisDeviceList HarrisOp::device_list() const {
  HarrisDeviceList list;
  if (backend_ != Backend::Cuda || !cuda_.device.get())
    return list;
  const uint8_t* result = cuda_.device.bytes() + cuda_.result_at;
  list.count = reinterpret_cast<const uint32_t*>(result + offsetof(HarrisResultHeader, count));
  list.corners = reinterpret_cast<const HarrisCorner*>(result + sizeof(HarrisResultHeader));
  return list;
}

}  // namespace cudafx
