// DeltaTileEntropyCuda: the host half of format 4's entropy stage on a CUDA
// device (the steps are in delta_tile_entropy_cuda.hpp, the kernels in
// delta_tile_entropy_cuda.cu).
#include "cudafx/delta_tile_entropy_cuda.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "cudafx/delta_predict_math.hpp"
#include "delta/rans.hpp"  // kRansScale: the decoder's table image

namespace cudafx {

namespace {

// The lanes as the kernels see them; with `rooms`, each lane's place for its
// pairs and the end of its room (the coder's), *pairs and *room the totals.
std::vector<DeltaLaneDevice> device_lanes(const std::vector<DeltaLane>& lanes, bool rooms,
                                          size_t* pairs, size_t* room) {
  std::vector<DeltaLaneDevice> dev(lanes.size());
  *pairs = *room = 0;
  for (size_t i = 0; i < lanes.size(); i++) {
    const DeltaLane& l = lanes[i];
    if (rooms)  // ends a multiple of 4: the GPU coder stores words (RansWordWriter)
      *room += (delta_lane_room(l) + 3) / 4 * 4;
    dev[i] = {static_cast<uint32_t>(l.plane), static_cast<uint32_t>(l.ty),
              static_cast<uint32_t>(l.tx0),   static_cast<uint32_t>(l.tiles),
              static_cast<uint32_t>(l.first_tile), static_cast<uint32_t>(*pairs),
              static_cast<uint64_t>(*room)};
    if (rooms)
      *pairs += delta_lane_most_pairs(l);
  }
  return dev;
}

size_t round_up_16(size_t n) { return (n + 15) / 16 * 16; }

// Copies the lanes to `to` (device memory), waiting for the copy.
Status upload_lanes(const std::vector<DeltaLaneDevice>& dev, DeviceBuffer* to) {
  CUDAFX_TRY(to->allocate(std::max<size_t>(dev.size(), 1) * sizeof(DeltaLaneDevice)));
  if (dev.empty())
    return Status::ok();
  CudaStream upload;
  CUDAFX_TRY(upload.create());
  CUDAFX_TRY(copy_bytes_async(to->get(), dev.data(), dev.size() * sizeof(dev[0]), upload.get()));
  return upload.synchronize();
}

}  // namespace

Status DeltaTileEntropyCuda::create(const DeltaLayout& layout,
                                    std::unique_ptr<DeltaTileEntropyCuda>* out,
                                    size_t host_capacity) {
  if (!cuda_built())
    return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
  std::unique_ptr<DeltaTileEntropyCuda> e(new DeltaTileEntropyCuda());
  e->layout_ = layout;
  CUDAFX_TRY(DeltaTileEntropy::create(layout, &e->host_));
  const std::vector<DeltaLane>& lanes = e->host_->lanes();
  e->n_lanes_ = lanes.size();
  size_t pairs = 0, room = 0;
  const std::vector<DeltaLaneDevice> dev = device_lanes(lanes, true, &pairs, &room);
  if (pairs > 0xffffffffu || room > 0xffffffffu)
    return Status::invalid("delta v4 CUDA coder: frame too large");
  const size_t n = std::max<size_t>(lanes.size(), 1);
  const size_t coding = kDeltaContexts * 256 * sizeof(DeltaCodingEntry);
  e->n_pairs_ = pairs;
  CUDAFX_TRY(upload_lanes(dev, &e->lanes_dev_));
  CUDAFX_TRY(e->allocate(&e->counted_[0]));
  CUDAFX_TRY(e->coding_dev_.allocate(coding));
  CUDAFX_TRY(e->room_dev_.allocate(std::max<size_t>(room, 1)));
  CUDAFX_TRY(e->sizes_dev_.allocate(n * sizeof(uint32_t)));
  CUDAFX_TRY(e->offsets_dev_.allocate((n + 1) * sizeof(uint32_t)));
  CUDAFX_TRY(e->packed_dev_.allocate(std::max<size_t>(room, 1)));
  const size_t pieces = std::max<size_t>(room, 1) / kDeltaCrcPieceBytes + 1;
  CUDAFX_TRY(e->piece_crc_dev_.allocate(pieces * sizeof(uint32_t)));
  CUDAFX_TRY(e->piece_crc_host_.allocate(pieces * sizeof(uint32_t)));
  CUDAFX_TRY(e->coding_host_.allocate(coding));
  CUDAFX_TRY(e->sizes_host_.allocate(n * sizeof(uint32_t)));
  CUDAFX_TRY(e->total_host_.allocate(sizeof(uint32_t)));
  // Where the kernel leaves the coded frame: a quarter of a frame's bytes at
  // first (2160p RGBA with every tile changed codes to 1.5 MB of 33), grown
  // by code() when a frame needs more (host_capacity, when given: tests).
  const size_t first = host_capacity ? host_capacity
                                     : std::min(std::max<size_t>(room, 1),
                                                std::max<size_t>(layout.frame_bytes / 4, 65536));
  CUDAFX_TRY(e->packed_host_.allocate(round_up_16(first)));
  CUDAFX_TRY(e->reached_.create_blocking());
  *out = std::move(e);
  return Status::ok();
}

DeltaTileEntropyCuda::~DeltaTileEntropyCuda() = default;

Status DeltaTileEntropyCuda::allocate(Counted* c) const {
  const size_t table = kDeltaContexts * 256 * sizeof(uint32_t);
  CUDAFX_TRY(c->pairs.allocate(std::max<size_t>(n_pairs_, 1) * sizeof(uint16_t)));
  CUDAFX_TRY(c->pair_count.allocate(std::max<size_t>(n_lanes_, 1) * sizeof(uint32_t)));
  CUDAFX_TRY(c->histogram.allocate(table));
  return c->histogram_host.allocate(table);
}

void DeltaTileEntropyCuda::reset() { host_->reset(); }

Status DeltaTileEntropyCuda::wait(StreamHandle stream) {
  CUDAFX_TRY(reached_.record(stream));
  return reached_.synchronize();
}

Status DeltaTileEntropyCuda::encode(int quantiser, bool keyframe, const uint8_t* symbols,
                                    const uint8_t* modes, StreamHandle stream,
                                    std::vector<uint8_t>* out, bool reuse_tables) {
  CUDAFX_TRY(count(quantiser, keyframe, symbols, modes, stream));
  CUDAFX_TRY(wait(stream));
  return code(quantiser, keyframe, stream, out, reuse_tables);
}

// 1. Pairs and histogram.
Status DeltaTileEntropyCuda::count(int quantiser, bool keyframe, const uint8_t* symbols,
                                   const uint8_t* modes, StreamHandle stream, int slot) {
  if (slot < 0 || slot >= kSlots)
    return Status::invalid("delta v4 CUDA coder: no such slot");
  Counted& c = counted_[slot];
  c.quantiser = -1;
  CUDAFX_TRY(allocate(&c));  // a no-op once done (a failed one is tried again)
  const int range = NearLossless(quantiser).range;
  const CountKey key{static_cast<uintptr_t>(slot), static_cast<uintptr_t>(range), keyframe,
                     reinterpret_cast<uintptr_t>(symbols), reinterpret_cast<uintptr_t>(modes)};
  CUDAFX_TRY(count_graphs_.launch(key, stream, [&](StreamHandle s) {
    const size_t table = c.histogram.size();
    CUDAFX_TRY(fill_bytes_async(c.histogram.get(), 0, table, s));
    CUDAFX_TRY(delta_lanes_count_cuda(
        layout_, static_cast<const DeltaLaneDevice*>(lanes_dev_.get()), n_lanes_, symbols, modes,
        keyframe, range, static_cast<uint16_t*>(c.pairs.get()),
        static_cast<uint32_t*>(c.pair_count.get()), static_cast<uint32_t*>(c.histogram.get()), s));
    return copy_bytes_async(c.histogram_host.get(), c.histogram.get(), table, s);
  }));
  c.quantiser = quantiser;
  c.keyframe = keyframe;
  return Status::ok();
}

// Steps 3-5 on the device for the frame counted into `slot`: the coding
// entries up, lanes coded, placed (their sizes summed on the device),
// packed, cut into CRC pieces (`crc`), written to pinned memory by a
// kernel, and the sizes, total and CRCs down. The same calls with the same
// arguments every frame.
Status DeltaTileEntropyCuda::queue_coding(int slot, bool crc, StreamHandle stream) {
  const Counted& c = counted_[slot];
  const auto* lanes = static_cast<const DeltaLaneDevice*>(lanes_dev_.get());
  auto* sizes_dev = static_cast<uint32_t*>(sizes_dev_.get());
  auto* offsets_dev = static_cast<uint32_t*>(offsets_dev_.get());
  CUDAFX_TRY(copy_bytes_async(coding_dev_.get(), coding_host_.get(), coding_host_.size(), stream));
  CUDAFX_TRY(delta_lanes_code_cuda(lanes, n_lanes_, static_cast<const uint16_t*>(c.pairs.get()),
                                   static_cast<const uint32_t*>(c.pair_count.get()),
                                   static_cast<const DeltaCodingEntry*>(coding_dev_.get()),
                                   room_dev_.bytes(), sizes_dev, stream));
  CUDAFX_TRY(delta_lanes_offsets_cuda(sizes_dev, n_lanes_, offsets_dev, stream));
  CUDAFX_TRY(delta_lanes_pack_cuda(lanes, n_lanes_, room_dev_.bytes(), sizes_dev, offsets_dev,
                                   packed_dev_.bytes(), packed_host_.bytes(), packed_host_.size(),
                                   stream));
  if (crc) {
    CUDAFX_TRY(delta_crc_pieces_cuda(packed_dev_.bytes(), offsets_dev + n_lanes_,
                                     packed_dev_.size(),
                                     static_cast<uint32_t*>(piece_crc_dev_.get()), stream));
    CUDAFX_TRY(copy_bytes_async(piece_crc_host_.get(), piece_crc_dev_.get(),
                                piece_crc_host_.size(), stream));
  }
  CUDAFX_TRY(copy_bytes_async(sizes_host_.get(), sizes_dev, n_lanes_ * sizeof(uint32_t), stream));
  return copy_bytes_async(total_host_.get(), offsets_dev + n_lanes_, sizeof(uint32_t), stream);
}

Status DeltaTileEntropyCuda::code(int quantiser, bool keyframe, StreamHandle stream,
                                  std::vector<uint8_t>* out, bool reuse_tables,
                                  DeltaPayloadTail* lanes_crc, bool lanes_apart, int slot) {
  if (lanes_crc)
    *lanes_crc = DeltaPayloadTail{};
  if (lanes_apart && !lanes_crc)
    return Status::invalid("delta v4 CUDA coder: lanes apart need their CRC");
  if (slot < 0 || slot >= kSlots)
    return Status::invalid("delta v4 CUDA coder: no such slot");
  Counted& c = counted_[slot];
  if (quantiser != c.quantiser || keyframe != c.keyframe)
    return Status::invalid("delta v4 CUDA coder: code() for another frame than count() queued");
  c.quantiser = -1;
  // 2. Tables, on the host; their coding goes up (with step 3).
  auto* entries = static_cast<DeltaCodingEntry*>(coding_host_.get());
  CUDAFX_TRY(host_->encode_tables(quantiser, keyframe,
                                  static_cast<const uint32_t*>(c.histogram_host.get()),
                                  reuse_tables, out, entries));
  // 3.-5. Lanes coded, placed (their sizes summed on the device), packed,
  // cut into CRC pieces, and written to pinned memory by a kernel; then the
  // one wait, after which the host writes the directory and joins the CRCs.
  // (Placing them on the host had cost a second wait and the host's work
  // between the two with the GPU idle: ~0.1 ms a 2160p frame.)
  const bool crc = lanes_crc != nullptr;
  const CodingKey key{static_cast<uintptr_t>(slot), crc,
                      reinterpret_cast<uintptr_t>(packed_host_.get()), packed_host_.size()};
  CUDAFX_TRY(coding_graphs_.launch(key, stream,
                                   [&](StreamHandle s) { return queue_coding(slot, crc, s); }));
  CUDAFX_TRY(wait(stream));
  host_->append_lanes(static_cast<const uint32_t*>(sizes_host_.get()), out);
  const size_t total = *static_cast<const uint32_t*>(total_host_.get());
  if (total == 0)
    return Status::ok();
  if (total > packed_host_.size()) {
    // More than the kernel could write: the room grows (to the largest frame
    // and a half, like a vector) and this frame comes down by a copy.
    CUDAFX_TRY(packed_host_.allocate(round_up_16(std::min(room_dev_.size(), total + total / 2))));
    CUDAFX_TRY(copy_bytes_async(packed_host_.get(), packed_dev_.get(), total, stream));
    CUDAFX_TRY(wait(stream));
  }
  if (!lanes_apart)
    out->insert(out->end(), packed_host_.bytes(), packed_host_.bytes() + total);
  if (lanes_crc) {
    // The pieces joined: with zlib >= 1.2.12 crc32_combine's operator for a
    // whole piece is made once (Ubuntu 22.04 and JetPack 6 have 1.2.11:
    // crc32_combine each time there).
    const size_t pieces = (total + kDeltaCrcPieceBytes - 1) / kDeltaCrcPieceBytes;
    const auto* crcs = static_cast<const uint32_t*>(piece_crc_host_.get());
    uLong c = crcs[0];
    for (size_t i = 1; i < pieces; i++) {
      const size_t n = std::min(kDeltaCrcPieceBytes, total - i * kDeltaCrcPieceBytes);
#if ZLIB_VERNUM >= 0x12c0
      static const uLong whole_piece =
          crc32_combine_gen(static_cast<z_off_t>(kDeltaCrcPieceBytes));
      if (n == kDeltaCrcPieceBytes) {
        c = crc32_combine_op(c, crcs[i], whole_piece);
        continue;
      }
#endif
      c = crc32_combine(c, crcs[i], static_cast<z_off_t>(n));
    }
    *lanes_crc = DeltaPayloadTail{total, static_cast<uint32_t>(c),
                                  lanes_apart ? packed_host_.bytes() : nullptr};
  }
  return Status::ok();
}

Status DeltaTileDecoderCuda::create(const DeltaLayout& layout,
                                    std::unique_ptr<DeltaTileDecoderCuda>* out,
                                    bool tables_in_global_memory) {
  if (!cuda_built())
    return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
  std::unique_ptr<DeltaTileDecoderCuda> d(new DeltaTileDecoderCuda());
  d->layout_ = layout;
  d->shared_tables_ = !tables_in_global_memory && delta_lanes_decode_shared_tables_fit();
  const std::vector<DeltaLane> lanes = delta_lanes(layout);
  d->n_lanes_ = lanes.size();
  size_t unused_pairs = 0, unused_room = 0;
  CUDAFX_TRY(upload_lanes(device_lanes(lanes, false, &unused_pairs, &unused_room), &d->lanes_dev_));
  const size_t n = std::max<size_t>(lanes.size(), 1);
  CUDAFX_TRY(d->begin_dev_.allocate((n + 1) * sizeof(uint32_t)));
  CUDAFX_TRY(d->tables_dev_.allocate(kDeltaLaneTableBytes));
  CUDAFX_TRY(d->verdict_dev_.allocate(4 * sizeof(uint32_t)));
  CUDAFX_TRY(d->begin_host_.allocate((n + 1) * sizeof(uint32_t)));
  CUDAFX_TRY(d->tables_host_.allocate(kDeltaLaneTableBytes));
  CUDAFX_TRY(d->verdict_host_.allocate(4 * sizeof(uint32_t)));
  CUDAFX_TRY(d->reached_.create_blocking());
  *out = std::move(d);
  return Status::ok();
}

DeltaTileDecoderCuda::~DeltaTileDecoderCuda() = default;

Status DeltaTileDecoderCuda::decode(DeltaTileEntropy& tables, int quantiser, bool keyframe,
                                    const uint8_t* data, size_t size, size_t coded,
                                    uint8_t* symbols, uint8_t* modes, uint8_t* modes_host,
                                    StreamHandle stream, bool reuse_allowed) {
  auto bad = [](const std::string& why) { return Status::invalid("v4 payload: " + why); };
  // 1, 2. Tables and directory, on the host.
  CUDAFX_TRY(tables.decode_tables(quantiser, keyframe, data, size, reuse_allowed, &lane_begin_));
  // The lanes' bytes, their bounds, the tables and a fresh verdict go up.
  const size_t first = lane_begin_[0], bytes = size - first;
  // The kernel reads ahead up to 64 bytes past the last lane (never using
  // them).
  constexpr size_t kReadAhead = 64;
  if (data_host_.size() < bytes + kReadAhead) {
    CUDAFX_TRY(data_host_.allocate(bytes + bytes / 2 + kReadAhead));
    CUDAFX_TRY(data_dev_.allocate(data_host_.size()));
  }
  if (bytes)
    std::memcpy(data_host_.get(), data + first, bytes);
  std::memset(data_host_.bytes() + bytes, 0, kReadAhead);  // read, never used: defined
  auto* begin = static_cast<uint32_t*>(begin_host_.get());
  for (size_t li = 0; li <= n_lanes_; li++)
    begin[li] = static_cast<uint32_t>(lane_begin_[li] - first);
  uint8_t* image = tables_host_.bytes();
  auto* spans = reinterpret_cast<uint32_t*>(image + kDeltaLaneSlotBytes);
  for (int ctx = 0; ctx < kDeltaContexts; ctx++)
    if (!tables.decoding_table(ctx, image + static_cast<size_t>(ctx) * kRansScale,
                               spans + ctx * 256)) {
      // Unused: every value 0, every span marked absent.
      std::memset(image + static_cast<size_t>(ctx) * kRansScale, 0, kRansScale);
      std::fill(spans + ctx * 256, spans + (ctx + 1) * 256, kDeltaAbsentSpan);
    }
  auto* verdict = static_cast<uint32_t*>(verdict_host_.get());
  verdict[0] = 0xffffffffu;
  verdict[1] = verdict[2] = verdict[3] = 0;
  if (bytes)
    CUDAFX_TRY(copy_bytes_async(data_dev_.get(), data_host_.get(), bytes, stream));
  CUDAFX_TRY(copy_bytes_async(begin_dev_.get(), begin, (n_lanes_ + 1) * sizeof(uint32_t), stream));
  CUDAFX_TRY(copy_bytes_async(tables_dev_.get(), image, kDeltaLaneTableBytes, stream));
  CUDAFX_TRY(copy_bytes_async(verdict_dev_.get(), verdict, verdict_host_.size(), stream));
  // 3. Lanes.
  CUDAFX_TRY(delta_lanes_decode_cuda(
      layout_, static_cast<const DeltaLaneDevice*>(lanes_dev_.get()), n_lanes_,
      static_cast<const uint32_t*>(begin_dev_.get()), data_dev_.bytes(), tables_dev_.bytes(),
      shared_tables_, keyframe, NearLossless(quantiser).range, symbols, modes,
      static_cast<uint32_t*>(verdict_dev_.get()), stream));
  CUDAFX_TRY(copy_bytes_async(verdict_host_.get(), verdict_dev_.get(), verdict_host_.size(), stream));
  CUDAFX_TRY(copy_bytes_async(modes_host, modes, layout_.tile_count(), stream));
  CUDAFX_TRY(reached_.record(stream));
  CUDAFX_TRY(reached_.synchronize());
  if (verdict[0] != 0xffffffffu)
    return bad("lane " + std::to_string(verdict[0]) + " is damaged");
  const uint64_t decoded = verdict[2] | static_cast<uint64_t>(verdict[3]) << 32;
  if (decoded != coded)
    return bad("the lanes code " + std::to_string(decoded) + " symbols, the header says " +
               std::to_string(coded));
  return Status::ok();
}

}  // namespace cudafx
