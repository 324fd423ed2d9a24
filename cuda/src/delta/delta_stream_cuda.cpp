// DeltaEncoderCuda and DeltaDecoderCuda: the stream state of the delta
// codec on a CUDA device. Host code only; the kernels are in delta_cuda.cu
// (or stubs without CUDA).
#include <algorithm>

#include "cudafx/delta.hpp"
#include "cudafx/delta_entropy.hpp"
#include "cudafx/delta_tile_entropy.hpp"
#include "cudafx/delta_tile_entropy_cuda.hpp"
#include "cudafx/delta_tiles.hpp"

namespace cudafx {

Status DeltaEncoderCuda::create(const ImageDesc& desc, std::unique_ptr<DeltaEncoderCuda>* out) {
  if (!cuda_built())
    return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
  std::unique_ptr<DeltaEncoderCuda> e(new DeltaEncoderCuda());
  CUDAFX_TRY(make_delta_layout(desc, &e->layout_));
  const size_t tiles = e->layout_.tile_count();
  const size_t ref_bytes = packed_size(desc, 256);
  CUDAFX_TRY(e->ref_mem_.allocate(ref_bytes));
  CUDAFX_TRY(e->residual_dev_.allocate(e->layout_.frame_bytes));
  CUDAFX_TRY(e->changed_dev_.allocate(tiles));
  CUDAFX_TRY(e->predictors_dev_.allocate(tiles));
  CUDAFX_TRY(e->sum_dev_.allocate(sizeof(uint64_t)));
  CUDAFX_TRY(e->residual_host_.allocate(e->layout_.frame_bytes));
  CUDAFX_TRY(e->changed_host_.allocate(tiles));
  CUDAFX_TRY(e->sum_host_.allocate(sizeof(uint64_t)));
  e->ref_ = packed_view(desc, e->ref_mem_.bytes(), 256);
  e->raw_.reserve(e->layout_.max_raw_bytes());
  CUDAFX_TRY(DeltaEntropyCoder::create(e->layout_, &e->entropy_));
  CUDAFX_TRY(DeltaTileEntropyCuda::create(e->layout_, &e->tiles_));
  Predicted& first = e->predicted_[0];
  CUDAFX_TRY(first.modes.allocate(tiles));
  CUDAFX_TRY(first.predictors.allocate(tiles));
  CUDAFX_TRY(first.sum.allocate(sizeof(uint64_t)));
  CUDAFX_TRY(first.done.create_blocking());
  *out = std::move(e);
  return Status::ok();
}

DeltaEncoderCuda::~DeltaEncoderCuda() = default;

Status DeltaEncoderCuda::encode(const ImageView& cur, const DeltaEncodeSettings& s,
                                StreamHandle stream, std::vector<uint8_t>* packet,
                                DeltaEncodeStats* stats) {
  return encode_packet(cur, s, stream, packet, nullptr, stats);
}

Status DeltaEncoderCuda::encode(const ImageView& cur, const DeltaEncodeSettings& s,
                                StreamHandle stream, DeltaPacketParts* packet,
                                DeltaEncodeStats* stats) {
  packet->clear();
  return encode_packet(cur, s, stream, &packet->head, packet, stats);
}

// The checks of encode() and submit(): the frame against the encoder's
// format, the settings' ranges.
Status DeltaEncoderCuda::validate(const ImageView& cur, const DeltaEncodeSettings& s) const {
  CUDAFX_TRY(validate_view(cur, layout_.desc, "delta encoder input"));
  if (s.threshold < 0 || s.threshold > 255)
    return Status::invalid("delta encoder: threshold must be 0..255");
  if (s.refresh_period < 0)
    return Status::invalid("delta encoder: refresh period must be 0 or more");
  return Status::ok();
}

Status DeltaEncoderCuda::encode_packet(const ImageView& cur, const DeltaEncodeSettings& s,
                                       StreamHandle stream, std::vector<uint8_t>* packet,
                                       DeltaPacketParts* apart, DeltaEncodeStats* stats) {
  CUDAFX_TRY(validate(cur, s));
  if (submitted_ >= 0)
    return Status::invalid("delta encoder: encode() with a frame submitted (flush() it first)");
  const bool key = s.force_keyframe || !have_ref_;
  if (s.compression == DeltaCompression::Predictive) {
    CUDAFX_TRY(predict(cur, s, key, 0, stream));
    CUDAFX_TRY(await_prediction(0));
    return code_predicted(0, stream, packet, apart, stats);
  }
  if (key)
    tiles_->reset();  // a format-4 delta frame may follow
  previous_vectors_set_ = false;
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
  // A keyframe's payload is the tight frame, compressed from where it
  // landed; a delta frame's is packed from the residuals.
  size_t changed = 0;
  const uint8_t* raw = residual_host_.bytes();
  size_t raw_size = layout_.frame_bytes;
  if (!key) {
    pack_delta_payload(layout_, residual_host_.bytes(), changed_host_.bytes(), &raw_, &changed);
    raw = raw_.data();
    raw_size = raw_.size();
  }
  CUDAFX_TRY(finish_delta_packet(layout_, s, key, counter_,
                                 *static_cast<const uint64_t*>(sum_host_.get()), raw, raw_size,
                                 changed, entropy_.get(), packet, stats));
  have_ref_ = true;
  counter_++;
  return Status::ok();
}

Status DeltaEncoderCuda::submit(const ImageView& cur, const DeltaEncodeSettings& s,
                                StreamHandle stream, DeltaPacketParts* previous, bool* got,
                                DeltaEncodeStats* stats) {
  *got = false;
  previous->clear();
  CUDAFX_TRY(validate(cur, s));
  if (s.compression != DeltaCompression::Predictive)
    return Status::invalid("delta encoder: submit() is format 4's (compression=predictive)");
  // The second slot (each step a no-op once done, so a failed one is tried
  // again).
  if (!coder_stream_)
    CUDAFX_TRY(coder_stream_.create());
  Predicted& other = predicted_[1];
  CUDAFX_TRY(other.modes.allocate(layout_.tile_count()));
  CUDAFX_TRY(other.predictors.allocate(layout_.tile_count()));
  CUDAFX_TRY(other.sum.allocate(sizeof(uint64_t)));
  CUDAFX_TRY(other.done.create_blocking());
  const int last = submitted_, slot = last < 0 ? 0 : last ^ 1;
  // The last frame's prediction is done (its vectors are this frame's
  // candidates) before this one's is queued, and its coding goes beside it.
  Status st = last >= 0 ? await_prediction(last) : Status::ok();
  if (st.is_ok())
    st = predict(cur, s, s.force_keyframe || !have_ref_, slot, stream);
  if (st.is_ok() && last >= 0) {
    st = code_predicted(last, coder_stream_.get(), &previous->head, previous, stats);
    *got = st.is_ok();
  }
  if (!st.is_ok()) {
    abandon_submitted();
    return st;
  }
  submitted_ = slot;
  return Status::ok();
}

// After a failed submit() or flush(): a packet was lost, so the stream
// starts again at a keyframe, with no candidates from before.
void DeltaEncoderCuda::abandon_submitted() {
  submitted_ = -1;
  have_ref_ = false;
  previous_vectors_set_ = false;
}

Status DeltaEncoderCuda::flush(DeltaPacketParts* last, bool* got, DeltaEncodeStats* stats) {
  *got = false;
  last->clear();
  if (submitted_ < 0)
    return Status::ok();
  const int slot = submitted_;
  submitted_ = -1;
  Status st = await_prediction(slot);
  if (st.is_ok())
    st = code_predicted(slot, coder_stream_.get(), &last->head, last, stats);
  if (!st.is_ok()) {
    abandon_submitted();
    return st;
  }
  *got = true;
  return Status::ok();
}

// Format 4's first stage: modes and symbols made on the device (with the
// motion search as on the CPU, DeltaEncoder::encode: from a copy of the
// reference, with the last frame's vectors (device) and each plane's most
// frequent one (from the host's copy) as candidates), the modes, vectors
// and checksum brought back and the symbols counted for the coder, all
// queued on `stream` into `slot`.
Status DeltaEncoderCuda::predict(const ImageView& cur, const DeltaEncodeSettings& s, bool key,
                                 int slot, StreamHandle stream) {
  Predicted& p = predicted_[slot];
  const bool search = delta_motion_searched(s, key);
  DeltaMotionSearch motion;
  const size_t n_tiles = layout_.tile_count(), vector_bytes = n_tiles * sizeof(DeltaVector);
  if (search) {
    if (!prev_mem_.get()) {
      CUDAFX_TRY(prev_mem_.allocate(packed_size(layout_.desc, 256)));
      for (DeviceBuffer& v : vectors_dev_) CUDAFX_TRY(v.allocate(vector_bytes));
      prev_ = packed_view(layout_.desc, prev_mem_.bytes(), 256);
    }
    if (!p.vectors.get())
      CUDAFX_TRY(p.vectors.allocate(vector_bytes));
    if (!previous_vectors_set_) {
      CUDAFX_TRY(fill_bytes_async(vectors_dev_[vectors_now_ ^ 1].get(), 0, vector_bytes, stream));
      previous_host_.assign(n_tiles, DeltaVector{});
    }
    // One linear copy: the two share their layout, padding and all (a 2D
    // copy's call had cost the host ~13 us a 2160p frame).
    CUDAFX_TRY(copy_bytes_async(prev_mem_.get(), ref_mem_.get(), ref_mem_.size(), stream));
    motion.prev = prev_;
    motion.previous = static_cast<const DeltaVector*>(vectors_dev_[vectors_now_ ^ 1].get());
    delta_global_vectors(layout_, previous_host_.data(), motion.global);
    motion.vectors = static_cast<DeltaVector*>(vectors_dev_[vectors_now_].get());
  }
  CUDAFX_TRY(delta_tiles_encode_cuda(layout_, cur, ref_, s.threshold,
                                     delta_intra_of(s, key, counter_), residual_dev_.bytes(),
                                     changed_dev_.bytes(), stream, search ? &motion : nullptr,
                                     key ? predictors_dev_.bytes() : nullptr));
  // The modes, vectors, predictors (a keyframe's; stale otherwise, and not
  // read) and checksum down: the same calls every frame of a slot (one
  // graph: queued one by one, each call cost the host ~4 us).
  const DeltaVector* vectors = search ? motion.vectors : nullptr;
  CUDAFX_TRY(results_graphs_.launch(
      {static_cast<uintptr_t>(slot), reinterpret_cast<uintptr_t>(vectors)}, stream,
      [&](StreamHandle st) {
        CUDAFX_TRY(copy_bytes_async(p.modes.get(), changed_dev_.get(), n_tiles, st));
        CUDAFX_TRY(copy_bytes_async(p.predictors.get(), predictors_dev_.get(), n_tiles, st));
        if (vectors)
          CUDAFX_TRY(copy_bytes_async(p.vectors.get(), vectors, vector_bytes, st));
        CUDAFX_TRY(delta_checksum_cuda(layout_, ref_, static_cast<uint64_t*>(sum_dev_.get()), st));
        return copy_bytes_async(p.sum.get(), sum_dev_.get(), sizeof(uint64_t), st);
      }));
  CUDAFX_TRY(tiles_->count(delta_quantiser_for(s.threshold), key, residual_dev_.bytes(),
                           changed_dev_.bytes(), stream, slot));
  CUDAFX_TRY(p.done.record(stream));
  p.settings = s;
  p.keyframe = key;
  p.search = search;
  p.counter = counter_;
  // The next frame's candidates: this frame's vectors (on the host once
  // await_prediction has seen them), none after a frame without search.
  previous_vectors_set_ = search;
  if (search)
    vectors_now_ ^= 1;
  have_ref_ = true;
  counter_++;
  return Status::ok();
}

Status DeltaEncoderCuda::await_prediction(int slot) {
  Predicted& p = predicted_[slot];
  CUDAFX_TRY(p.done.synchronize());
  if (p.search) {
    const DeltaVector* v = static_cast<const DeltaVector*>(p.vectors.get());
    previous_host_.assign(v, v + layout_.tile_count());
  }
  return Status::ok();
}

// Format 4's second stage, once the first's results are on the host: the
// tables, the lanes coded on the device (on `stream`) and the packet.
Status DeltaEncoderCuda::code_predicted(int slot, StreamHandle stream,
                                        std::vector<uint8_t>* packet, DeltaPacketParts* apart,
                                        DeltaEncodeStats* stats) {
  const Predicted& p = predicted_[slot];
  if (p.keyframe)
    entropy_->reset();  // a format-3 delta frame may follow
  DeltaPayloadTail lanes;  // the coded lanes' CRC, worked out on the device
  const DeltaV4Coder code = [&](int q, bool keyframe, bool reuse, std::vector<uint8_t>* out) {
    return tiles_->code(q, keyframe, stream, out, reuse, &lanes, apart != nullptr, slot);
  };
  const DeltaVector* vectors = static_cast<const DeltaVector*>(p.vectors.get());
  CUDAFX_TRY(finish_delta_packet_v4(layout_, p.settings, p.keyframe, p.counter,
                                    *static_cast<const uint64_t*>(p.sum.get()),
                                    delta_coded_symbols(layout_, p.modes.bytes()),
                                    p.search ? vectors : nullptr,
                                    p.keyframe ? p.predictors.bytes() : nullptr, code, packet,
                                    stats, &lanes));
  if (apart && lanes.apart) {
    apart->tail = lanes.apart;
    apart->tail_size = lanes.bytes;
  }
  return Status::ok();
}

Status DeltaDecoderCuda::create(const ImageDesc& desc, StreamHandle stream,
                                std::unique_ptr<DeltaDecoderCuda>* out, size_t gpu_lanes_from) {
  if (!cuda_built())
    return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
  std::unique_ptr<DeltaDecoderCuda> d(new DeltaDecoderCuda());
  CUDAFX_TRY(d->init(desc));
  d->stream_ = stream;
  const DeltaLayout& l = d->layout_;
  d->n_tiles_ = l.tile_count();
  const size_t ref_bytes = packed_size(desc, 256);
  CUDAFX_TRY(d->ref_mem_.allocate(ref_bytes));
  CUDAFX_TRY(d->raw_dev_.allocate(l.max_raw_bytes()));
  CUDAFX_TRY(d->offsets_dev_.allocate(d->n_tiles_ * sizeof(uint32_t)));
  CUDAFX_TRY(d->sum_dev_.allocate(sizeof(uint64_t)));
  CUDAFX_TRY(d->raw_host_.allocate(l.max_raw_bytes()));
  d->raw_ = d->raw_host_.bytes();  // packets are decompressed straight into pinned memory
  CUDAFX_TRY(d->offsets_host_.allocate(d->n_tiles_ * sizeof(uint32_t)));
  CUDAFX_TRY(d->sum_host_.allocate(sizeof(uint64_t)));
  CUDAFX_TRY(d->modes_dev_.allocate(d->n_tiles_));
  CUDAFX_TRY(d->modes_host_.allocate(d->n_tiles_));
  d->symbols_ = d->raw_;  // a packet is either format: they share the room
  d->modes_ = d->modes_host_.bytes();
  if (l.frame_bytes >= gpu_lanes_from)
    CUDAFX_TRY(DeltaTileDecoderCuda::create(l, &d->lanes_));
  // Before the first keyframe the reconstruction is defined (zero), as on
  // the CPU.
  CUDAFX_TRY(fill_bytes_async(d->ref_mem_.get(), 0, ref_bytes, stream));
  CUDAFX_TRY(synchronize_stream(stream));
  d->ref_ = packed_view(desc, d->ref_mem_.bytes(), 256);
  *out = std::move(d);
  return Status::ok();
}

// The payload goes up as it is, from the pinned buffer it was decompressed
// into (the last packet's copy has finished: every packet synchronises);
// for a delta frame, so does where each set tile's residuals start in it
// (read_delta_payload has checked that the payload is exactly the bitmaps
// plus the set tiles).
Status DeltaDecoderCuda::reconstruct(bool keyframe, uint64_t* checksum) {
  CUDAFX_TRY(copy_bytes_async(raw_dev_.get(), raw_, raw_size_, stream_));
  if (!keyframe) {
    uint32_t* offsets = static_cast<uint32_t*>(offsets_host_.get());
    std::fill(offsets, offsets + n_tiles_, kDeltaNoTile);
    const size_t pos = for_each_set_tile(
        layout_, raw_, [&](int, size_t tile, int, int, size_t offset) {
          offsets[tile] = static_cast<uint32_t>(offset);
        });
    if (pos != raw_size_)
      return Status::invalid("delta decoder: payload size does not match its tile bitmap");
    CUDAFX_TRY(copy_bytes_async(offsets_dev_.get(), offsets_host_.get(),
                                n_tiles_ * sizeof(uint32_t), stream_));
  }
  CUDAFX_TRY(delta_apply_cuda(layout_, raw_dev_.bytes(), keyframe,
                              static_cast<const uint32_t*>(offsets_dev_.get()), ref_, stream_));
  CUDAFX_TRY(delta_checksum_cuda(layout_, ref_, static_cast<uint64_t*>(sum_dev_.get()), stream_));
  CUDAFX_TRY(copy_bytes_async(sum_host_.get(), sum_dev_.get(), sizeof(uint64_t), stream_));
  CUDAFX_TRY(synchronize_stream(stream_));
  *checksum = *static_cast<const uint64_t*>(sum_host_.get());
  return Status::ok();
}

}  // namespace cudafx

namespace cudafx {

DeltaDecoderCuda::~DeltaDecoderCuda() = default;

// With the lanes on the GPU the host mostly waits for it: the payload's CRC
// is checked meanwhile (0.2-0.3 ms of a 2160p frame's 1.2-1.5).
bool DeltaDecoderCuda::checks_payload_beside(const DeltaPacketInfo& info) const {
  return lanes_ && info.version == kDeltaVersion;
}

Status DeltaDecoderCuda::decode_tiles(int quantiser, bool keyframe, const uint8_t* data,
                                      size_t size, size_t coded, bool reuse_allowed) {
  tiles_on_device_ = false;
  if (!lanes_)
    return DeltaDecoderBase::decode_tiles(quantiser, keyframe, data, size, coded, reuse_allowed);
  CUDAFX_TRY(lanes_->decode(*tiles_, quantiser, keyframe, data, size, coded, raw_dev_.bytes(),
                            modes_dev_.bytes(), modes_, stream_, reuse_allowed));
  tiles_on_device_ = true;
  return Status::ok();
}

// Format 4: the modes and symbols go up from pinned memory where the host
// decoded them (every packet synchronises, so the last upload has
// finished), or are on the device already; they are applied there.
Status DeltaDecoderCuda::reconstruct_tiles(int quantiser, uint64_t* checksum) {
  if (!tiles_on_device_) {
    CUDAFX_TRY(copy_bytes_async(raw_dev_.get(), symbols_, layout_.frame_bytes, stream_));
    CUDAFX_TRY(copy_bytes_async(modes_dev_.get(), modes_, n_tiles_, stream_));
  }
  const DeltaVector* vectors = nullptr;
  if (motion_) {  // moved tiles read the reference before the frame
    const size_t vector_bytes = n_tiles_ * sizeof(DeltaVector);
    if (!prev_mem_.get()) {
      CUDAFX_TRY(prev_mem_.allocate(packed_size(layout_.desc, 256)));
      CUDAFX_TRY(vectors_dev_.allocate(vector_bytes));
      CUDAFX_TRY(vectors_host_.allocate(vector_bytes));
      prev_ = packed_view(layout_.desc, prev_mem_.bytes(), 256);
    }
    CUDAFX_TRY(copy_bytes_async(prev_mem_.get(), ref_mem_.get(), ref_mem_.size(), stream_));
    std::copy(vectors_.begin(), vectors_.end(), static_cast<DeltaVector*>(vectors_host_.get()));
    CUDAFX_TRY(copy_bytes_async(vectors_dev_.get(), vectors_host_.get(), vector_bytes, stream_));
    vectors = static_cast<const DeltaVector*>(vectors_dev_.get());
  }
  const uint8_t* predictors = nullptr;
  if (spatial_predictors_) {  // a keyframe's, up from pinned memory
    if (!predictors_dev_.get()) {
      CUDAFX_TRY(predictors_dev_.allocate(n_tiles_));
      CUDAFX_TRY(predictors_host_.allocate(n_tiles_));
    }
    std::copy(predictors_.begin(), predictors_.end(), predictors_host_.bytes());
    CUDAFX_TRY(copy_bytes_async(predictors_dev_.get(), predictors_host_.get(), n_tiles_, stream_));
    predictors = predictors_dev_.bytes();
  }
  CUDAFX_TRY(delta_tiles_decode_cuda(layout_, raw_dev_.bytes(), modes_dev_.bytes(), quantiser,
                                     ref_, stream_, vectors, &prev_, predictors));
  CUDAFX_TRY(delta_checksum_cuda(layout_, ref_, static_cast<uint64_t*>(sum_dev_.get()), stream_));
  CUDAFX_TRY(copy_bytes_async(sum_host_.get(), sum_dev_.get(), sizeof(uint64_t), stream_));
  CUDAFX_TRY(synchronize_stream(stream_));
  *checksum = *static_cast<const uint64_t*>(sum_host_.get());
  return Status::ok();
}

}  // namespace cudafx
