// Stream state of the delta codec: the encoder's reference and counter, the
// decoder's synchronisation state machine.
#include "cudafx/delta.hpp"

#include <exception>

#include "cudafx/delta_entropy.hpp"
#include "cudafx/delta_tile_entropy.hpp"
#include "cudafx/delta_tiles.hpp"
#include "cudafx/delta_predict_math.hpp"

namespace cudafx {

namespace {
Status make_reference(const ImageDesc& desc, std::vector<uint8_t>* storage, ImageView* view) {
  storage->assign(packed_size(desc, 64) + 64, 0);
  *view = packed_view(desc, storage->data(), 64);
  return Status::ok();
}
}  // namespace

namespace {
DeltaPacketInfo info_of(const DeltaEncodeSettings& s, bool key, uint32_t counter,
                        uint64_t recon_checksum) {
  DeltaPacketInfo info;
  info.version = delta_format_version(s.compression);
  info.keyframe = key;
  info.refresh = s.compression == DeltaCompression::Predictive && s.refresh_period > 0;
  info.compression = s.compression;
  info.counter = counter;
  info.threshold = static_cast<uint8_t>(s.threshold);
  info.recon_checksum = recon_checksum;
  info.scaled_tables = info.version == kDeltaVersion;  // as the coders write them
  return info;
}
void fill_stats(const DeltaLayout& layout, bool key, size_t changed, size_t raw_size,
                size_t packet_bytes, DeltaEncodeStats* stats) {
  if (stats) {
    stats->keyframe = key;
    stats->changed_bytes = key ? layout.frame_bytes : changed;
    stats->raw_bytes = raw_size;
    stats->packet_bytes = packet_bytes;
    stats->moved_tiles = 0;  // format 4 counts its moved tiles after
  }
}
}  // namespace

Status finish_delta_packet(const DeltaLayout& layout, const DeltaEncodeSettings& s, bool key,
                           uint32_t counter, uint64_t recon_checksum, const uint8_t* raw,
                           size_t raw_size, size_t changed,
                           DeltaEntropyCoder* entropy, std::vector<uint8_t>* packet,
                           DeltaEncodeStats* stats) {
  CUDAFX_TRY(write_delta_packet(layout, info_of(s, key, counter, recon_checksum), raw, raw_size,
                                s.zstd_level, entropy, packet));
  fill_stats(layout, key, changed, raw_size, packet->size(), stats);
  return Status::ok();
}

Status finish_delta_packet_v4(const DeltaLayout& layout, const DeltaEncodeSettings& s, bool key,
                              uint32_t counter, uint64_t recon_checksum, size_t coded,
                              const DeltaVector* vectors, const uint8_t* predictors,
                              const DeltaV4Coder& code, std::vector<uint8_t>* packet,
                              DeltaEncodeStats* stats, const DeltaPayloadTail* tail) {
  CUDAFX_TRY(write_delta_packet_v4(layout, info_of(s, key, counter, recon_checksum), coded,
                                   vectors, predictors, code, packet, tail));
  fill_stats(layout, key, coded, coded,
             packet->size() + delta_bytes_apart(tail), stats);
  if (stats) {
    stats->moved_tiles = 0;
    for (size_t t = 0; vectors && t < layout.tile_count(); t++)
      stats->moved_tiles += delta_vector_set(vectors[t]);
  }
  return Status::ok();
}

namespace {
// Copies every plane of one host image into another of the same layout.
void copy_planes(const DeltaLayout& layout, const ImageView& dst, const ImageView& src) {
  for (int i = 0; i < layout.n_planes; i++) copy_plane_host(dst.plane(i), src.plane(i));
}
}  // namespace

Status DeltaEncoder::create(const ImageDesc& desc, std::unique_ptr<DeltaEncoder>* out) {
  std::unique_ptr<DeltaEncoder> e(new DeltaEncoder());
  CUDAFX_TRY(make_delta_layout(desc, &e->layout_));
  for (int k = 0; k < 2; k++) delta_margin_image(e->layout_, &e->ref_storage_[k], &e->refs_[k]);
  e->raw_.reserve(e->layout_.max_raw_bytes());
  CUDAFX_TRY(DeltaEntropyCoder::create(e->layout_, &e->entropy_));
  CUDAFX_TRY(DeltaTileEntropy::create(e->layout_, &e->tiles_));
  e->symbols_.resize(e->layout_.frame_bytes);
  e->modes_.resize(e->layout_.tile_count());
  *out = std::move(e);
  return Status::ok();
}

DeltaEncoder::~DeltaEncoder() = default;

Status DeltaEncoder::encode(const ImageView& cur, const DeltaEncodeSettings& s,
                            std::vector<uint8_t>* packet, DeltaEncodeStats* stats) {
  CUDAFX_TRY(validate_view(cur, layout_.desc, "delta encoder input"));
  if (s.threshold < 0 || s.threshold > 255)
    return Status::invalid("delta encoder: threshold must be 0..255");
  if (s.refresh_period < 0)
    return Status::invalid("delta encoder: refresh period must be 0 or more");
  const bool key = s.force_keyframe || !have_ref_;
  if (s.compression == DeltaCompression::Predictive) {
    if (key)
      entropy_->reset();  // a format-3 delta frame may follow
    // Motion search on delta frames of streams without intra refresh, from
    // the reference as it was before the frame (a moved tile reads its
    // neighbours' bytes of the frame before): the frame is rebuilt into the
    // other reference. Their margins spare the search the clamping at the
    // planes' sides.
    const bool search = delta_motion_searched(s, key);
    DeltaMotionSearch motion;
    DeltaRebuild rebuild;
    const size_t n_tiles = layout_.tile_count();
    if (previous_vectors_.size() != n_tiles)
      previous_vectors_.assign(n_tiles, DeltaVector{});
    if (search) {
      if (!margins_filled_)
        delta_fill_margins(layout_, reference());
      rebuild.out = refs_[1 - ref_index_];
      vectors_.resize(n_tiles);
      motion.prev = reference();
      motion.margin = kDeltaSearchMargin;
      motion.previous = previous_vectors_.data();
      delta_global_vectors(layout_, previous_vectors_.data(), motion.global);
      motion.vectors = vectors_.data();
    }
    // A keyframe's tiles each choose their spatial predictor.
    if (key && predictors_.size() != n_tiles)
      predictors_.resize(n_tiles);
    // The entropy coder's histograms are counted row by row as the tile
    // pass finishes each (on the core that holds the row), with the
    // quantiser write_delta_packet_v4 codes the frame with.
    tiles_->count_frame(delta_quantiser_for(s.threshold), key, symbols_.data(), modes_.data());
    const size_t coded = delta_tiles_encode_cpu(
        layout_, cur, reference(), s.threshold, delta_intra_of(s, key, counter_), symbols_.data(),
        modes_.data(), search ? &motion : nullptr, key ? predictors_.data() : nullptr,
        search ? &rebuild : nullptr,
        [this](int tile_row, int worker) { tiles_->count_row(tile_row, worker); });
    if (search)
      ref_index_ = 1 - ref_index_;
    margins_filled_ = search;
    const uint64_t checksum = search ? rebuild.checksum : delta_checksum(layout_, reference());
    const DeltaV4Coder code = [&](int q, bool keyframe, bool reuse, std::vector<uint8_t>* out) {
      return tiles_->encode(q, keyframe, symbols_.data(), modes_.data(), out, reuse);
    };
    CUDAFX_TRY(finish_delta_packet_v4(layout_, s, key, counter_, checksum,
                                      coded, search ? vectors_.data() : nullptr,
                                      key ? predictors_.data() : nullptr, code, packet, stats));
    // The next frame's candidates: this frame's vectors, none after a frame
    // without search.
    if (search)
      previous_vectors_.swap(vectors_);
    else
      std::fill(previous_vectors_.begin(), previous_vectors_.end(), DeltaVector{});
    have_ref_ = true;
    counter_++;
    return Status::ok();
  }
  if (key)
    tiles_->reset();  // a format-4 delta frame may follow
  std::fill(previous_vectors_.begin(), previous_vectors_.end(), DeltaVector{});
  size_t changed = 0;
  margins_filled_ = false;
  delta_encode_cpu(layout_, cur, reference(), s.threshold, key, &scratch_, &raw_, &changed);
  CUDAFX_TRY(finish_delta_packet(layout_, s, key, counter_, delta_checksum(layout_, reference()),
                                 raw_.data(), raw_.size(), changed, entropy_.get(), packet, stats));
  have_ref_ = true;
  counter_++;
  return Status::ok();
}

Status DeltaDecoderBase::init(const ImageDesc& desc) {
  CUDAFX_TRY(make_delta_layout(desc, &layout_));
  CUDAFX_TRY(DeltaTileEntropy::create(layout_, &tiles_));
  return DeltaEntropyCoder::create(layout_, &entropy_);
}

DeltaDecoderBase::~DeltaDecoderBase() = default;

void DeltaDecoderBase::lose_sync() {
  synced_ = refreshing_ = false;
  tiles_->reset();
}

Status DeltaDecoderBase::payload_checked() {
  if (payload_check_.valid())
    payload_status_ = payload_check_.get();
  return payload_status_;
}

DeltaDecodeResult DeltaDecoderBase::decode(const uint8_t* data, size_t size, std::string* error) {
  refreshed_ = false;
  payload_status_ = Status::ok();
  // A packet whose payload CRC fails leaves this as it was (decode_packet
  // sets it before a check made beside it is in).
  const bool refresh_stream_before = refresh_stream_;
  DeltaPacketInfo info;
  Status s = read_delta_header(layout_, data, size, &info, false);
  bool beside = s.is_ok() && checks_payload_beside(info);
  if (beside) {
    try {
      payload_check_ = std::async(std::launch::async,
                                  [data, size] { return check_delta_payload(data, size); });
    } catch (const std::exception&) {  // no thread to be had: check it here
      beside = false;
    }
  }
  if (s.is_ok() && !beside)
    s = check_delta_payload(data, size);
  DeltaDecodeResult r = DeltaDecodeResult::Corrupt;
  if (s.is_ok()) {
    try {
      r = decode_packet(data, size, info, error);
    } catch (...) {  // the check reads `data`: it ends before the packet may go
      (void)payload_checked();
      throw;
    }
  }
  // A payload checked beside the decoding: a mismatch is the verdict, as if
  // it had been checked first (decode_packet waits for it before the
  // reference changes).
  if (s.is_ok())
    s = payload_checked();
  if (!s.is_ok()) {
    lose_sync();
    refresh_stream_ = refresh_stream_before;
    if (error)
      *error = s.message();
    return DeltaDecodeResult::Corrupt;
  }
  return r;
}

DeltaDecodeResult DeltaDecoderBase::decode_packet(const uint8_t* data, size_t size,
                                                  const DeltaPacketInfo& info,
                                                  std::string* error) {
  const bool v4 = info.version == kDeltaVersion;
  refresh_stream_ = v4 && info.refresh;
  // Sequence first: a delta frame that does not follow the last applied
  // one is not even decompressed (the rans models hold the stream's past),
  // except on a stream with intra refresh, where it starts (or, after a
  // gap, restarts) rebuilding the tiles one sweep at a time.
  if (!info.keyframe) {
    const bool follows = info.counter == last_counter_ + 1;
    const bool jumped = synced_ && !follows;
    if (jumped)
      lose_sync();
    if (!synced_) {
      if (!refresh_stream_) {
        refreshing_ = false;
        if (error)
          *error = jumped ? "frame counter jumped from " + std::to_string(last_counter_) + " to " +
                                std::to_string(info.counter)
                          : "waiting for a keyframe";
        return DeltaDecodeResult::NeedKeyframe;
      }
      if (!refreshing_ || !follows) {
        refreshing_ = true;
        whole_.assign(layout_.tile_count(), 0);
      }
    }
  }
  if (info.keyframe) {  // as the encoder does: a delta frame of either format may follow
    entropy_->reset();
    tiles_->reset();
  }
  int quantiser = 0;
  const DeltaV4Decoder decode_v4 = [this](int q, bool key, const uint8_t* d, size_t n,
                                          size_t coded, bool reuse) {
    return decode_tiles(q, key, d, n, coded, reuse);
  };
  if (v4 && info.motion && vectors_.size() != layout_.tile_count())
    vectors_.resize(layout_.tile_count());
  if (v4)
    tiles_->set_scaled_tables(info.scaled_tables);
  if (v4 && info.predictors && predictors_.size() != layout_.tile_count())
    predictors_.resize(layout_.tile_count());
  Status p = v4 ? read_delta_payload_v4(layout_, data, size, info, decode_v4, &quantiser,
                                        vectors_.data(), predictors_.data())
                : read_delta_payload(layout_, data, size, info, entropy_.get(), raw_);
  motion_ = v4 && info.motion;
  spatial_predictors_ = v4 && info.predictors;
  if (p.is_ok() && motion_)
    p = check_vectors();
  if (!p.is_ok()) {
    lose_sync();
    if (error)
      *error = p.message();
    // A packet that fails validation is InvalidArgument; anything else is
    // the backend failing (a CUDA error in the GPU lane decoder), which no
    // keyframe cures.
    return p.code() == StatusCode::InvalidArgument ? DeltaDecodeResult::Corrupt
                                                    : DeltaDecodeResult::Failed;
  }
  raw_size_ = info.raw_size;
  if (!payload_checked().is_ok())  // decode() gives the verdict
    return DeltaDecodeResult::Corrupt;
  uint64_t checksum = 0;
  const Status r = v4 ? reconstruct_tiles(quantiser, &checksum)
                      : reconstruct(info.keyframe, &checksum);
  if (!r.is_ok()) {
    lose_sync();
    if (error)
      *error = r.message();
    return DeltaDecodeResult::Failed;
  }
  last_counter_ = info.counter;
  const bool was_refreshing = refreshing_ && !info.keyframe;
  refreshing_ = false;
  if (was_refreshing) {
    const size_t whole = mark_whole();
    if (whole < whole_.size()) {
      refreshing_ = true;
      if (error)
        *error = "rebuilding by intra refresh: " + std::to_string(whole) + " of " +
                 std::to_string(whole_.size()) + " tiles whole";
      return DeltaDecodeResult::Refreshing;
    }
  }
  if (checksum != info.recon_checksum) {
    lose_sync();
    if (error)
      *error = "reconstruction checksum mismatch: decoder out of sync";
    return DeltaDecodeResult::Corrupt;
  }
  synced_ = true;
  refreshed_ = was_refreshing;
  info_ = info;
  return DeltaDecodeResult::Frame;
}

Status DeltaDecoderBase::decode_tiles(int quantiser, bool keyframe, const uint8_t* data,
                                      size_t size, size_t coded, bool reuse_allowed) {
  return tiles_->decode(quantiser, keyframe, data, size, coded, symbols_, modes_, reuse_allowed);
}

Status DeltaDecoderBase::check_vectors() const {
  for (size_t t = 0; t < vectors_.size(); t++)
    if (delta_vector_set(vectors_[t]) && modes_[t] != kDeltaTemporal)
      return Status::invalid("delta packet: v4 payload: tile " + std::to_string(t) +
                             " has a motion vector but is not temporal");
  return Status::ok();
}

size_t DeltaDecoderBase::mark_whole() {
  size_t whole = 0;
  for (size_t t = 0; t < whole_.size(); t++) {
    whole_[t] |= modes_[t] == kDeltaSpatial;
    whole += whole_[t];
  }
  return whole;
}

Status DeltaDecoder::create(const ImageDesc& desc, std::unique_ptr<DeltaDecoder>* out) {
  std::unique_ptr<DeltaDecoder> d(new DeltaDecoder());
  CUDAFX_TRY(d->init(desc));
  CUDAFX_TRY(make_reference(desc, &d->ref_storage_, &d->ref_));
  d->raw_storage_.resize(d->layout_.max_raw_bytes());
  d->raw_ = d->raw_storage_.data();
  d->symbols_ = d->raw_;  // a packet is either format: they share the room
  d->modes_storage_.resize(d->layout_.tile_count());
  d->modes_ = d->modes_storage_.data();
  *out = std::move(d);
  return Status::ok();
}

Status DeltaDecoder::reconstruct_tiles(int quantiser, uint64_t* checksum) {
  if (motion_) {  // moved tiles read the reference before the frame
    if (prev_storage_.empty())
      CUDAFX_TRY(make_reference(layout_.desc, &prev_storage_, &prev_));
    copy_planes(layout_, prev_, ref_);
  }
  const DeltaMovedTiles moved{vectors_.data(), prev_};
  delta_tiles_decode_cpu(layout_, symbols_, modes_, quantiser, ref_, motion_ ? &moved : nullptr,
                         spatial_predictors_ ? predictors_.data() : nullptr);
  *checksum = delta_checksum(layout_, ref_);
  return Status::ok();
}

Status DeltaDecoder::reconstruct(bool keyframe, uint64_t* checksum) {
  delta_apply_cpu(layout_, raw_, raw_size_, keyframe, ref_);
  *checksum = delta_checksum(layout_, ref_);
  return Status::ok();
}

}  // namespace cudafx
