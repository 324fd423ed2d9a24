// Grey-world white balance, in place: the assumption that a scene averages
// to grey, made true of each frame (or of a smoothed average over frames).
// The seed's rule (shared/seeds/001, "Greyworld"), with exact statistics and
// rounding that both backends share bit for bit.
//
// Statistics: the mean of each balanced channel over the whole frame, from
// exact integer sums (sum / count in double, correctly rounded). Smoothing:
// the op keeps a mean per channel; each frame moves it by `weight` towards
// the frame's own, s <- s + weight * (m - s) (in double, each operation
// rounded once, in that order); weight 1, and the first frame after
// creation or reset(), takes the frame's means.
//
// Packed RGB formats (RGBA, BGRA, RGBx, BGRx, ARGB, ABGR, RGB, BGR): the
// three colour channels, with the smoothed means mR, mG, mB:
//   grey = (mR + mG + mB) / 3
//   a channel with mean m > 0.05:   v -> min(255, floor(v * (grey / m) + 0.5))
//   a channel with mean m <= 0.05 (next to no light in it: a gain would be
//   huge and amplify noise): v -> min(255, v + floor(grey + 0.5))
// Alpha and padding bytes are kept.
// YUV formats (I420, NV12, Y444): grey means neutral chroma, U and V
// averaging 128; each chroma channel is shifted by its offset from neutral,
// v -> clamp(v + floor(128 - m + 0.5), 0, 255); luma is kept (the frame's
// brightness is not the grey world's business).
// GRAY8 has no colour: not supported.
//
// Both backends compute the per-channel tables of these 256 values once a
// frame with the same double operations (greyworld_math.hpp) and apply them
// to every byte; the CUDA backend does it on the device, without a host
// round trip: sums, a one-block kernel for the means and tables (its state
// stays on the device), then the table lookup.
#pragma once

#include <memory>

#include "cudafx/backend.hpp"
#include "cudafx/cuda_resources.hpp"
#include "cudafx/image.hpp"
#include "cudafx/status.hpp"

namespace cudafx {

// Where a format's balanced channels are: channel i is byte `offset` of the
// `channels`-byte pixels of plane `plane`.
struct GreyWorldChannel {
  int plane = 0, channels = 1, offset = 0;
};
struct GreyWorldLayout {
  bool rgb = false;  // the RGB rule (else the chroma rule)
  int count = 0;     // 3 (RGB) or 2 (U, V)
  GreyWorldChannel ch[3];
};

// The layout of `format`; InvalidArgument for GRAY8.
Status greyworld_layout(PixelFormat format, GreyWorldLayout* out);

class GreyWorldOp {
 public:
  // For Backend::Cuda the current CUDA context is the one the op runs in;
  // creation allocates the device state, submit() allocates nothing.
  static Status create(Backend backend, const ImageDesc& desc, std::unique_ptr<GreyWorldOp>* out);
  ~GreyWorldOp();

  // Balances `frame` (a view of the op's desc) in place. `weight` in (0, 1]:
  // how far the smoothed means move towards this frame's. CUDA: device
  // memory, queued on `stream`; CPU: host memory, done on return.
  Status submit(StreamHandle stream, const ImageView& frame, double weight);

  // Forgets the smoothed means: the next frame is balanced by its own.
  void reset() { reset_ = true; }

  const GreyWorldLayout& layout() const { return layout_; }
  Backend backend() const { return backend_; }

 private:
  GreyWorldOp(Backend backend) : backend_(backend) {}
  Status submit_cpu(const ImageView& frame, double weight);
  Status prepare_cuda();
  Status submit_cuda(StreamHandle stream, const ImageView& frame, double weight);

  Backend backend_;
  ImageDesc desc_;
  GreyWorldLayout layout_;
  bool reset_ = true;
  double means_[3] = {0, 0, 0};  // CPU: the smoothed means
  DeviceBuffer device_;          // CUDA: sums, state and tables (greyworld_cuda.cu)
};

}  // namespace cudafx
