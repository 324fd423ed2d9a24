// Resize (scaling): nearest, bilinear and bicubic, any output size, per plane.
//
// Semantics (identical on both backends, bit for bit):
//  - Nearest: OpenCV's INTER_NEAREST rule, per plane: output sample x takes
//    source sample min(floor(x * src / dst), src - 1) (the product in double,
//    as OpenCV computes it). Exact copies of source bytes.
//  - Bilinear and bicubic: pixel centres aligned, as cv::resize does: output
//    sample x sits at source coordinate u = (x + 0.5) * src / dst - 0.5.
//    Bilinear taps (1 - f, f) at floor(u) and floor(u) + 1, u clamped into
//    the image at both ends (as OpenCV does). Bicubic: Keys' cubic with
//    a = -0.75 (OpenCV's INTER_CUBIC; Catmull-Rom would be a = -0.5), taps at
//    floor(u) - 1 .. floor(u) + 2, out-of-image taps replicate the edge.
//  - Fixed point, as OpenCV's 8-bit paths: weights quantised to 11 bits
//    (summing to exactly 2048 an axis), the horizontal pass exact in int32,
//    the vertical pass exact in int32, then (v + 2^21) >> 22 saturated to a
//    byte. Integer arithmetic is exact, so CPU and GPU agree bit for bit.
//  - Downscaling samples the same way (no low-pass prefilter), as cv::resize
//    with these methods does.
//  - Subsampled chroma planes (I420, NV12) keep their siting: a chroma sample
//    of a plane subsampled by 2 sits at luma coordinate 2i + 0.5 (centred,
//    GStreamer's "jpeg" siting) or 2i (co-sited, "mpeg2" horizontally); the
//    source coordinate is computed in luma units with the luma scale, so a
//    chroma sample lands where the luma samples around it land. For centred
//    siting and even sizes this equals cv::resize on the plane.
//    Nearest uses each plane's own sizes.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cudafx/backend.hpp"
#include "cudafx/cuda_resources.hpp"
#include "cudafx/image.hpp"
#include "cudafx/status.hpp"

namespace cudafx {

enum class ResizeMethod { Nearest, Bilinear, Bicubic };

// Largest side, in and out.
constexpr int kResizeMaxSize = 32768;
// Bits of the fixed-point weights (OpenCV's INTER_RESIZE_COEF_BITS).
constexpr int kResizeCoefBits = 11;
constexpr int kResizeMaxTaps = 4;
// Longest period (output samples) of a periodic axis (ResizeAxis::period).
constexpr int kResizeMaxPeriod = 4;

struct ResizeParams {
  ResizeMethod method = ResizeMethod::Bilinear;
  // Siting of subsampled chroma samples: co-sited with the first luma sample
  // of their group (true) or centred between them (false).
  bool chroma_cosited_h = false;
  bool chroma_cosited_v = false;
};

// One output sample's taps on one axis: source samples clamp(base + k) for
// k < taps, with weights w[k] summing to 2^kResizeCoefBits. Nearest: one tap,
// base the source sample. When the source has at least `taps` samples the
// window lies inside it (0 <= base <= src - taps): taps that would fall
// outside are folded into the edge sample's weight.
struct ResizeTap {
  int32_t base;
  int16_t w[kResizeMaxTaps];
};

struct ResizeAxis {
  int taps = 1;
  int src_size = 0;            // samples on this axis of the source plane
  std::vector<ResizeTap> tap;  // one per output sample
  // Each sample's base is its predecessor's or one more (an upscale on this
  // axis): a kernel walking the axis needs at most one new source sample a
  // step.
  bool steps_by_one = false;
  // N (2 or 4) when the axis is an upscale by exactly N whose taps follow a
  // formula, so that a kernel may use the formula instead of the taps (the
  // CUDA backend does, for 4-byte pixels). The planner sets it only when
  // every sample's taps equal the formula's:
  //  - nearest: output sample i takes source sample i / N;
  //  - bilinear: output sample i blends source samples r - 1 and r (each
  //    clamped into the source), r = (i + N/2) / N, with weights
  //    (2N - 2j - 1) and (2j + 1) times 2^11 / 2N, j = (i + N/2) % N.
  // 0 otherwise.
  int exact_up = 0;
  // Q > 0 when the tap windows repeat with a period: the scale is Q / P
  // (lowest terms, Q and P at most kResizeMaxPeriod) and every output sample
  // Q m + j takes its weight from source samples
  // clamp(P m + resize_periodic_base(taps, Q, P, j) + k), k < taps, only
  // (resize_math.hpp), so that a kernel may place every window by the period
  // instead of the tables (the CUDA backend does for bilinear and bicubic
  // 4-byte pixels: 1.5x, 2x, 3x, 4x, 1/2x ...). period_tap holds each
  // sample's weights on that window (base: the window's start, unclamped).
  // When every sample of phase j has the same weights (scales whose
  // coordinates are exact in binary: 2x, 4x, 1/2x) period_fixed is set and
  // they are period_w[j]; at 1.5x and 3x cv::resize's float coordinates make
  // some weights differ by one from one period to the next. 0 otherwise.
  int period = 0;
  int period_step = 0;  // P
  bool period_fixed = false;
  int16_t period_w[kResizeMaxPeriod][kResizeMaxTaps] = {};
  std::vector<ResizeTap> period_tap;
};

struct ResizePlanePlan {
  PlaneLayout layout;
  int src_width = 0, src_height = 0, dst_width = 0, dst_height = 0;
  ResizeAxis x, y;
};

struct ResizePlan {
  ImageDesc src, dst;
  ResizeParams params;
  int n_planes = 0;
  ResizePlanePlan planes[kMaxPlanes];
};

const char* resize_method_name(ResizeMethod m);

// Validates the request (same format both sides, sizes in range) and
// computes every plane's taps.
Status plan_resize(const ImageDesc& src, const ImageDesc& dst, const ResizeParams& params,
                   ResizePlan* out);

// The device copy of a plan's taps, per plane. The allocation ends with
// kResizeTapsAhead spare taps, which the kernels may read but never use.
constexpr int kResizeTapsAhead = 1;
struct ResizeDeviceTaps {
  const ResizeTap* x[kMaxPlanes] = {nullptr, nullptr, nullptr};
  const ResizeTap* y[kMaxPlanes] = {nullptr, nullptr, nullptr};
  // The axes' period_tap, where they have a period.
  const ResizeTap* period_x[kMaxPlanes] = {nullptr, nullptr, nullptr};
  const ResizeTap* period_y[kMaxPlanes] = {nullptr, nullptr, nullptr};
};

// What the CUDA launches need to know of the device, asked once when the op
// is built: its SMs, and how many blocks of each plane's kernel fit on one
// (by the source's alignment: the 4-byte-load variant or not).
struct ResizeLaunch {
  int sms = 0;
  int blocks_per_sm[kMaxPlanes][2] = {};
};

// The op: built once for a pair of formats and sizes, then submitted per
// frame.
class ResizeOp {
 public:
  // For Backend::Cuda the current CUDA context is the one the op will run in;
  // creation uploads the taps and allocates everything, submit() nothing.
  static Status create(Backend backend, const ImageDesc& src, const ImageDesc& dst,
                       const ResizeParams& params, std::unique_ptr<ResizeOp>* out);
  ~ResizeOp();

  // Scales src (a view of the plan's src desc) into dst (of its dst desc);
  // they must not overlap. CUDA: device pointers, queued on `stream`,
  // returns without waiting. CPU: host pointers, runs to completion.
  Status submit(StreamHandle stream, const ImageView& src, const ImageView& dst);

  Backend backend() const { return backend_; }
  const ResizePlan& plan() const { return plan_; }

 private:
  explicit ResizeOp(Backend backend) : backend_(backend) {}

  Backend backend_;
  ResizePlan plan_;
  DeviceBuffer device_taps_;
  ResizeDeviceTaps taps_;
  ResizeLaunch launch_;
  std::vector<int32_t> host_scratch_;  // CPU: per-worker rings of horizontal rows
};

// The backends, for the op and for tests that call them directly.
size_t resize_cpu_scratch_ints(const ResizePlan& plan);
Status resize_cpu(const ResizePlan& plan, const ImageView& src, const ImageView& dst,
                  std::vector<int32_t>& scratch);
// In the CUDA context the op runs in.
Status resize_cuda_prepare(const ResizePlan& plan, ResizeLaunch* launch);
Status resize_cuda(const ResizePlan& plan, const ResizeDeviceTaps& taps,
                   const ResizeLaunch& launch, const ImageView& src, const ImageView& dst,
                   StreamHandle stream);

}  // namespace cudafx
