// Canny edges as cv::Canny (OpenCV 4.6) finds them, the same map on both
// backends:
//  - grey: plane 0 of GRAY8 and the YUV formats, or the BT.601 luma of
//    packed RGB (rgb_luma.hpp, cv::cvtColor's integer rule);
//  - dx, dy: Sobel of `aperture` 3, 5 or 7 (sobel_taps.hpp) with replicated
//    borders; for aperture 7 divided by 16 and rounded to the nearest
//    integer, ties to even (as OpenCV does, to stay in 16 bits), with the
//    thresholds divided by 16 too;
//  - magnitude m: |dx| + |dy|, or dx² + dy² with `l2` (the thresholds then
//    capped at 32767 and squared); thresholds floor()ed to integers, and
//    swapped when low > high (first);
//  - a pixel is a candidate when m > low and m is a maximum across the
//    gradient. With x = |dx|, y = |dy| * 2^15 and TG22 = 13573 (tan 22.5
//    degrees in 15-bit fixed point): y < x * TG22: horizontal, m > left and
//    m >= right; y > x * TG22 + x * 2^16: vertical, m > above and m >= below;
//    else diagonal with s = -1 when dx and dy have opposite signs (else 1):
//    m > above[x - s] and m > below[x + s]. Magnitudes outside the frame
//    are 0.
//  - strong: a candidate with m > high. Edges: every candidate 8-connected
//    to a strong one through candidates (the whole frame, any path): 255;
//    everything else 0.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cudafx/backend.hpp"
#include "cudafx/cuda_resources.hpp"
#include "cudafx/image.hpp"
#include "cudafx/status.hpp"

namespace cudafx {

struct CannyParams {
  double low = 50.0, high = 150.0;
  int aperture = 3;  // 3, 5 or 7
  bool l2 = false;
};

class CannyOp {
 public:
  // For Backend::Cuda the current CUDA context is the one the op runs in;
  // creation allocates the device scratch.
  static Status create(Backend backend, const ImageDesc& desc, const CannyParams& params,
                       std::unique_ptr<CannyOp>* out);
  ~CannyOp();
  Status set_params(const CannyParams& params);

  // Edges of `src` (a view of the op's desc) into `edges` (one plane of
  // width x height bytes, its pitch): 255 on an edge, else 0. CUDA: device
  // memory, queued on `stream` (no host synchronisation, except on a
  // device without cooperative launch, where the hysteresis reads a flag
  // back after each round). CPU: host memory, on return.
  Status submit(StreamHandle stream, const ImageView& src, const PlaneView& edges);
  // The same edges as an overlay for blend_overlay (overlay_blend.hpp):
  // `overlay` is width x height pixels of 4 bytes (channels 4), B, G, R, A
  // premultiplied: the colour `argb` (0xAARRGGBB) premultiplied by its
  // alpha on an edge, 0 (transparent) elsewhere.
  // Tests: runs the hysteresis a launch a round with the flag read back
  // in between, as devices without cooperative launch do.
  void force_host_rounds(bool on) { host_rounds_ = on; }

  Status submit_overlay(StreamHandle stream, const ImageView& src, const PlaneView& overlay,
                        uint32_t argb);

 private:
  CannyOp(Backend backend) : backend_(backend) {}
  // `colour`: null for 255/0 edges, else premultiplied B, G, R, A bytes
  // written on edges (4-byte pixels) and zeros elsewhere.
  Status run(StreamHandle stream, const ImageView& src, const PlaneView& out,
             const uint8_t* colour);
  Status submit_cpu(const ImageView& src, const PlaneView& out, const uint8_t* colour);
  Status prepare_cuda();
  Status submit_cuda(StreamHandle stream, const ImageView& src, const PlaneView& out,
                     const uint8_t* colour);

  Backend backend_;
  ImageDesc desc_;
  CannyParams params_;
  int low_ = 0, high_ = 0;  // the integer thresholds
  std::vector<uint8_t> host_scratch_;
  DeviceBuffer device_;
  PinnedBuffer flag_;       // CUDA, host rounds: "another round" read back
  int cooperative_blocks_ = 0;  // CUDA: the hysteresis grid; 0: host rounds
  bool host_rounds_ = false;
};

// The integer thresholds the rule compares magnitudes with.
void canny_thresholds(const CannyParams& p, int* low, int* high);

}  // namespace cudafx
