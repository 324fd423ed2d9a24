// Format 4's entropy stage on a CUDA device (the CUDA encoder's): the bytes
// DeltaTileEntropy::encode writes, from modes and symbols that the
// prediction stage left in device memory, so that only the coded frame
// crosses the bus instead of every symbol. Per frame:
//  1. a kernel walks the lanes (a warp a lane, a tile row a step: the row's
//     mask by a ballot, its symbols placed by prefix counts) into each
//     lane's sequence of (context, value) pairs and the frame's histogram;
//  2. the histogram goes to the host, where DeltaTileEntropy::encode_tables
//     chooses and writes the tables (and keeps them for the next frame's
//     reuse); each value's place in the scale goes back up;
//  3. a kernel codes every lane (a thread a lane: a lane is one rANS
//     stream, sequential by nature) backwards into its room, with the host's
//     rANS arithmetic (rans.hpp), its bytes stored a word at a time;
//  4. the stream sizes are summed into their places on the device, a kernel
//     packs the streams one after another and another writes them to pinned
//     memory (into the packet after the wait, or left there for the caller:
//     DeltaPacketParts); the sizes come down for the lane directory.
// Two waits on the stream a frame (after 1 and 4); the first is the
// caller's when it splits encode() into count() and code() (the CUDA encoder
// does, to bring its modes and checksum back in the same wait).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "cudafx/cuda_resources.hpp"
#include "cudafx/delta.hpp"
#include "cudafx/delta_predict_math.hpp"
#include "cudafx/delta_tile_entropy.hpp"
#include "cudafx/status.hpp"

namespace cudafx {

class DeltaTileEntropyCuda {
 public:
  // In the CUDA context current at creation; allocates everything here.
  // The pinned buffer the coded frame comes down to starts at a quarter of
  // a frame's bytes, or `host_capacity` (tests), and grows to the largest
  // frame.
  static Status create(const DeltaLayout& layout, std::unique_ptr<DeltaTileEntropyCuda>* out,
                       size_t host_capacity = 0);
  ~DeltaTileEntropyCuda();

  // As DeltaTileEntropy: forgets the previous frame's tables.
  void reset();
  // As DeltaTileEntropy::encode, with `symbols` (frame_bytes) and `modes`
  // (tile_count()) in device memory, queued on `stream` after the work that
  // wrote them; returns when the coded frame is in *out.
  Status encode(int quantiser, bool keyframe, const uint8_t* symbols, const uint8_t* modes,
                StreamHandle stream, std::vector<uint8_t>* out, bool reuse_tables = true);
  // encode() in two: count() queues step 1 (no wait); code(), called once
  // the stream has reached it (the caller has waited), does the rest for
  // the same quantiser and keyframe. Step 1's results (pairs, histogram)
  // go to one of kSlots places, `slot`, so that one frame can be counted
  // while the last is coded (the CUDA encoder's submit(): code() for slot
  // 0 on one stream beside count() for slot 1 on another); slot 1's are
  // allocated at its first use.
  static constexpr int kSlots = 2;
  Status count(int quantiser, bool keyframe, const uint8_t* symbols, const uint8_t* modes,
               StreamHandle stream, int slot = 0);
  // `lanes_crc`, when given, receives the CRC-32 of the lanes it appends
  // (worked out on the device in 64 KB pieces, joined on the host), for
  // the packet's payload CRC. With `lanes_apart` (and lanes_crc) the lanes
  // are not appended but left in pinned memory, lanes_crc->apart pointing
  // at them until the next code().
  Status code(int quantiser, bool keyframe, StreamHandle stream, std::vector<uint8_t>* out,
              bool reuse_tables = true, DeltaPayloadTail* lanes_crc = nullptr,
              bool lanes_apart = false, int slot = 0);
  // Waits for the work queued on `stream` so far, the host thread sleeping
  // rather than spinning (the coder's own waits are these): the encoder's
  // host time a frame is then its own work, not the GPU's.
  Status wait(StreamHandle stream);

 private:
  DeltaTileEntropyCuda() = default;
  DeltaLayout layout_;
  std::unique_ptr<DeltaTileEntropy> host_;  // the tables and their reuse
  // Step 1's results for one frame, and what count() queued them for.
  struct Counted {
    DeviceBuffer pairs, pair_count, histogram;
    PinnedBuffer histogram_host;
    int quantiser = -1;
    bool keyframe = false;
  };
  Status allocate(Counted* c) const;
  Status queue_coding(int slot, bool crc, StreamHandle stream);
  // count()'s and code()'s calls on the device as CUDA graphs (their calls
  // queued one by one had cost ~40 us of a 2160p frame's host time), by
  // what their arguments depend on: count by slot, quantiser range,
  // keyframe and the symbols and modes read; code by slot, CRC or not and
  // the pinned room it writes (which grows).
  using CountKey = std::array<uintptr_t, 5>;
  using CodingKey = std::array<uintptr_t, 4>;
  CudaGraphCache<CountKey, 8> count_graphs_;
  CudaGraphCache<CodingKey, 4> coding_graphs_;

  size_t n_lanes_ = 0, n_pairs_ = 0;
  CudaEvent reached_;
  Counted counted_[kSlots];
  DeviceBuffer lanes_dev_, coding_dev_, room_dev_, sizes_dev_, offsets_dev_, packed_dev_,
      piece_crc_dev_;
  PinnedBuffer coding_host_, sizes_host_, total_host_, packed_host_, piece_crc_host_;
};

// Format 4's lanes decoded on a CUDA device (the CUDA decoder's): the host
// reads and checks the tables and the lane directory with the stream's own
// DeltaTileEntropy (DeltaTileEntropy::decode_tables: the same checks and
// reuse state as the CPU decoder), the coded lanes and the decoding tables
// go up, a thread a lane decodes into symbols and modes in device memory,
// and the verdict comes back: the CPU decoder's checks, the same messages
// (where several lanes are damaged, the lowest is named).
//
// The kernel's time is one lane's chain of dependent steps (a lane is one
// rANS stream; about 4 000 lanes at 2160p RGBA, a warp an SM), so every
// step's inputs are kept near: the decoding tables (110 KB a frame) in each
// block's shared memory where the device allows so much (sm_80 and sm_90;
// otherwise they are read through the cache), a tile row's bytes in
// registers and the row above in shared memory, the lane's coded bytes
// read ahead a word at a time.
class DeltaTileDecoderCuda {
 public:
  // In the CUDA context current at creation. `tables_in_global_memory`
  // (tests) reads the decoding tables from global memory as devices with too
  // little shared memory do.
  static Status create(const DeltaLayout& layout, std::unique_ptr<DeltaTileDecoderCuda>* out,
                       bool tables_in_global_memory = false);
  ~DeltaTileDecoderCuda();
  // As DeltaTileEntropy::decode with `tables`' tables, into `symbols`
  // (frame_bytes) and `modes` (tile_count()) in device memory, the modes
  // also into `modes_host` (pinned); queued on `stream` and waited for.
  Status decode(DeltaTileEntropy& tables, int quantiser, bool keyframe, const uint8_t* data,
                size_t size, size_t coded, uint8_t* symbols, uint8_t* modes,
                uint8_t* modes_host, StreamHandle stream, bool reuse_allowed);

 private:
  DeltaTileDecoderCuda() = default;
  DeltaLayout layout_;
  size_t n_lanes_ = 0;
  bool shared_tables_ = false;
  std::vector<size_t> lane_begin_;
  DeviceBuffer lanes_dev_, begin_dev_, tables_dev_, data_dev_, verdict_dev_;
  PinnedBuffer begin_host_, tables_host_, data_host_, verdict_host_;
  CudaEvent reached_;
};

// -- the kernels (delta_tile_entropy_cuda.cu) --

// A lane as the kernels see it (delta_lanes, delta_lane_room).
struct DeltaLaneDevice {
  uint32_t plane, ty, tx0, tiles;
  uint32_t first_tile;
  uint32_t pairs_offset;  // where its pairs go in the pair buffer
  uint64_t room_end;      // its stream is written backwards from here
};

// Step 1: pairs, their count a lane (0: absent), the histogram (added to,
// kDeltaContexts x 256; the caller zeroes it).
Status delta_lanes_count_cuda(const DeltaLayout& layout, const DeltaLaneDevice* lanes,
                              size_t n_lanes, const uint8_t* symbols, const uint8_t* modes,
                              bool keyframe, int range, uint16_t* pairs, uint32_t* pair_count,
                              uint32_t* histogram, StreamHandle stream);
// Step 3: each present lane's stream at the end of its room, its size (0:
// absent).
Status delta_lanes_code_cuda(const DeltaLaneDevice* lanes, size_t n_lanes, const uint16_t* pairs,
                             const uint32_t* pair_count, const DeltaCodingEntry* coding,
                             uint8_t* room, uint32_t* sizes, StreamHandle stream);
// The decoding tables as the decoder's kernel reads them: per context the
// value of each of the 4 096 slots of the scale (DeltaTileEntropy::
// decoding_table), then per context its 256 spans (start | freq << 16;
// an unused context's: kDeltaAbsentSpan).
constexpr size_t kDeltaLaneSlotBytes = size_t(kDeltaContexts) * 4096;
constexpr size_t kDeltaLaneTableBytes = kDeltaLaneSlotBytes + size_t(kDeltaContexts) * 256 * 4;
constexpr uint32_t kDeltaAbsentSpan = 0x80000000u;
// Whether the decoder's kernel can keep the tables in shared memory on the
// current device (and has been allowed to).
bool delta_lanes_decode_shared_tables_fit();
// The decoder's kernel: lane li's stream is data[lane_begin[li] ..
// lane_begin[li + 1]) (equal: absent, its tiles skipped), `data` readable
// 64 bytes past the last lane's end; `tables` the image above in device
// memory. verdict[0] receives the lowest damaged lane (left as it was when
// none), verdict[2] and [3] the symbols decoded (a 64-bit count, added to;
// verdict 8-byte aligned).
Status delta_lanes_decode_cuda(const DeltaLayout& layout, const DeltaLaneDevice* lanes,
                               size_t n_lanes, const uint32_t* lane_begin, const uint8_t* data,
                               const uint8_t* tables, bool shared_tables, bool keyframe, int range,
                               uint8_t* symbols, uint8_t* modes, uint32_t* verdict,
                               StreamHandle stream);
// Step 4: where each lane's stream goes in the packed frame (offsets[li],
// the sizes before it summed) and the total (offsets[n_lanes]); n_lanes + 1
// entries. One block: a few microseconds.
Status delta_lanes_offsets_cuda(const uint32_t* sizes, size_t n_lanes, uint32_t* offsets,
                                StreamHandle stream);
// Step 5: the streams one after another, lane li's at offsets[li], into
// `packed` (device memory), and the first min(total, host_capacity) bytes
// into `host` (pinned memory, written by a kernel: the host does not know
// the total before it waits, so no copy could be queued for it). Both
// 16-byte aligned.
Status delta_lanes_pack_cuda(const DeltaLaneDevice* lanes, size_t n_lanes, const uint8_t* room,
                             const uint32_t* sizes, const uint32_t* offsets, uint8_t* packed,
                             uint8_t* host, size_t host_capacity, StreamHandle stream);
// The CRC-32 (zlib's) of each kDeltaCrcPieceBytes piece of the *size bytes
// (device memory, at most max_size) at `data` (device memory; the last
// piece may be shorter), into crcs (room for max_size's pieces). Pieces
// are large so that the host joins few (a 1.5 MB frame: 24; at 4 KB the
// 380 crc32_combine calls had cost ~20 us of a 2160p frame's host time).
constexpr size_t kDeltaCrcPieceBytes = 65536;
Status delta_crc_pieces_cuda(const uint8_t* data, const uint32_t* size, size_t max_size,
                             uint32_t* crcs, StreamHandle stream);

}  // namespace cudafx
