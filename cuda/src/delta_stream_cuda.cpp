// DeltaEncoderCuda: the stream state of the delta encoder on a CUDA device.
// Host code only; the kernels are in delta_cuda.cu (or stubs without CUDA).
#include "cudafx/delta.hpp"

namespace cudafx {

Status DeltaEncoderCuda::create(const ImageDesc& desc, std::unique_ptr<DeltaEncoderCuda>* out) {
  if (!cuda_built())
    return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
  std::unique_ptr<DeltaEncoderCuda> e(new DeltaEncoderCuda());
  CUDAFX_TRY(make_delta_layout(desc, &e->layout_));
  size_t tiles = 0;
  for (int i = 0; i < e->layout_.n_planes; i++)
    tiles += static_cast<size_t>(e->layout_.planes[i].tiles_x) * e->layout_.planes[i].tiles_y;
  const size_t ref_bytes = packed_size(desc, 256);
  CUDAFX_TRY(e->ref_mem_.allocate(ref_bytes));
  CUDAFX_TRY(e->residual_dev_.allocate(e->layout_.frame_bytes));
  CUDAFX_TRY(e->changed_dev_.allocate(tiles));
  CUDAFX_TRY(e->sum_dev_.allocate(sizeof(uint64_t)));
  CUDAFX_TRY(e->residual_host_.allocate(e->layout_.frame_bytes));
  CUDAFX_TRY(e->changed_host_.allocate(tiles));
  CUDAFX_TRY(e->sum_host_.allocate(sizeof(uint64_t)));
  e->ref_ = packed_view(desc, e->ref_mem_.bytes(), 256);
  e->raw_.reserve(e->layout_.max_raw_bytes());
  *out = std::move(e);
  return Status::ok();
}

Status DeltaEncoderCuda::encode(const ImageView& cur, const DeltaEncodeSettings& s,
                                StreamHandle stream, std::vector<uint8_t>* packet,
                                DeltaEncodeStats* stats) {
  CUDAFX_TRY(validate_view(cur, layout_.desc, "delta encoder input"));
  if (s.threshold < 0 || s.threshold > 255)
    return Status::invalid("delta encoder: threshold must be 0..255");
  const bool key = s.force_keyframe || !have_ref_;
  // The payload source on the host: the tight frame (keyframe) or the
  // residuals (delta frame), both in residual_host_.
  const ImageView tight = packed_view(layout_.desc, residual_host_.bytes());
  if (key) {
    CUDAFX_TRY(copy_image_async(ref_, cur, stream));
    CUDAFX_TRY(copy_image_async(tight, cur, stream));
  } else {
    CUDAFX_TRY(delta_residual_cuda(layout_, cur, ref_, s.threshold, residual_dev_.bytes(),
                                   changed_dev_.bytes(), stream));
    CUDAFX_TRY(copy_bytes_async(residual_host_.get(), residual_dev_.get(), layout_.frame_bytes,
                                stream));
    CUDAFX_TRY(copy_bytes_async(changed_host_.get(), changed_dev_.get(), changed_dev_.size(),
                                stream));
  }
  CUDAFX_TRY(delta_checksum_cuda(layout_, ref_, static_cast<uint64_t*>(sum_dev_.get()), stream));
  CUDAFX_TRY(copy_bytes_async(sum_host_.get(), sum_dev_.get(), sizeof(uint64_t), stream));
  CUDAFX_TRY(synchronize_stream(stream));
  size_t changed = 0;
  if (key) {
    raw_.assign(residual_host_.bytes(), residual_host_.bytes() + layout_.frame_bytes);
  } else {
    pack_delta_payload(layout_, residual_host_.bytes(), changed_host_.bytes(), &raw_, &changed);
  }
  CUDAFX_TRY(finish_delta_packet(layout_, s, key, counter_,
                                 *static_cast<const uint64_t*>(sum_host_.get()), raw_, changed,
                                 packet, stats));
  have_ref_ = true;
  counter_++;
  return Status::ok();
}

}  // namespace cudafx
