// Delta packets: header, checksums, zstd, and validation of everything a
// decoder reads. The format is documented in docs/delta-format.md.
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "cudafx/delta.hpp"
#include "cudafx/delta_entropy.hpp"
#include "cudafx/delta_motion.hpp"
#include "cudafx/delta_predict_math.hpp"
#include "cudafx/delta_tile_entropy.hpp"
#include "cudafx/parallel.hpp"
#include "delta/bit_stream.hpp"
#include "delta/byte_order.hpp"
#include "delta/crc32_clmul.hpp"

namespace cudafx {
namespace {

const uint8_t kMagic[4] = {'C', 'F', 'X', 'D'};
constexpr uint8_t kFlagKey = 1u << 0;
constexpr uint8_t kCompressionShift = 1, kCompressionMask = 3u << 1;
constexpr uint8_t kFlagRefresh = 1u << 3;  // format 4
// Format 4: a vector section (half pixels). Bit 4 had flagged whole-pixel
// vectors in development streams before 2026-11-27: refused by name, so
// that such a stream fails at once, not at its checksums.
constexpr uint8_t kFlagMotion = 1u << 5;
constexpr uint8_t kFlagWholePixelMotion = 1u << 4;
// Format 4 keyframes: a predictor section (each tile's spatial predictor).
constexpr uint8_t kFlagPredictors = 1u << 6;
// Format 4: tables with a scale shift (DeltaTileEntropy::set_scaled_tables).
constexpr uint8_t kFlagScaledTables = 1u << 7;
constexpr uint8_t kKnownFlags = kFlagKey | kCompressionMask;

// The predictor section of a keyframe of `tiles` tiles: 3 bits a tile, tile
// t's in bits 3t .. 3t + 2 of the section (bit i is bit i mod 8 of byte
// i / 8, the least significant first, as the tables), the rest of the last
// byte 0.
constexpr int kPredictorBits = 3;
static_assert(kDeltaSpatialPredictors == 1 << kPredictorBits, "a predictor fills its bits");
size_t predictor_section_bytes(size_t tiles) { return (tiles * kPredictorBits + 7) / 8; }

void write_predictor_section(size_t tiles, const uint8_t* predictors, std::vector<uint8_t>* out) {
  BitWriter bits(out);
  for (size_t t = 0; t < tiles; t++) bits.put(predictors[t], kPredictorBits);
  bits.flush();
}

// `data` holds predictor_section_bytes(tiles) bytes (the caller checks).
void read_predictor_section(size_t tiles, const uint8_t* data, uint8_t* predictors) {
  BitReader bits(data, predictor_section_bytes(tiles));
  for (size_t t = 0; t < tiles; t++) {
    uint32_t v = 0;
    (void)bits.get(kPredictorBits, &v);  // within the section: never past its end
    predictors[t] = static_cast<uint8_t>(v);
  }
}

// CRC-32 of n bytes (delta_crc32: by folding where the CPU can); large
// payloads in pieces on the worker threads, joined with crc32_combine
// (zlib's CRC ran at ~1.8 GB/s on the H100 host: 0.8 ms for a 1.5 MB 2160p
// packet, half the GPU encoder's frame).
constexpr size_t kCrcPieceBytes = size_t(256) << 10;
uint32_t crc(const uint8_t* p, size_t n) {
  const size_t pieces = (n + kCrcPieceBytes - 1) / kCrcPieceBytes;
  if (pieces < 4)
    return delta_crc32(0, p, n);
  std::vector<uLong> part(pieces);
  parallel_for(static_cast<int>(pieces), [&](int i, int) {
    const size_t at = static_cast<size_t>(i) * kCrcPieceBytes;
    part[i] = delta_crc32(0, p + at, std::min(kCrcPieceBytes, n - at));
  });
  uLong c = part[0];
  for (size_t i = 1; i < pieces; i++)
    c = crc32_combine(c, part[i],
                      static_cast<z_off_t>(std::min(kCrcPieceBytes, n - i * kCrcPieceBytes)));
  return static_cast<uint32_t>(c);
}

constexpr size_t kZstdJobBytes = size_t(2) << 20;
constexpr int kZstdMaxWorkers = 16;

// One zstd context a thread, made once: no allocation per frame.
struct ZstdContexts {
  std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> c{ZSTD_createCCtx(), ZSTD_freeCCtx};
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> d{ZSTD_createDCtx(), ZSTD_freeDCtx};
};
ZstdContexts& zstd() {
  thread_local ZstdContexts ctx;
  return ctx;
}

// True when no bit past a plane's last tile is set in the bitmaps.
bool bitmap_padding_clear(const DeltaLayout& l, const uint8_t* bitmaps) {
  for (int i = 0; i < l.n_planes; i++) {
    const DeltaPlaneLayout& p = l.planes[i];
    for (size_t k = p.tile_count(); k < p.bitmap_bytes() * 8; k++)
      if (bitmaps[k / 8] & (1u << (k % 8)))
        return false;
    bitmaps += p.bitmap_bytes();
  }
  return true;
}

// The header of a packet whose payload (`payload` bytes) follows it in
// `packet`.
void write_header(const DeltaLayout& layout, const DeltaPacketInfo& info, int version,
                  DeltaCompression comp, size_t raw_size, std::vector<uint8_t>* packet,
                  const DeltaPayloadTail* tail = nullptr) {
  const size_t apart = delta_bytes_apart(tail);
  const size_t in_vector = packet->size() - kDeltaHeaderSize;
  const size_t payload = in_vector + apart;
  const size_t tail_bytes = tail ? std::min(tail->bytes, payload) : 0;
  // Format 4 has one coding: its compression bits stay 0.
  const uint8_t comp_bits = version == kDeltaVersion3 ? static_cast<uint8_t>(comp) : 0;
  uint8_t* h = packet->data();
  std::memcpy(h, kMagic, 4);
  h[4] = static_cast<uint8_t>(version);
  h[5] = static_cast<uint8_t>((info.keyframe ? kFlagKey : 0) | (comp_bits << kCompressionShift) |
                              (version == kDeltaVersion && info.refresh ? kFlagRefresh : 0) |
                              (version == kDeltaVersion && info.motion ? kFlagMotion : 0) |
                              (version == kDeltaVersion && info.predictors ? kFlagPredictors : 0) |
                              (version == kDeltaVersion && info.scaled_tables ? kFlagScaledTables
                                                                              : 0));
  h[6] = static_cast<uint8_t>(layout.desc.format);
  h[7] = info.threshold;
  put32(h + 8, layout.desc.width);
  put32(h + 12, layout.desc.height);
  put32(h + 16, info.counter);
  put32(h + 20, static_cast<uint32_t>(raw_size));
  put32(h + 24, static_cast<uint32_t>(payload));
  uint32_t payload_crc = crc(h + kDeltaHeaderSize, payload - tail_bytes);
  if (tail_bytes)
    payload_crc = static_cast<uint32_t>(
        crc32_combine(payload_crc, tail->crc, static_cast<z_off_t>(tail_bytes)));
  put32(h + 28, payload_crc);
  put64(h + 32, info.recon_checksum);
  put16(h + 40, kDeltaTileW);
  put16(h + 42, kDeltaTileH);
  put32(h + 44, crc(h, 44));
}

}  // namespace

Status write_delta_packet_v4(const DeltaLayout& layout, const DeltaPacketInfo& frame,
                             size_t coded, const DeltaVector* vectors,
                             const uint8_t* predictors, const DeltaV4Coder& code,
                             std::vector<uint8_t>* packet, const DeltaPayloadTail* tail) {
  DeltaPacketInfo info = frame;
  info.motion = vectors && delta_any_vector(layout, vectors);
  info.predictors = predictors != nullptr;
  if (info.motion && (info.keyframe || info.refresh))
    return Status::invalid("delta packet: motion vectors on a keyframe or with intra refresh");
  if (info.predictors && !info.keyframe)
    return Status::invalid("delta packet: spatial predictors on a delta frame");
  if (!code)
    return Status::invalid("delta packet: format 4 needs the stream's tile entropy coder");
  if (coded > layout.frame_bytes || (info.keyframe && coded != layout.frame_bytes))
    return Status::invalid("delta packet: symbol count impossible for these caps");
  // The payload starts with the quantiser the symbols were made with.
  packet->assign(kDeltaHeaderSize, 0);
  const int quantiser = delta_quantiser_for(info.threshold);
  packet->push_back(static_cast<uint8_t>(quantiser));
  if (info.motion)
    write_delta_vectors(layout, vectors, packet);
  if (info.predictors)
    write_predictor_section(layout.tile_count(), predictors, packet);
  CUDAFX_TRY(code(quantiser, info.keyframe, !info.refresh, packet));
  if (packet->size() - kDeltaHeaderSize + delta_bytes_apart(tail) > 0xffffffffu)
    return Status::invalid("delta packet: payload larger than the format allows");
  write_header(layout, info, kDeltaVersion, DeltaCompression::Predictive, coded, packet, tail);
  return Status::ok();
}

Status read_delta_payload_v4(const DeltaLayout& layout, const uint8_t* data, size_t size,
                             const DeltaPacketInfo& info, const DeltaV4Decoder& decode,
                             int* quantiser, DeltaVector* vectors, uint8_t* predictors) {
  if (!decode || info.version != kDeltaVersion)
    return Status::invalid("delta packet: not a format 4 packet, or no tile entropy coder");
  if (size == kDeltaHeaderSize)
    return Status::invalid("delta packet: v4 payload: empty");
  *quantiser = data[kDeltaHeaderSize];
  if (*quantiser > info.threshold)
    return Status::invalid("delta packet: v4 payload: quantiser " + std::to_string(*quantiser) +
                           " above the threshold " + std::to_string(info.threshold));
  size_t at = kDeltaHeaderSize + 1;
  if (info.motion) {
    size_t used = 0;
    if (!vectors)
      return Status::invalid("delta packet: motion vectors but nowhere to read them");
    const Status v = read_delta_vectors(layout, data + at, size - at, &used, vectors);
    if (!v.is_ok())
      return Status::invalid("delta packet: v4 payload: " + v.message());
    at += used;
  }
  if (info.predictors) {
    const size_t tiles = layout.tile_count(), bytes = predictor_section_bytes(tiles);
    if (!predictors)
      return Status::invalid("delta packet: spatial predictors but nowhere to read them");
    if (size - at < bytes)
      return Status::invalid("delta packet: v4 payload: predictor section truncated (" +
                             std::to_string(size - at) + " of " + std::to_string(bytes) +
                             " bytes)");
    read_predictor_section(tiles, data + at, predictors);
    at += bytes;
  }
  const Status s = decode(*quantiser, info.keyframe, data + at, size - at, info.raw_size,
                          !info.refresh);
  if (!s.is_ok())  // the decoder's code kept: a backend failure is not a bad packet
    return Status::error(s.code(), "delta packet: " + s.message());
  return Status::ok();
}

Status write_delta_packet(const DeltaLayout& layout, const DeltaPacketInfo& info,
                          const uint8_t* raw, size_t raw_size, int zstd_level,
                          DeltaEntropyCoder* entropy, std::vector<uint8_t>* packet) {
  if (raw_size > layout.max_raw_bytes() || raw_size > 0xffffffffu)
    return Status::invalid("delta packet: payload larger than the stream allows");
  DeltaCompression comp = info.compression;
  if (comp == DeltaCompression::Predictive)
    return Status::invalid("delta packet: format 4 is written by write_delta_packet_v4");
  if (comp == DeltaCompression::Rans && !entropy)
    return Status::invalid("delta packet: rans needs the stream's entropy coder");
  if (info.keyframe) {
    if (entropy)
      entropy->reset();
    if (comp == DeltaCompression::Rans)  // its models are for residuals
      comp = DeltaCompression::Zstd;
  }
  packet->resize(kDeltaHeaderSize);
  if (comp == DeltaCompression::Rans) {
    CUDAFX_TRY(entropy->encode(raw, raw_size, info.threshold, packet));
  } else if (comp == DeltaCompression::Zstd) {
    packet->resize(kDeltaHeaderSize + ZSTD_compressBound(raw_size));
    ZSTD_CCtx* c = zstd().c.get();
    ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, zstd_level);
    // Large payloads (a 4K frame with change everywhere is 33 MB) in
    // parallel jobs of kZstdJobBytes: still one zstd frame, and for given
    // parameters the same bytes whatever the number of workers. Where
    // libzstd lacks threads, setting workers fails and it runs on one.
    if (raw_size >= 2 * kZstdJobBytes) {
      const int workers = std::min(cpu_worker_count(), kZstdMaxWorkers);
      if (!ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_nbWorkers, workers)))
        ZSTD_CCtx_setParameter(c, ZSTD_c_jobSize, static_cast<int>(kZstdJobBytes));
    }
    const size_t n = ZSTD_compress2(c, packet->data() + kDeltaHeaderSize,
                                    packet->size() - kDeltaHeaderSize, raw, raw_size);
    if (ZSTD_isError(n))
      return Status::error(StatusCode::Internal,
                           std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
    packet->resize(kDeltaHeaderSize + n);
  } else {
    packet->insert(packet->end(), raw, raw + raw_size);
  }
  write_header(layout, info, kDeltaVersion3, comp, raw_size, packet);
  return Status::ok();
}

Status check_delta_payload(const uint8_t* data, size_t size) {
  if (!data || size < kDeltaHeaderSize)
    return Status::invalid("delta packet: truncated header (" + std::to_string(size) + " bytes)");
  if (get32(data + 28) != crc(data + kDeltaHeaderSize, size - kDeltaHeaderSize))
    return Status::invalid("delta packet: payload checksum mismatch");
  return Status::ok();
}

Status read_delta_header(const DeltaLayout& layout, const uint8_t* data, size_t size,
                         DeltaPacketInfo* info, bool check_payload) {
  auto bad = [](const std::string& why) { return Status::invalid("delta packet: " + why); };
  if (!data || size < kDeltaHeaderSize)
    return bad("truncated header (" + std::to_string(size) + " bytes)");
  const uint8_t* h = data;
  if (std::memcmp(h, kMagic, 4) != 0)
    return bad("bad magic");
  const int version = h[4];
  if (version != kDeltaVersion && version != kDeltaVersion3)
    return bad("unsupported version " + std::to_string(h[4]));
  if (get32(h + 44) != crc(h, 44))
    return bad("header checksum mismatch");
  if (version == kDeltaVersion && (h[5] & kFlagWholePixelMotion))
    return bad("whole-pixel motion vectors (flag 4, a development form of format 4) are no "
               "longer read; vectors are in half pixels (flag 5)");
  if (h[5] & ~(kKnownFlags |
                (version == kDeltaVersion
                     ? kFlagRefresh | kFlagMotion | kFlagPredictors | kFlagScaledTables
                     : 0)))
    return bad("unknown flags");
  if ((h[5] & kFlagMotion) && (h[5] & (kFlagKey | kFlagRefresh)))
    return bad("motion vectors on a keyframe or in a stream with intra refresh");
  if ((h[5] & kFlagPredictors) && !(h[5] & kFlagKey))
    return bad("spatial predictors on a delta frame");
  const uint8_t comp = (h[5] & kCompressionMask) >> kCompressionShift;
  if (version == kDeltaVersion3 && comp > static_cast<uint8_t>(DeltaCompression::Rans))
    return bad("unknown compression " + std::to_string(comp));
  if (version == kDeltaVersion && comp != 0)
    return bad("format 4 packet with compression bits set");
  if (h[6] != static_cast<uint8_t>(layout.desc.format) ||
      get32(h + 8) != static_cast<uint32_t>(layout.desc.width) ||
      get32(h + 12) != static_cast<uint32_t>(layout.desc.height))
    return bad("format or size differs from the stream's caps");
  if (get16(h + 40) != kDeltaTileW || get16(h + 42) != kDeltaTileH)
    return bad("unsupported tile size");
  const bool key = h[5] & kFlagKey;
  const size_t raw_size = get32(h + 20), payload = get32(h + 24);
  if (payload != size - kDeltaHeaderSize)
    return bad("payload size " + std::to_string(payload) + " but " +
               std::to_string(size - kDeltaHeaderSize) + " bytes follow the header");
  if (version == kDeltaVersion
          ? (key ? raw_size != layout.frame_bytes : raw_size > layout.frame_bytes)
          : (key ? raw_size != layout.frame_bytes
                 : (raw_size < layout.bitmap_bytes || raw_size > layout.max_raw_bytes())))
    return bad("raw size " + std::to_string(raw_size) + " impossible for these caps");
  if (comp == static_cast<uint8_t>(DeltaCompression::Rans) && key)
    return bad("a keyframe cannot be rans-coded");
  if (check_payload)
    CUDAFX_TRY(check_delta_payload(data, size));
  info->version = version;
  info->keyframe = key;
  info->refresh = h[5] & kFlagRefresh;
  info->motion = h[5] & kFlagMotion;
  info->predictors = h[5] & kFlagPredictors;
  info->scaled_tables = h[5] & kFlagScaledTables;
  info->compression =
      version == kDeltaVersion ? DeltaCompression::Predictive : static_cast<DeltaCompression>(comp);
  info->threshold = h[7];
  info->counter = get32(h + 16);
  info->recon_checksum = get64(h + 32);
  info->raw_size = static_cast<uint32_t>(raw_size);
  return Status::ok();
}

Status read_delta_payload(const DeltaLayout& layout, const uint8_t* data, size_t size,
                          const DeltaPacketInfo& info, DeltaEntropyCoder* entropy, uint8_t* raw) {
  auto bad = [](const std::string& why) { return Status::invalid("delta packet: " + why); };
  const uint8_t* p = data + kDeltaHeaderSize;
  const size_t payload = size - kDeltaHeaderSize, raw_size = info.raw_size;
  if (raw_size > layout.max_raw_bytes())  // read_delta_header's bound; never past `raw`
    return bad("raw size beyond the caps");
  if (info.compression == DeltaCompression::Rans) {
    if (!entropy)
      return bad("rans payload but no entropy coder for the stream");
    const Status s = entropy->decode(p, payload, info.threshold, raw, raw_size);
    if (!s.is_ok())
      return bad(s.message());
  } else if (info.compression == DeltaCompression::Zstd) {
    if (ZSTD_findFrameCompressedSize(p, payload) != payload)
      return bad("zstd payload is not exactly one frame");
    const unsigned long long content = ZSTD_getFrameContentSize(p, payload);
    if (content != raw_size)
      return bad("zstd frame size differs from the header");
    const size_t n = ZSTD_decompressDCtx(zstd().d.get(), raw, raw_size, p, payload);
    if (ZSTD_isError(n) || n != raw_size)
      return bad(std::string("zstd: ") + (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short"));
  } else {
    if (payload != raw_size)
      return bad("uncompressed payload size differs from the raw size");
    std::memcpy(raw, p, raw_size);
  }
  if (!info.keyframe) {
    if (!bitmap_padding_clear(layout, raw))
      return bad("tile bitmap has bits beyond the last tile");
    if (for_each_set_tile(layout, raw, [](int, size_t, int, int, size_t) {}) != raw_size)
      return bad("tile bytes do not match the tile bitmap");
  } else if (entropy) {
    entropy->reset();
  }
  return Status::ok();
}

}  // namespace cudafx
