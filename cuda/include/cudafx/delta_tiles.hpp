// The prediction stage of the delta codec's format 4 (docs/delta-format.md,
// "Version 4"): for every tile a mode (skip, temporal or spatial) and for
// every byte of a coded tile a symbol, the folded quantised error of its
// prediction (delta_predict_math.hpp). The reference becomes the decoder's
// reconstruction as it is coded.
//
// Buffers: `symbols` holds frame_bytes symbols, planes and rows tight (as the
// frame itself); a skipped tile's symbols are 0. `modes` holds one
// DeltaTileMode a tile, all planes' tiles in order (DeltaLayout::first_tile).
#pragma once

#include <cstdint>
#include <functional>

#include "cudafx/cuda_resources.hpp"
#include "cudafx/delta.hpp"
#include "cudafx/delta_motion.hpp"
#include "cudafx/delta_predict_math.hpp"
#include "cudafx/image.hpp"
#include "cudafx/status.hpp"

namespace cudafx {

// Which tiles a frame must code spatially: all (a keyframe: there is no
// reference to predict from), or, with intra refresh, the tile rows of the
// band of `phase` in a sweep of `period` frames (delta_in_refresh_band).
// A keyframe's bytes are quantised behind a dead zone of
// `keyframe_dead_zone` (at most the bound; -1: the bound itself).
struct DeltaIntra {
  bool keyframe = false;
  int period = 0, phase = 0;  // period 0: no refresh
  int keyframe_dead_zone = -1;
  // The quantiser of a frame of error bound `bound` with this intra.
  DeltaEncoderQuantiser quantiser(int bound) const {
    return DeltaEncoderQuantiser(bound, keyframe && keyframe_dead_zone >= 0 ? keyframe_dead_zone
                                                                            : bound);
  }
};

// The tiles a frame of a stream with these settings codes spatially: all on
// a keyframe, else the refresh band of frame number `counter` (none without
// refresh); a keyframe's dead zone delta_keyframe_dead_zone, unless every
// frame is a keyframe.
inline DeltaIntra delta_intra_of(const DeltaEncodeSettings& s, bool keyframe, uint32_t counter) {
  DeltaIntra intra;
  intra.keyframe = keyframe;
  if (keyframe && !s.keyframes_only)
    intra.keyframe_dead_zone = delta_keyframe_dead_zone(s.threshold);
  if (s.refresh_period > 0) {
    intra.period = s.refresh_period;
    intra.phase = static_cast<int>(counter % static_cast<uint32_t>(s.refresh_period));
  }
  return intra;
}

// Encoder, CPU, for the error bound `bound`, 0..255 (DeltaEncoderQuantiser:
// the symbols are those of delta_quantiser_for(bound)). The tiles `intra` names
// are coded spatially; any other tile is skipped when all its bytes are
// within the bound of the reference, else coded both ways (spatially with
// the byte-to-byte chain of its own reconstruction) and the one with the
// smaller sum of delta_symbol_cost kept, temporal on a tie. With `motion`,
// a temporal tile may be moved (delta_motion.hpp: searched from
// motion->prev, its vector in motion->vectors, (0, 0) for every other
// tile); without, no tile is. `ref` is read, then overwritten with the
// reconstruction. With `predictors` (one a tile), a keyframe's tiles are
// each coded with every spatial predictor (delta_intra_predictor) and keep
// the one of the smallest sum of delta_symbol_cost (the lowest on a tie),
// recorded there for the packet's predictor section; without, and on any
// other frame, spatial tiles use predictor 0 (MED) and `predictors` is not
// written. Returns the number of symbols coded (the bytes of the tiles not
// skipped).
//
// With `rebuild`, the reconstruction goes to rebuild->out instead, `ref`
// left as it is (a skipped tile's bytes copied from it): the CPU encoder's
// two references, the one before the frame and the one it makes, which
// spares it a copy of the reference a frame for the motion search (the
// reference before the frame, which moved tiles read around them). Each
// band of a tile row then also gets, while its bytes are at hand, the
// margin beside its rows (and with the first and last band the rows above
// and below the plane: out must be a delta_margin_image) and its part of
// the checksum, rebuild->checksum being delta_checksum of out.
//
// With `row_done`, row_done(tile_row, worker) is called as each tile row's
// symbols and modes are final (tile_row counts all planes' rows in order,
// as delta_tile_row_shares; `worker` is the pool's, parallel_for's), on
// the thread that made them, while they are in its core's caches: the
// entropy coder's histogram pass (DeltaTileEntropy::count_row).
struct DeltaRebuild {
  ImageView out;
  uint64_t checksum = 0;  // set by the call
};
using DeltaRowDone = std::function<void(int tile_row, int worker)>;
size_t delta_tiles_encode_cpu(const DeltaLayout& layout, const ImageView& cur,
                              const ImageView& ref, int bound, const DeltaIntra& intra,
                              uint8_t* symbols, uint8_t* modes,
                              const DeltaMotionSearch* motion = nullptr,
                              uint8_t* predictors = nullptr, DeltaRebuild* rebuild = nullptr,
                              const DeltaRowDone& row_done = nullptr);

// The CPU's shares of a frame's tile rows (all planes' rows in order, the
// tile pass's jobs; parallel_for_shares), of about equal bytes: writes
// parallel_share_count() + 1 entries. The entropy coder's passes use the
// same, so a row's symbols are read by the thread that wrote them.
void delta_tile_row_shares(const DeltaLayout& layout, int* first);

// The number of symbols `modes` codes: the bytes of the tiles not skipped.
size_t delta_coded_symbols(const DeltaLayout& layout, const uint8_t* modes);

// Decoder, CPU: applies modes and symbols of quantiser `quantiser` (as
// delta_tiles_encode_* made them, or as the entropy stage decoded them:
// every symbol < the quantiser's range) to `ref`. With `moved`, a temporal
// tile whose vector is set predicts from moved->prev, the reference before
// this frame, moved (the caller keeps that copy: tiles are rebuilt in
// place). With `predictors` (a keyframe's predictor section, one a tile,
// each 0..7), a spatial tile uses its own; without, predictor 0 (MED).
struct DeltaMovedTiles {
  const DeltaVector* vectors;  // one a tile
  ImageView prev;
};
void delta_tiles_decode_cpu(const DeltaLayout& layout, const uint8_t* symbols,
                            const uint8_t* modes, int quantiser, const ImageView& ref,
                            const DeltaMovedTiles* moved = nullptr,
                            const uint8_t* predictors = nullptr);

// The same on a CUDA device, queued on `stream`: every buffer and view in
// device memory; the results equal the CPU's bit for bit. The count of coded
// symbols is not returned (the entropy stage counts them on the host). The
// motion search's images and vectors are in device memory too.
Status delta_tiles_encode_cuda(const DeltaLayout& layout, const ImageView& cur,
                               const ImageView& ref, int bound, const DeltaIntra& intra,
                               uint8_t* symbols, uint8_t* modes, StreamHandle stream,
                               const DeltaMotionSearch* motion = nullptr,
                               uint8_t* predictors = nullptr);
Status delta_tiles_decode_cuda(const DeltaLayout& layout, const uint8_t* symbols,
                               const uint8_t* modes, int quantiser, const ImageView& ref,
                               StreamHandle stream, const DeltaVector* vectors = nullptr,
                               const ImageView* prev = nullptr,
                               const uint8_t* predictors = nullptr);

}  // namespace cudafx
