// Gaussian blur: separable, any sigma, per plane.
//
// Semantics (identical on both backends, bit for bit):
//  - taps w[k] = exp(-k^2 / (2 sigma^2)), normalised to sum 1 over
//    k in [-r, r], computed in double and rounded to float;
//  - r = ceil(3 sigma) unless a kernel size (odd, 2r+1) is given;
//  - horizontal pass first, in float, kept unrounded; then the vertical
//    pass; the result rounded to the nearest byte (ties to even) and
//    saturated;
//  - out-of-image pixels from BorderMode (Constant: 0);
//  - every channel filtered, alpha included; planes of subsampled chroma use
//    sigma / 2^shift and a kernel size scaled the same way.
#pragma once

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

struct GaussianParams {
  double sigma_x = 1.0;
  double sigma_y = 0.0;     // 0: same as sigma_x
  int kernel_size_x = 0;    // 0: from sigma; else odd, 1..255
  int kernel_size_y = 0;    // 0: same rule as x with sigma_y
  BorderMode border = BorderMode::Replicate;
};

// Taps of one axis: w[0] is the centre, w[k] the weight at distance k.
struct GaussianTaps {
  int radius = 0;
  std::vector<float> w;
};

struct GaussianPlanePlan {
  PlaneLayout layout;
  int width = 0, height = 0;
  GaussianTaps x, y;
};

struct GaussianPlan {
  ImageDesc desc;
  BorderMode border = BorderMode::Replicate;
  int n_planes = 0;
  GaussianPlanePlan planes[kMaxPlanes];
};

// The taps of one axis for `sigma` (> 0) and `kernel_size` (0 or odd).
Status gaussian_taps(double sigma, int kernel_size, GaussianTaps* out);
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
