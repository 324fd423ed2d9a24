// The entropy stage of the delta codec's format 4 (docs/delta-format.md,
// "Version 4"): the tile modes and symbols of one frame (delta_tiles.hpp)
// coded with rANS under frequency tables made for that frame and sent with
// it, or, context by context, the previous frame's where they code this
// frame's values in fewer bits than a new table would cost (statistics
// change slowly; a table costs tens to hundreds of bytes, a small frame a
// few kilobytes). Nothing else carries over, and keyframes start afresh.
// The frame is cut into many independent lanes (runs of up to
// kDeltaLaneTiles tiles of one tile row), which code and decode in
// parallel: on CPU threads here, on the device in DeltaTileEntropyCuda
// (delta_tile_entropy_cuda.hpp: the CUDA encoder), which shares the host
// steps below and writes the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "cudafx/delta.hpp"
#include "cudafx/status.hpp"

namespace cudafx {

constexpr int kDeltaLaneTiles = 8;

// A lane: tiles tx0 .. tx0 + tiles - 1 of tile row ty of a plane.
struct DeltaLane {
  int plane = 0, ty = 0, tx0 = 0, tiles = 0;
  size_t first_tile = 0;  // number of its first tile among all
  size_t symbols = 0;     // bytes of its tiles
};
std::vector<DeltaLane> delta_lanes(const DeltaLayout& layout);
// The most (context, value) pairs a lane codes: its symbols, a mask a tile
// row and a mode a tile. Its stream takes at most 2 bytes a pair and 8 for
// the final states (rans.hpp), plus 8 of slack: delta_lane_room.
size_t delta_lane_most_pairs(const DeltaLane& lane);
inline size_t delta_lane_room(const DeltaLane& lane) { return 2 * delta_lane_most_pairs(lane) + 16; }

// How a coder codes value v of context c (entry c * 256 + v): a RansSymbol
// (delta/rans.hpp: the coding step's constants), 16 bytes, zero for values
// the frame's table lacks. The CPU coder and the GPU coder code from the
// same entries (DeltaTileEntropy::encode_tables).
struct alignas(16) DeltaCodingEntry {
  uint32_t words[4];
};

class DeltaTileEntropy {
 public:
  static Status create(const DeltaLayout& layout, std::unique_ptr<DeltaTileEntropy>* out);
  ~DeltaTileEntropy();

  // Forgets the tables of earlier frames: every keyframe (of either format)
  // does, on both sides; encode() and decode() do on a keyframe themselves.
  void reset();
  // Whether tables carry a scale shift (the packet's flag bit 7,
  // docs/delta-format.md): encode() writes and decode() reads them so. On
  // by default; a decoder sets it from each packet's header, so that
  // packets of either form decode.
  void set_scaled_tables(bool scaled);
  bool scaled_tables() const;
  // Appends the coded frame to *out: tables, lane directory, lane streams.
  // Every mode must be a DeltaTileMode (a keyframe's all spatial) and every
  // symbol of a coded tile below the range of `quantiser`.
  // With `reuse_tables` false every table is sent (intra refresh: a
  // decoder joining mid-stream has none of the previous frame's).
  Status encode(int quantiser, bool keyframe, const uint8_t* symbols, const uint8_t* modes,
                std::vector<uint8_t>* out, bool reuse_tables = true);
  // encode()'s first pass, the histograms, tile row by tile row, for a
  // tile pass that counts each row as soon as it is done, on the thread
  // that made it (delta_tiles_encode_cpu's row_done): count_frame() before
  // the tile pass, with what the frame's encode() will be given, then
  // count_row(tile_row, worker) once for each tile row (all planes' rows in
  // order), from any pool workers (`worker` as parallel_for gives it; no
  // two calls with the same worker at once). encode() with the same
  // quantiser, keyframe, symbols and modes then takes those counts; with
  // any other it counts the frame itself. count_row does nothing without a
  // count_frame since the last encode(), or for a row or worker out of
  // range.
  void count_frame(int quantiser, bool keyframe, const uint8_t* symbols, const uint8_t* modes);
  void count_row(int tile_row, int worker);
  // Decodes `size` bytes into modes and symbols (the symbols of skipped
  // tiles are left as they were). `coded` is the number of symbols the
  // packet header announces; the frame must code exactly that many.
  // Validates everything it reads and never reads or writes out of bounds.
  // With `reuse_allowed` false (a stream with intra refresh) a reused
  // table is an error.
  Status decode(int quantiser, bool keyframe, const uint8_t* data, size_t size, size_t coded,
                uint8_t* symbols, uint8_t* modes, bool reuse_allowed = true);

  const std::vector<DeltaLane>& lanes() const;

  // Two steps of encode(), for a coder that counts and codes the lanes
  // elsewhere (DeltaTileEntropyCuda):
  // - encode_tables: from the frame's counts of every (context, value)
  //   (kDeltaContexts x 256), checks the values, chooses the tables as
  //   encode() does (keyframe: none reused), appends them to *out and
  //   fills `coding` (kDeltaContexts x 256 entries, null: not wanted) with
  //   how each value is coded under them (the buffer of the last call again
  //   is only written where the tables changed: it must still hold what
  //   that call left); with `coding`, on the calling thread alone (encode()
  //   spreads the contexts over the CPU pool);
  // - append_lanes: the lane directory for streams of sizes[li] bytes (0:
  //   the lane is absent), to be followed by the streams in lane order.
  Status encode_tables(int quantiser, bool keyframe, const uint32_t* counts, bool reuse_tables,
                       std::vector<uint8_t>* out, DeltaCodingEntry* coding);
  void append_lanes(const uint32_t* sizes, std::vector<uint8_t>* out) const;

  // The host half of decode(), for a decoder that decodes the lanes
  // elsewhere (DeltaTileDecoderCuda): reads and checks the tables and the
  // lane directory of `size` bytes at `data` as decode() does, and gives
  // where each lane's stream lies: lane_begin[li] .. lane_begin[li + 1]
  // (equal: the lane is absent), n_lanes + 1 offsets into data.
  Status decode_tables(int quantiser, bool keyframe, const uint8_t* data, size_t size,
                       bool reuse_allowed, std::vector<size_t>* lane_begin);
  // The decoding table of context `ctx` after decode_tables: the value of
  // each of the kRansScale slots, and each value's span in the scale,
  // start | freq << 16 (alphabet entries). Returns the table's alphabet (0:
  // the context is unused; nothing written).
  int decoding_table(int ctx, uint8_t* slot_values, uint32_t* spans) const;

 private:
  DeltaTileEntropy() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudafx
