// Gaussian blur: separable, any sigma, per plane.
//
// Semantics (identical on both backends, bit for bit):
//  - taps w[k] = exp(-k^2 / (2 sigma^2)), normalised to sum 1 over
//    k in [-r, r], computed in double;
//  - r = ceil(3 sigma) unless a kernel size (odd, 2r+1) is given;
//  - out-of-image pixels from BorderMode (Constant: 0);
//  - every channel filtered, alpha included; planes of subsampled chroma use
//    sigma / 2^shift and a kernel size scaled the same way.
// Each plane's two axes run in one of two arithmetics (GaussianPlanePlan::
// fixed says which; GaussianParams::arithmetic may force one):
//  - fixed point (the default up to sigma 3): taps in 1/256 steps as
//    OpenCV's 8-bit GaussianBlur quantises them (from the outermost tap
//    inwards, 256 w[k] plus the rounding error carried from the tap before,
//    rounded half to even; the centre 256 - 2 sum q[k]; zero taps at the
//    ends dropped); the horizontal pass sums q * byte exactly (< 2^16), the
//    vertical pass sums q * that exactly (< 2^24), and the result is
//    (sum + 2^15) >> 16. Integer sums have no order, so both backends agree
//    by construction, and they equal cv::GaussianBlur's 8-bit path byte for
//    byte (tests). Auto takes it when both axes' quantised taps reach at most
//    kGaussianFixedAutoRadius from the centre (sigma up to 3: 3x3 ... 17x17)
//    and do not increase away from it. Wider kernels stay in float, which
//    follows the exact Gaussian: 1/256 taps are off it by an L1 distance of
//    0.5 % (sigma 0.5), 3 % (sigma 3), 9 % (sigma 10) and 31 % (sigma 42,
//    taps alternating 2/256 and 3/256).
//  - float: taps rounded to float; the horizontal pass first, in float, kept
//    unrounded; then the vertical pass (gaussian_symmetric_sum's sequence of
//    roundings); the result rounded to the nearest byte (ties to even) and
//    saturated.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cudafx/backend.hpp"
#include "cudafx/border.hpp"
#include "cudafx/cuda_resources.hpp"
#include "cudafx/image.hpp"
#include "cudafx/status.hpp"

namespace cudafx {

// Largest supported radius: 255 taps an axis.
constexpr int kGaussianMaxRadius = 127;

// Fixed point: 8 fractional bits a tap (as OpenCV's 8-bit path).
constexpr int kGaussianFixedBits = 8;
// Radius up to which Auto may choose fixed point, and the largest radius
// fixed point takes at all (when forced).
constexpr int kGaussianFixedAutoRadius = 8;
constexpr int kGaussianFixedMaxRadius = 8;

enum class GaussianArithmetic {
  Auto,   // fixed point where it keeps the kernel's shape, else float
  Fixed,  // fixed point (error if a radius exceeds kGaussianFixedMaxRadius)
  Float,  // float
};

struct GaussianParams {
  double sigma_x = 1.0;
  double sigma_y = 0.0;     // 0: same as sigma_x
  int kernel_size_x = 0;    // 0: from sigma; else odd, 1..255
  int kernel_size_y = 0;    // 0: same rule as x with sigma_y
  BorderMode border = BorderMode::Replicate;
  GaussianArithmetic arithmetic = GaussianArithmetic::Auto;
};

// Taps of one axis: w[0] is the centre, w[k] the weight at distance k.
struct GaussianTaps {
  int radius = 0;
  std::vector<float> w;
  // Fixed point: q[0] the centre, q[k] at distance k, in 1/256 (sum over
  // [-q_radius, q_radius] exactly 256); q_radius <= radius (zero taps at
  // the ends dropped).
  int q_radius = 0;
  std::vector<uint16_t> q;
};

struct GaussianPlanePlan {
  PlaneLayout layout;
  int width = 0, height = 0;
  GaussianTaps x, y;
  bool fixed = false;  // both axes in fixed point (q, q_radius), else float (w, radius)
};

struct GaussianPlan {
  ImageDesc desc;
  BorderMode border = BorderMode::Replicate;
  int n_planes = 0;
  GaussianPlanePlan planes[kMaxPlanes];
};

// The taps of one axis for `sigma` (> 0) and `kernel_size` (0 or odd),
// float and fixed point.
Status gaussian_taps(double sigma, int kernel_size, GaussianTaps* out);
// Whether the fixed-point taps keep the kernel's shape: none larger than the
// one nearer the centre.
bool gaussian_fixed_keeps_shape(const GaussianTaps& t);
// Validates the parameters for the image and computes every plane's taps.
Status plan_gaussian(const ImageDesc& desc, const GaussianParams& params, GaussianPlan* out);

// The op: built once for a format and size, then submitted per frame.
class GaussianOp {
 public:
  // For Backend::Cuda the current CUDA context is the one the op will run in;
  // creation allocates all device scratch, submit() allocates nothing.
  static Status create(Backend backend, const ImageDesc& desc, const GaussianParams& params,
                       std::unique_ptr<GaussianOp>* out);
  ~GaussianOp();

  // New parameters for the same image (e.g. sigma changed while playing).
  // Allocates only if the new plan needs more scratch than the old one.
  Status set_params(const GaussianParams& params);

  // Filters src into dst (both views of the op's desc; they must not
  // overlap). CUDA: device pointers; queued on `stream`, returns without
  // waiting. CPU: host pointers; `stream` ignored; runs to completion.
  Status submit(StreamHandle stream, const ImageView& src, const ImageView& dst);

  Backend backend() const { return backend_; }
  const GaussianPlan& plan() const { return plan_; }

 private:
  GaussianOp(Backend backend) : backend_(backend) {}
  Status prepare_scratch();

  Backend backend_;
  GaussianPlan plan_;
  DeviceBuffer device_scratch_;           // CUDA: float intermediate for wide kernels
  std::vector<float> host_scratch_;       // CPU: per-worker rings of filtered rows
};

// The backends, for the op and for tests that call them directly.
Status gaussian_cpu(const GaussianPlan& plan, const ImageView& src, const ImageView& dst,
                    std::vector<float>& scratch);
size_t gaussian_cpu_scratch_floats(const GaussianPlan& plan);
Status gaussian_cuda(const GaussianPlan& plan, const ImageView& src, const ImageView& dst,
                     void* scratch, size_t scratch_bytes, StreamHandle stream);
size_t gaussian_cuda_scratch_bytes(const GaussianPlan& plan);

}  // namespace cudafx
