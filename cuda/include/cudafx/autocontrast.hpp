// Auto-contrast, in place: the levels of a frame stretched so that its
// darkest and brightest pixels (past a clipped share of each end) become 0
// and 255. Both backends give the same bytes.
//
// Histograms (exact integer counts, N values each):
//  - packed RGB, per channel: one per colour channel (R, G, B each
//    stretched by its own levels: casts at the ends are removed too);
//  - packed RGB, luma: one of the pixels' BT.601 luma (rgb_luma.hpp), whose
//    levels stretch R, G and B alike (hue kept);
//  - I420, NV12, Y444, GRAY8: one of the luma plane, which alone is
//    stretched (chroma is no brightness scale).
// Levels of a histogram h, with k_lo = floor(N * clip_low / 100) and
// k_high = floor(N * clip_high / 100) (double, each operation rounded once):
//   low  = the smallest v with h[0] + ... + h[v] > k_lo,
//   high = the largest v with h[v] + ... + h[255] > k_high.
// Smoothing: the op keeps a (low, high) pair per histogram; each frame moves
// them by `weight` towards the frame's, s <- s + weight * (x - s) (double,
// in that order); weight 1, and the first frame after creation or reset(),
// takes the frame's. Table: with the kept levels lo, hi,
//   hi - lo >= 1: v -> clamp(floor((v - lo) * 255 / (hi - lo) + 0.5), 0, 255)
//   else (a flat frame, or clipping that crosses): v -> v.
// Every stretched byte goes through its table; alpha, padding and chroma
// bytes are kept.
#pragma once

#include <memory>

#include "cudafx/backend.hpp"
#include "cudafx/cuda_resources.hpp"
#include "cudafx/image.hpp"
#include "cudafx/status.hpp"

namespace cudafx {

struct AutoContrastParams {
  double clip_low = 0.5;   // percent of the values cut at the dark end
  double clip_high = 0.5;  // ... and at the bright end
  bool luma = false;       // packed RGB: levels from the luma (else per channel)
};

// Which bytes are histogrammed and stretched.
struct AutoContrastLayout {
  int histograms = 1;  // 3: R, G, B each (per channel); 1 otherwise
  int channels = 1;    // bytes a pixel of plane 0 (the only plane touched)
  int r = 0, g = -1, b = -1;  // bytes of R, G, B; g < 0: the plane's byte 0 only
  bool luma = false;  // histogram of the luma of r, g, b, applied to all three
};

Status autocontrast_layout(PixelFormat format, bool luma, AutoContrastLayout* out);

class AutoContrastOp {
 public:
  // For Backend::Cuda the current CUDA context is the one the op runs in;
  // creation allocates the device state, submit() allocates nothing.
  static Status create(Backend backend, const ImageDesc& desc,
                       std::unique_ptr<AutoContrastOp>* out);
  ~AutoContrastOp();

  // Stretches `frame` (a view of the op's desc) in place with `params`
  // (0 <= clip_low, clip_high and clip_low + clip_high < 100) and the
  // smoothing `weight` in (0, 1]. A change of params.luma restarts the
  // kept levels. CUDA: device memory, queued on `stream`; CPU: host memory,
  // done on return.
  Status submit(StreamHandle stream, const ImageView& frame, const AutoContrastParams& params,
                double weight);

  // Forgets the kept levels: the next frame is stretched by its own.
  void reset() { reset_ = true; }

  Backend backend() const { return backend_; }

 private:
  AutoContrastOp(Backend backend) : backend_(backend) {}
  Status submit_cpu(const ImageView& frame, const AutoContrastLayout& l,
                    const AutoContrastParams& params, double weight);
  Status prepare_cuda();
  Status submit_cuda(StreamHandle stream, const ImageView& frame, const AutoContrastLayout& l,
                     const AutoContrastParams& params, double weight);

  Backend backend_;
  ImageDesc desc_;
  bool reset_ = true;
  bool last_luma_ = false;
  double levels_[3][2] = {};  // CPU: the kept (low, high) of each histogram
  DeviceBuffer device_;       // CUDA: histograms, levels and tables
};

}  // namespace cudafx
