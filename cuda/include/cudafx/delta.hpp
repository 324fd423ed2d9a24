// The closed-loop thresholded frame-delta codec: per-plane bytes, tiles of
// kDeltaTileW bytes x kDeltaTileH rows.
//
// Semantics: the encoder keeps the decoder's reconstruction `ref`. For every
// byte, if |cur - ref| > threshold a non-zero residual q is sent with
// |cur - (ref + q)| <= threshold (delta_math.hpp: exact for threshold 0,
// quantised in steps of 2*threshold+1 above) and ref takes ref + q;
// otherwise the residual is 0 and ref stays. So every reconstructed byte is
// within `threshold` of its source, on every frame; threshold 0 is lossless.
// A keyframe sends the frame itself and sets ref to it.
//
// The packet format is in docs/delta-format.md.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "cudafx/cuda_resources.hpp"
#include "cudafx/delta_math.hpp"
#include "cudafx/delta_motion.hpp"
#include "cudafx/image.hpp"
#include "cudafx/status.hpp"

namespace cudafx {

constexpr int kDeltaTileW = 64;  // bytes
constexpr int kDeltaTileH = 16;  // rows
// Packets of format 4 (predicted tiles, per-frame entropy tables) are what
// DeltaCompression::Predictive writes; the other compressions write format 3.
// Decoders take both.
constexpr int kDeltaVersion = 4;
constexpr int kDeltaVersion3 = 3;
constexpr size_t kDeltaHeaderSize = 48;

struct DeltaPlaneLayout {
  int row_bytes = 0, height = 0;
  int pixel_bytes = 1;  // bytes of one pixel of the plane (4 for RGBA, 2 for NV12's UV)
  int tiles_x = 0, tiles_y = 0;
  size_t tile_count() const { return static_cast<size_t>(tiles_x) * tiles_y; }
  size_t bitmap_bytes() const { return (tile_count() + 7) / 8; }
  // Bytes and rows of a tile: kDeltaTileW x kDeltaTileH, clipped at the
  // plane's right and bottom edges.
  int tile_width(int tx) const { return std::min(kDeltaTileW, row_bytes - tx * kDeltaTileW); }
  int tile_height(int ty) const { return std::min(kDeltaTileH, height - ty * kDeltaTileH); }
};

// Everything about a stream that the caps fix.
struct DeltaLayout {
  ImageDesc desc;
  int n_planes = 0;
  DeltaPlaneLayout planes[kMaxPlanes];
  size_t frame_bytes = 0;   // all planes, rows tight
  size_t bitmap_bytes = 0;  // all planes
  size_t plane_offset[kMaxPlanes] = {};  // where each plane starts in a tight frame
  size_t first_tile[kMaxPlanes] = {};    // number of each plane's first tile among all
  // Largest raw (uncompressed) payload: a delta frame with every tile set.
  size_t max_raw_bytes() const { return bitmap_bytes + frame_bytes; }
  size_t tile_count() const {  // all planes
    size_t n = 0;
    for (int i = 0; i < n_planes; i++) n += planes[i].tile_count();
    return n;
  }
};

Status make_delta_layout(const ImageDesc& desc, DeltaLayout* out);

// Walks the tiles set in the bitmaps of a delta payload (at its start) in
// payload order: fn(plane, tile, tx, ty, offset), with `tile` the tile's
// number among all tiles of all planes and `offset` where its bytes start
// in the payload. Bits past a plane's last tile are not read. Returns the
// offset after the last set tile: the payload size the bitmaps imply.
template <class F>
size_t for_each_set_tile(const DeltaLayout& layout, const uint8_t* bitmaps, F fn) {
  size_t offset = layout.bitmap_bytes, tile = 0;
  for (int i = 0; i < layout.n_planes; i++) {
    const DeltaPlaneLayout& p = layout.planes[i];
    for (int ty = 0; ty < p.tiles_y; ty++) {
      const int rows = p.tile_height(ty);
      for (int tx = 0; tx < p.tiles_x; tx++, tile++) {
        const size_t k = static_cast<size_t>(ty) * p.tiles_x + tx;
        if (!(bitmaps[k / 8] & (1u << (k % 8))))
          continue;
        fn(i, tile, tx, ty, offset);
        offset += static_cast<size_t>(p.tile_width(tx)) * rows;
      }
    }
    bitmaps += p.bitmap_bytes();
  }
  return offset;
}

// A 64-bit checksum of an image's pixels (row padding excluded): each 8-byte
// word (zero-extended at row ends) mixed with its position and summed, so it
// is order-sensitive and computes in parallel on either backend.
uint64_t delta_checksum(const DeltaLayout& layout, const ImageView& img);
// Its terms of rows [y0, y1) of one plane: delta_checksum is the sum (mod
// 2^64) of these over any split of every plane's rows.
uint64_t delta_checksum_rows(const DeltaLayout& layout, const ImageView& img, int plane, int y0,
                             int y1);

// -- the closed loop, CPU --

// Working memory of delta_encode_cpu, kept between frames.
struct DeltaScratch {
  std::vector<uint8_t> residual;  // frame_bytes: residuals, planes and rows tight
  std::vector<uint8_t> changed;   // one flag a tile, all planes
  DeltaStepDivisor step;          // for threshold `step_threshold`
  int step_threshold = -1;
};

// Encodes `cur` against `ref` (updated in place) into a raw payload.
void delta_encode_cpu(const DeltaLayout& layout, const ImageView& cur, const ImageView& ref,
                      int threshold, bool keyframe, DeltaScratch* scratch,
                      std::vector<uint8_t>* raw, size_t* changed_bytes);
// The raw payload of a delta frame from its residuals (planes and rows
// tight) and per-tile changed flags; shared by both backends.
void pack_delta_payload(const DeltaLayout& layout, const uint8_t* residual,
                        const uint8_t* changed, std::vector<uint8_t>* raw,
                        size_t* changed_bytes);

// Applies a raw payload (already validated by read_delta_payload) to `ref`.
void delta_apply_cpu(const DeltaLayout& layout, const uint8_t* raw, size_t size, bool keyframe,
                     const ImageView& ref);

// -- packets --

// Format 3: None, Zstd, Rans (delta frames through DeltaEntropyCoder, stateful
// from keyframe to keyframe; keyframes through zstd). Format 4: Predictive
// (delta_tiles.hpp, delta_tile_entropy.hpp: every frame, keyframes
// included, predicted per tile, quantised within the threshold and coded
// with tables of its own).
enum class DeltaCompression { None = 0, Zstd = 1, Rans = 2, Predictive = 3 };
inline int delta_format_version(DeltaCompression c) {
  return c == DeltaCompression::Predictive ? kDeltaVersion : kDeltaVersion3;
}

class DeltaEntropyCoder;
class DeltaTileEntropy;
class DeltaTileEntropyCuda;

struct DeltaPacketInfo {
  int version = kDeltaVersion3;  // read_delta_header: the packet's; writing: from `compression`
  bool keyframe = false;
  DeltaCompression compression = DeltaCompression::None;
  uint32_t counter = 0;     // frame number in the stream, +1 a frame
  uint8_t threshold = 0;
  // Format 4: the stream refreshes intra (DeltaEncodeSettings::refresh_period):
  // no table is reused, and a decoder out of sync may rebuild from delta frames.
  bool refresh = false;
  // Format 4: the packet carries motion vectors (a vector section before
  // the coded frame; delta_motion.hpp). Set by write_delta_packet_v4.
  bool motion = false;
  // Format 4 keyframes: the packet carries each tile's spatial predictor (a
  // predictor section before the coded frame; delta_intra_predictor). Set
  // by write_delta_packet_v4.
  bool predictors = false;
  // Format 4: the tables carry a scale shift (DeltaTileEntropy::
  // set_scaled_tables). Writing: must say how the frame's coder wrote them;
  // true, as a DeltaTileEntropy writes them unless told otherwise.
  bool scaled_tables = true;
  uint64_t recon_checksum = 0;  // delta_checksum of the reconstruction
  uint32_t raw_size = 0;  // read_delta_header: the payload before compression (format 4:
                          // the number of symbols coded)
};

// Header + (compressed) payload. `entropy` is the stream's coder, needed
// for DeltaCompression::Rans (a keyframe resets it; a keyframe asked for
// with Rans goes out with zstd, and info.compression says which was used).
Status write_delta_packet(const DeltaLayout& layout, const DeltaPacketInfo& info,
                          const uint8_t* raw, size_t raw_size, int zstd_level,
                          DeltaEntropyCoder* entropy, std::vector<uint8_t>* packet);
// Reading a packet, in two steps so that a decoder can decide between them
// (a stateful entropy stage must not see a packet that does not follow the
// last one). Neither reads outside [data, data + size).
// 1. The header: every field checked against `layout`, and both CRCs (the
// payload's last, and only with `check_payload`: a caller that leaves it
// out calls check_delta_payload before it trusts the payload).
Status read_delta_header(const DeltaLayout& layout, const uint8_t* data, size_t size,
                         DeltaPacketInfo* info, bool check_payload = true);
// The payload's CRC of a packet whose header passed, with
// read_delta_header's message.
Status check_delta_payload(const uint8_t* data, size_t size);
// 2. The raw payload of a packet whose header passed (info.raw_size bytes)
// at `raw`, which has room for layout.max_raw_bytes(), its size checked
// against the tile bitmap. `entropy` as for write_delta_packet: a keyframe
// resets it, a Rans delta frame advances it.
Status read_delta_payload(const DeltaLayout& layout, const uint8_t* data, size_t size,
                          const DeltaPacketInfo& info, DeltaEntropyCoder* entropy, uint8_t* raw);

// Format 4: a packet from the modes and symbols of a frame (delta_tiles.hpp;
// `coded` symbols in the tiles not skipped), coded by `code`, which appends
// the coded frame (tables, lane directory, lanes) for `quantiser` to the
// packet: DeltaTileEntropy::encode on symbols in host memory,
// DeltaTileEntropyCuda::encode on symbols in device memory. Then step 2 for
// a format-4 packet whose header passed: its modes and symbols.
// `vectors` (one a tile, or null) are the frame's motion vectors: when any
// is set, the packet carries them (header flag 5, a vector section).
using DeltaV4Coder = std::function<Status(int quantiser, bool keyframe, bool reuse_tables,
                                          std::vector<uint8_t>* packet)>;
// The CRC-32 (zlib's) of the payload's last `bytes` bytes, worked out where
// they were made (the CUDA coder's lanes, on the device), so that the
// header's payload CRC only has to read the rest (crc32_combine).
struct DeltaPayloadTail {
  size_t bytes = 0;
  uint32_t crc = 0;
  // Set when those bytes are not at the end of the packet vector but here,
  // to follow it (DeltaPacketParts): the header counts and checks them all
  // the same.
  const uint8_t* apart = nullptr;
};
// The payload's bytes that follow the packet vector instead of being in it.
inline size_t delta_bytes_apart(const DeltaPayloadTail* tail) {
  return tail && tail->apart ? tail->bytes : 0;
}
// `tail`, when given, is read after `code` has run (the coder fills it).
// `predictors` (a keyframe's, one a tile; null: every tile MED, no section)
// go into the predictor section.
Status write_delta_packet_v4(const DeltaLayout& layout, const DeltaPacketInfo& info, size_t coded,
                             const DeltaVector* vectors, const uint8_t* predictors,
                             const DeltaV4Coder& code, std::vector<uint8_t>* packet,
                             const DeltaPayloadTail* tail = nullptr);
// *quantiser receives the quantiser the frame was coded with (its first
// payload byte, at most the header's threshold); `decode` decodes the coded
// frame that follows it (`size` bytes at `data`, `coded` symbols announced)
// for that quantiser: DeltaTileEntropy::decode into host memory,
// DeltaTileDecoderCuda::decode into device memory. A packet with motion
// (info.motion) has its vectors read into `vectors` (one a tile) first; a
// keyframe with a predictor section (info.predictors), its predictors into
// `predictors` (one a tile).
using DeltaV4Decoder = std::function<Status(int quantiser, bool keyframe, const uint8_t* data,
                                            size_t size, size_t coded, bool reuse_allowed)>;
Status read_delta_payload_v4(const DeltaLayout& layout, const uint8_t* data, size_t size,
                             const DeltaPacketInfo& info, const DeltaV4Decoder& decode,
                             int* quantiser, DeltaVector* vectors,
                             uint8_t* predictors = nullptr);

// -- streams --

struct DeltaEncodeSettings;
struct DeltaEncodeStats;
// The last step of both encoders: header fields from the settings, the
// packet, and the statistics.
Status finish_delta_packet(const DeltaLayout& layout, const DeltaEncodeSettings& settings,
                           bool keyframe, uint32_t counter, uint64_t recon_checksum,
                           const uint8_t* raw, size_t raw_size, size_t changed_bytes,
                           DeltaEntropyCoder* entropy, std::vector<uint8_t>* packet,
                           DeltaEncodeStats* stats);
// The same for format 4, from the frame's coder (write_delta_packet_v4).
Status finish_delta_packet_v4(const DeltaLayout& layout, const DeltaEncodeSettings& settings,
                              bool keyframe, uint32_t counter, uint64_t recon_checksum,
                              size_t coded, const DeltaVector* vectors,
                              const uint8_t* predictors, const DeltaV4Coder& code,
                              std::vector<uint8_t>* packet, DeltaEncodeStats* stats,
                              const DeltaPayloadTail* tail = nullptr);

struct DeltaEncodeSettings {
  int threshold = 0;  // 0..255
  bool force_keyframe = false;
  // Format 4 only: intra refresh over this many frames (0: off). Each frame
  // codes one band of tile rows spatially (delta_in_refresh_band, phase =
  // frame counter mod period), so a decoder that joins or loses a packet is
  // whole again after one sweep, without a keyframe.
  int refresh_period = 0;
  // Format 4 only: search moved temporal tiles (delta_motion.hpp). Not with
  // intra refresh (a moved tile would read tiles a joining decoder has not
  // rebuilt yet): there it has no effect.
  bool motion_search = true;
  // Format 4 only: every frame of the stream is a keyframe (the element's
  // key-int-max=1). Keyframes are then coded for their own size, with the
  // threshold as dead zone, not for the delta frames after them
  // (delta_keyframe_dead_zone).
  bool keyframes_only = false;
  DeltaCompression compression = DeltaCompression::Predictive;
  int zstd_level = 3;  // zstd, and keyframes with rans
};

// Whether an encoder searches motion for a frame: format 4 delta frames of
// streams without intra refresh, when the settings ask for it.
inline bool delta_motion_searched(const DeltaEncodeSettings& s, bool keyframe) {
  return s.motion_search && !keyframe && s.refresh_period == 0 &&
         s.compression == DeltaCompression::Predictive;
}

struct DeltaEncodeStats {
  bool keyframe = false;
  size_t changed_bytes = 0;  // bytes sent as residuals (format 4: in the tiles not skipped)
  size_t raw_bytes = 0, packet_bytes = 0;
  size_t moved_tiles = 0;  // format 4: tiles with a motion vector
};

// Keeps the reference and the frame counter of one stream (CPU backend).
class DeltaEncoder {
 public:
  static Status create(const ImageDesc& desc, std::unique_ptr<DeltaEncoder>* out);
  ~DeltaEncoder();
  // Encodes one frame (host memory). The first frame is always a keyframe.
  Status encode(const ImageView& cur, const DeltaEncodeSettings& settings,
                std::vector<uint8_t>* packet, DeltaEncodeStats* stats = nullptr);
  const DeltaLayout& layout() const { return layout_; }
  const ImageView& reference() const { return refs_[ref_index_]; }

 private:
  DeltaLayout layout_;
  // The reference: one of two images with the motion search's margin
  // (delta_margin_image). A frame with motion search reads the one and
  // makes the next in the other (delta_tiles_encode_cpu's DeltaRebuild),
  // filling its margins as it goes; any other frame rebuilds the reference
  // where it is, and the margins are filled before the next search.
  std::vector<uint8_t> ref_storage_[2];
  ImageView refs_[2];
  int ref_index_ = 0;
  bool margins_filled_ = false;
  std::vector<uint8_t> raw_;
  std::unique_ptr<DeltaEntropyCoder> entropy_;
  DeltaScratch scratch_;
  std::vector<uint8_t> symbols_, modes_;  // format 4
  std::vector<uint8_t> predictors_;       // format 4 keyframes: one a tile
  std::unique_ptr<DeltaTileEntropy> tiles_;
  // Format 4's motion search: this and the previous frame's vectors.
  std::vector<DeltaVector> vectors_, previous_vectors_;
  uint32_t counter_ = 0;
  bool have_ref_ = false;
};

// -- CUDA backend --

// Residuals, reference update and per-tile flags of a delta frame on the
// device: `residual` (frame_bytes, planes and rows tight) and `changed` (one
// byte a tile) in device memory, queued on `stream`.
Status delta_residual_cuda(const DeltaLayout& layout, const ImageView& cur, const ImageView& ref,
                           int threshold, uint8_t* residual, uint8_t* changed,
                           StreamHandle stream);
// delta_checksum of a device image into *sum (device memory), on `stream`.
Status delta_checksum_cuda(const DeltaLayout& layout, const ImageView& img, uint64_t* sum,
                           StreamHandle stream);

// A packet in two parts, as the CUDA encoder can hand it out: `head` (the
// header, the vector section, the tables and the lane directory) followed
// by `tail_size` bytes at `tail` (the coded lanes, in the encoder's pinned
// memory, valid until its next encode()). The coded lanes are most of a
// packet (1.5 MB of a 2160p frame with every tile changed); copying them
// into a vector cost the encoder's host 0.17 ms a frame, so, as NVENC
// hands out its bitstream in locked memory, the caller copies them once,
// to where it wants them (cudadeltaenc: its output buffer).
struct DeltaPacketParts {
  std::vector<uint8_t> head;
  const uint8_t* tail = nullptr;
  size_t tail_size = 0;
  size_t size() const { return head.size() + tail_size; }
  void clear() {
    head.clear();
    tail = nullptr;
    tail_size = 0;
  }
};

// The encoder on a CUDA device: the reference stays in device memory; the
// residuals and tile flags come back to pinned memory, where the payload is
// packed and compressed exactly as on the CPU, so both backends give the
// same bytes.
class DeltaEncoderCuda {
 public:
  // Runs in the CUDA context current at creation; allocates everything here.
  static Status create(const ImageDesc& desc, std::unique_ptr<DeltaEncoderCuda>* out);
  ~DeltaEncoderCuda();
  // `cur` is in device memory. Queued on `stream`, synchronised once.
  Status encode(const ImageView& cur, const DeltaEncodeSettings& settings, StreamHandle stream,
                std::vector<uint8_t>* packet, DeltaEncodeStats* stats = nullptr);
  // The same packet in two parts: a format-4 frame's coded lanes are left
  // in pinned memory (packet->tail, valid until the next call); the rest,
  // and every format-3 packet, is packet->head.
  Status encode(const ImageView& cur, const DeltaEncodeSettings& settings, StreamHandle stream,
                DeltaPacketParts* packet, DeltaEncodeStats* stats = nullptr);
  // Pipelined encoding, one frame of latency (as NVENC's asynchronous
  // mode), format 4 only: submit() queues this frame's prediction stage
  // (motion search, prediction, checksum, counting) on `stream` and, beside
  // it on the encoder's own stream, the entropy coding of the frame
  // submitted before, whose packet it returns (*got false on the first
  // call); flush() returns the last frame's. The packets are encode()'s,
  // byte for byte; a frame's coder (0.3 ms of a 2160p frame, one warp an
  // SM) then runs beside the next frame's search instead of after it.
  // `cur` is read after submit() returns: keep it unchanged until the next
  // submit() or flush() has returned, or `stream` has been synchronised.
  // encode() while a frame is submitted is an error (flush() first). After
  // a failed submit() or flush() the frames in flight are lost and the next
  // frame is a keyframe.
  Status submit(const ImageView& cur, const DeltaEncodeSettings& settings, StreamHandle stream,
                DeltaPacketParts* previous, bool* got, DeltaEncodeStats* stats = nullptr);
  Status flush(DeltaPacketParts* last, bool* got, DeltaEncodeStats* stats = nullptr);
  const DeltaLayout& layout() const { return layout_; }
  const ImageView& reference() const { return ref_; }  // device memory

 private:
  Status validate(const ImageView& cur, const DeltaEncodeSettings& settings) const;
  // `apart`: the lanes are left in pinned memory and it says where.
  Status encode_packet(const ImageView& cur, const DeltaEncodeSettings& settings,
                       StreamHandle stream, std::vector<uint8_t>* packet,
                       DeltaPacketParts* apart, DeltaEncodeStats* stats);
  // Format 4 in two stages (encode(): one after the other on the caller's
  // stream; submit(): frame n's prediction beside frame n - 1's coding).
  // What the prediction stage hands to the coding stage: the frame's modes,
  // vectors and checksum in pinned memory, and how it was made.
  struct Predicted {
    PinnedBuffer modes, vectors, sum;
    PinnedBuffer predictors;  // a keyframe's, one a tile
    CudaEvent done;  // recorded after its copies and the coder's count
    DeltaEncodeSettings settings;
    bool keyframe = false, search = false;
    uint32_t counter = 0;
  };
  Status predict(const ImageView& cur, const DeltaEncodeSettings& settings, bool keyframe,
                 int slot, StreamHandle stream);
  // Waits for slot's prediction; its vectors become the next frame's
  // candidates.
  Status await_prediction(int slot);
  void abandon_submitted();
  Status code_predicted(int slot, StreamHandle stream, std::vector<uint8_t>* packet,
                        DeltaPacketParts* apart, DeltaEncodeStats* stats);

  DeltaLayout layout_;
  DeviceBuffer ref_mem_, residual_dev_, changed_dev_, sum_dev_;
  DeviceBuffer predictors_dev_;  // format 4 keyframes: one a tile
  PinnedBuffer residual_host_, changed_host_, sum_host_;
  ImageView ref_;
  std::vector<uint8_t> raw_;
  std::unique_ptr<DeltaEntropyCoder> entropy_;
  std::unique_ptr<DeltaTileEntropyCuda> tiles_;  // format 4: symbols in residual_dev_, modes in changed_*
  Predicted predicted_[2];
  int submitted_ = -1;  // submit(): the slot of the frame whose packet is to come
  CudaStream coder_stream_;  // submit(): the coding stage's
  // Format 4's motion search (as DeltaEncoder's): the reference before the
  // frame and two vector buffers on the device (this frame's, the last's).
  DeviceBuffer prev_mem_, vectors_dev_[2];
  ImageView prev_;
  int vectors_now_ = 0;
  bool previous_vectors_set_ = false;  // else the last buffer is not this stream's last frame's
  std::vector<DeltaVector> previous_host_;  // the last frame's, for the global candidates
  uint32_t counter_ = 0;
  bool have_ref_ = false;
  // predict()'s copies down and checksum as CUDA graphs, by slot and the
  // vectors copied (none without the search, or either buffer: a keyframe
  // moves the slot but not the vectors, so all six pairs occur).
  CudaGraphCache<std::array<uintptr_t, 2>, 6> results_graphs_;
};

enum class DeltaDecodeResult {
  Frame,         // a reconstruction is ready
  NeedKeyframe,  // out of sync (start, gap, earlier error): dropped until a keyframe
  Corrupt,       // the packet failed validation or the checksum: dropped, out of sync
  Failed,        // the backend failed (a CUDA error): the decoder cannot go on
  // Out of sync on a stream with intra refresh: the delta frame was applied
  // but not every tile has been rebuilt since sync was lost; dropped (no
  // keyframe needed: the sweep makes the decoder whole).
  Refreshing,
};

// The decoder's state machine, the same on both backends: validates every
// packet, detects gaps in the counter and reconstruction mismatches, and
// resynchronises on the next keyframe, or, on a stream with intra refresh,
// once every tile has been rebuilt from a spatially coded tile since sync
// was lost (then the reconstruction checksum must hold again). A backend
// applies the payload.
class DeltaDecoderBase {
 public:
  virtual ~DeltaDecoderBase();
  // `error` receives the reason for anything but Frame.
  DeltaDecodeResult decode(const uint8_t* data, size_t size, std::string* error);
  // Marks the stream discontinuous (lost packets): the next delta frame is
  // not applied (on a stream with intra refresh: applied, not output, until
  // the sweep has rebuilt every tile).
  void discont() { synced_ = false; }
  // Host memory (DeltaDecoder) or device memory (DeltaDecoderCuda).
  const ImageView& reconstruction() const { return ref_; }
  const DeltaPacketInfo& last_info() const { return info_; }
  const DeltaLayout& layout() const { return layout_; }
  // True for the frame that made the decoder whole again by intra refresh.
  bool refreshed() const { return refreshed_; }
  // True when the last packet whose header was valid came from a stream
  // with intra refresh (its decoder needs no keyframe to recover).
  bool refresh_stream() const { return refresh_stream_; }

 protected:
  // Applies the raw payload (raw_size_ bytes at raw_, validated, of a
  // keyframe or not) to ref_ and returns the checksum of the result.
  virtual Status reconstruct(bool keyframe, uint64_t* checksum) = 0;
  // Format 4: applies the modes and symbols at modes_ and symbols_, coded
  // with `quantiser`.
  virtual Status reconstruct_tiles(int quantiser, uint64_t* checksum) = 0;
  // Format 4: decodes a packet's coded frame (read_delta_payload_v4's
  // DeltaV4Decoder) with tiles_'s tables; by default into modes_ and
  // symbols_ on the host.
  virtual Status decode_tiles(int quantiser, bool keyframe, const uint8_t* data, size_t size,
                              size_t coded, bool reuse_allowed);
  // Whether the packet's payload CRC is checked on another thread while
  // the payload is decoded (the CUDA decoder's lanes on the GPU: the host
  // would otherwise wait for both in turn). Nothing that outlives the
  // packet changes before the check is in, and a mismatch gives the same
  // verdict and message as checking first.
  virtual bool checks_payload_beside(const DeltaPacketInfo&) const { return false; }
  Status init(const ImageDesc& desc);

  DeltaLayout layout_;
  ImageView ref_;
  // Where packets are decompressed: the backend's buffer of
  // layout_.max_raw_bytes(), set by its create() (the CUDA decoder's is
  // pinned, so the payload goes up to the device without another copy).
  uint8_t* raw_ = nullptr;
  size_t raw_size_ = 0;
  std::unique_ptr<DeltaEntropyCoder> entropy_;
  // Format 4: where a packet's tile modes (tile_count()) and symbols
  // (frame_bytes) are decoded; set by the backend's create().
  uint8_t* modes_ = nullptr;
  uint8_t* symbols_ = nullptr;
  std::unique_ptr<DeltaTileEntropy> tiles_;
  // Format 4: the vectors of the packet being decoded (one a tile) and
  // whether it has any; a backend keeps the reference before the frame
  // for the moved tiles.
  std::vector<DeltaVector> vectors_;
  bool motion_ = false;
  // Format 4: a keyframe's spatial predictors (one a tile) and whether the
  // packet being decoded has them (else every spatial tile is MED).
  std::vector<uint8_t> predictors_;
  bool spatial_predictors_ = false;

 private:
  // decode() once the header's fields have passed.
  DeltaDecodeResult decode_packet(const uint8_t* data, size_t size, const DeltaPacketInfo& info,
                                  std::string* error);
  // The payload check started beside the decoding, waited for once (ok
  // when there is none).
  Status payload_checked();
  // Out of sync: the tables of the frames before are no longer the
  // encoder's (the stream resumes at a keyframe, or by intra refresh,
  // which reuses none).
  void lose_sync();
  // A packet with motion: every tile with a vector is temporal.
  Status check_vectors() const;
  // Rebuilds the tiles of a refresh stream after sync was lost: which
  // tiles are whole (spatial since, or temporal/skipped over a whole one).
  // Returns the number whole.
  size_t mark_whole();

  DeltaPacketInfo info_;
  uint32_t last_counter_ = 0;
  bool synced_ = false;
  bool refreshing_ = false, refreshed_ = false, refresh_stream_ = false;
  std::vector<uint8_t> whole_;  // one a tile, while refreshing
  std::future<Status> payload_check_;
  Status payload_status_ = Status::ok();
};

// The decoder on the CPU: the reconstruction in host memory.
class DeltaDecoder : public DeltaDecoderBase {
 public:
  static Status create(const ImageDesc& desc, std::unique_ptr<DeltaDecoder>* out);

 protected:
  Status reconstruct(bool keyframe, uint64_t* checksum) override;
  Status reconstruct_tiles(int quantiser, uint64_t* checksum) override;

 private:
  std::vector<uint8_t> ref_storage_, raw_storage_, modes_storage_;
  std::vector<uint8_t> prev_storage_;  // the reference before a frame with motion
  ImageView prev_;
};

// Applies a validated raw payload to a device reconstruction on `stream`:
// the payload (host memory) and per-tile offsets into it (host, one a tile
// of all planes, kDeltaNoTile for an unchanged tile) go up through the
// given device buffers.
constexpr uint32_t kDeltaNoTile = 0xFFFFFFFFu;
Status delta_apply_cuda(const DeltaLayout& layout, const uint8_t* raw_dev, bool keyframe,
                        const uint32_t* tile_offsets_dev, const ImageView& ref,
                        StreamHandle stream);

class DeltaTileDecoderCuda;

// Frames from this size (bytes, all planes) decode format 4's lanes on the
// GPU (DeltaDecoderCuda). On the H100 (bench_delta, 5 % of bytes changed)
// the GPU decoded 1080p NV12 (3.1 MB) at 1.8x the host's 16 threads and
// 2160p RGBA at 14x; a lane's chain is as long in a small frame as in a
// large one, while the host spreads a small frame's few lanes as well as a
// large one's, so small frames stay on the host.
constexpr size_t kDeltaGpuLanesFrom = size_t(1) << 20;

// The decoder on a CUDA device: the reconstruction stays in device memory.
// Packets are validated and decompressed on the CPU (the same code as the
// CPU decoder); the payload is applied and the checksum computed on the
// device, on `stream`, which each packet synchronises once (the verdict
// needs the checksum). Both backends reach the same verdicts and the same
// reconstructions.
class DeltaDecoderCuda : public DeltaDecoderBase {
 public:
  // Runs in the CUDA context current at creation; allocates everything here.
  // Format 4's lanes decode on the GPU for frames of at least
  // `gpu_lanes_from` bytes and on the host's threads below (a lane is a
  // sequential chain, whose length does not shrink with the frame:
  // kDeltaGpuLanesFrom, docs/benchmarks.md).
  static Status create(const ImageDesc& desc, StreamHandle stream,
                       std::unique_ptr<DeltaDecoderCuda>* out,
                       size_t gpu_lanes_from = kDeltaGpuLanesFrom);

 protected:
  Status reconstruct(bool keyframe, uint64_t* checksum) override;
  Status reconstruct_tiles(int quantiser, uint64_t* checksum) override;
  // Format 4: the lanes decode on the device (DeltaTileDecoderCuda), into
  // raw_dev_ (symbols) and modes_dev_, the modes also to modes_.
  Status decode_tiles(int quantiser, bool keyframe, const uint8_t* data, size_t size,
                      size_t coded, bool reuse_allowed) override;

 public:
  ~DeltaDecoderCuda() override;

 private:
  StreamHandle stream_ = nullptr;
  DeviceBuffer ref_mem_, raw_dev_, offsets_dev_, sum_dev_, modes_dev_;
  PinnedBuffer raw_host_, offsets_host_, sum_host_, modes_host_;
  size_t n_tiles_ = 0;
  // The reference before a frame with motion, and its vectors (pinned, then
  // device).
  DeviceBuffer prev_mem_, vectors_dev_;
  PinnedBuffer vectors_host_;
  // A keyframe's spatial predictors (pinned, then device).
  DeviceBuffer predictors_dev_;
  PinnedBuffer predictors_host_;
  ImageView prev_;
  bool checks_payload_beside(const DeltaPacketInfo& info) const override;

  std::unique_ptr<DeltaTileDecoderCuda> lanes_;  // null: lanes on the host
  bool tiles_on_device_ = false;                 // the last decode_tiles' were
};

}  // namespace cudafx
