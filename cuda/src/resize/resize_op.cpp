// The resize op object: plans once, uploads the taps for CUDA (once, at
// creation), owns the CPU scratch, and dispatches each frame.
#include "cudafx/resize.hpp"

namespace cudafx {

Status ResizeOp::create(Backend backend, const ImageDesc& src, const ImageDesc& dst,
                        const ResizeParams& params, std::unique_ptr<ResizeOp>* out) {
  out->reset();
  if (backend == Backend::Cuda && !cuda_built())
    return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
  std::unique_ptr<ResizeOp> op(new ResizeOp(backend));
  CUDAFX_TRY(plan_resize(src, dst, params, &op->plan_));
  const ResizePlan& plan = op->plan_;
  if (backend == Backend::Cpu) {
    op->host_scratch_.assign(resize_cpu_scratch_ints(plan), 0);
  } else {
    // Every plane's x and y taps (and those on a period's windows, where
    // the axes have one) in one allocation, uploaded here once.
    std::vector<ResizeTap> all;
    size_t x_at[kMaxPlanes], y_at[kMaxPlanes], px_at[kMaxPlanes], py_at[kMaxPlanes];
    for (int i = 0; i < plan.n_planes; i++) {
      const ResizePlanePlan& p = plan.planes[i];
      x_at[i] = all.size();
      all.insert(all.end(), p.x.tap.begin(), p.x.tap.end());
      y_at[i] = all.size();
      all.insert(all.end(), p.y.tap.begin(), p.y.tap.end());
      px_at[i] = all.size();
      all.insert(all.end(), p.x.period_tap.begin(), p.x.period_tap.end());
      py_at[i] = all.size();
      all.insert(all.end(), p.y.period_tap.begin(), p.y.period_tap.end());
    }
    // Spare taps at the end: the CUDA kernels read the taps of up to
    // kResizeTapsAhead rows past a strip's last row before they know it is
    // the last.
    all.insert(all.end(), kResizeTapsAhead, ResizeTap{0, {0, 0, 0, 0}});
    const size_t bytes = all.size() * sizeof(ResizeTap);
    CUDAFX_TRY(op->device_taps_.allocate(bytes));
    CudaStream upload;
    CUDAFX_TRY(upload.create());
    CUDAFX_TRY(copy_bytes_async(op->device_taps_.get(), all.data(), bytes, upload.get()));
    CUDAFX_TRY(upload.synchronize());
    const ResizeTap* base = static_cast<const ResizeTap*>(op->device_taps_.get());
    for (int i = 0; i < plan.n_planes; i++) {
      op->taps_.x[i] = base + x_at[i];
      op->taps_.y[i] = base + y_at[i];
      op->taps_.period_x[i] = plan.planes[i].x.period ? base + px_at[i] : nullptr;
      op->taps_.period_y[i] = plan.planes[i].y.period ? base + py_at[i] : nullptr;
    }
    CUDAFX_TRY(resize_cuda_prepare(plan, &op->launch_));
  }
  *out = std::move(op);
  return Status::ok();
}

ResizeOp::~ResizeOp() = default;

Status ResizeOp::submit(StreamHandle stream, const ImageView& src, const ImageView& dst) {
  CUDAFX_TRY(check_distinct(src, dst, "resize"));
  if (backend_ == Backend::Cpu)
    return resize_cpu(plan_, src, dst, host_scratch_);
  return resize_cuda(plan_, taps_, launch_, src, dst, stream);
}

}  // namespace cudafx
