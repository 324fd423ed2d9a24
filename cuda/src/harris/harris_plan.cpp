// Validation and planning of the Harris op: everything decided once per
// format, size and parameter set.
#include <cmath>
#include <string>

#include "cudafx/harris.hpp"
#include "cudafx/rgb_luma.hpp"
#include "cudafx/sobel_taps.hpp"

namespace cudafx {
namespace {

// Sobel taps of size 3, 5, 7 (sobel_taps.hpp) and the binomial window taps
// (the smoothing taps again), as tables indexed [(size - 3) / 2][tap].
static_assert(kSobelMaxTaps <= kHarrisMaxTaps, "Harris plans hold Sobel taps");
struct SobelTable {
  int t[3][kSobelMaxTaps];
  explicit SobelTable(bool derivative) : t{} {
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 2 * i + 3; k++)
        t[i][k] = sobel_tap(i + 1, k, derivative);
  }
  const int* operator[](int i) const { return t[i]; }
};
const SobelTable kDeriv(true), kSmooth(false);

bool is_size(int v) { return v == 3 || v == 5 || v == 7; }

std::string num(float v) {
  std::string s = std::to_string(v);
  while (s.size() > 1 && s.back() == '0' && s[s.size() - 2] != '.')
    s.pop_back();
  return s;
}

HarrisLuma luma_of(PixelFormat f) {
  RgbBytes rgb;
  if (!rgb_bytes(f, &rgb))
    return {1, -1, -1, -1};  // GRAY8 and the Y plane of YUV formats
  return {rgb.channels, rgb.r, rgb.g, rgb.b};
}

}  // namespace

long long harris_max_derivative(int g) {
  const int i = (g - 3) / 2;
  long long pos = 0, smooth = 0;
  for (int t = 0; t < g; t++) {
    pos += kDeriv[i][t] > 0 ? kDeriv[i][t] : 0;
    smooth += kSmooth[i][t];
  }
  return 255 * pos * smooth;
}

long long harris_max_gradient_sq(int g) {
  // Enumerated over the 2^9 and 2^25 black/white patterns (the test suite
  // repeats the enumeration); for 7 the bound 2 * max|Ix|^2.
  switch (g) {
    case 3:
      return 1300500;
    case 5:
      return 170885700;
    default: {
      const long long d = harris_max_derivative(g);
      return 2 * d * d;
    }
  }
}

Status plan_harris(const ImageDesc& desc, const HarrisParams& p, HarrisPlan* out) {
  if (desc.width <= 0 || desc.height <= 0)
    return Status::invalid("image size must be positive, got " + std::to_string(desc.width) +
                           "x" + std::to_string(desc.height));
  if (desc.width > kHarrisMaxSide || desc.height > kHarrisMaxSide)
    return Status::invalid("harris: image " + std::to_string(desc.width) + "x" +
                           std::to_string(desc.height) + " is larger than " +
                           std::to_string(kHarrisMaxSide) + " pixels on a side");
  if (!is_size(p.gradient_size))
    return Status::invalid("gradient-size must be 3, 5 or 7 (the Sobel aperture), got " +
                           std::to_string(p.gradient_size));
  if (!is_size(p.block_size))
    return Status::invalid("block-size must be 3, 5 or 7 (the window), got " +
                           std::to_string(p.block_size));
  if (p.window != HarrisWindow::Box && p.window != HarrisWindow::Gaussian)
    return Status::invalid("window must be box or gaussian");
  if (p.border != BorderMode::Replicate && p.border != BorderMode::Reflect101 &&
      p.border != BorderMode::Constant)
    return Status::invalid("border must be replicate, reflect-101 or constant");
  if (!(p.k >= 0.0f && p.k <= 0.25f))
    return Status::invalid("k must be between 0 and 0.25 (usually 0.04 to 0.06), got " + num(p.k));
  if (p.threshold_mode == HarrisThresholdMode::Relative) {
    if (!(p.threshold >= 0.0f && p.threshold <= 1.0f))
      return Status::invalid(
          "a relative threshold is a fraction of the frame's strongest response, between 0 and "
          "1, got " + num(p.threshold));
  } else if (p.threshold_mode == HarrisThresholdMode::Absolute) {
    if (!(p.threshold >= 0.0f) || !std::isfinite(p.threshold))
      return Status::invalid("an absolute threshold must be a finite response >= 0, got " +
                             num(p.threshold));
  } else {
    return Status::invalid("threshold-mode must be absolute or relative");
  }
  if (p.min_distance < 0 || p.min_distance > kHarrisMaxMinDistance)
    return Status::invalid("min-distance must be between 0 and " +
                           std::to_string(kHarrisMaxMinDistance) + " pixels, got " +
                           std::to_string(p.min_distance));
  if (p.max_corners < 1 || p.max_corners > kHarrisMaxCorners)
    return Status::invalid("max-corners must be between 1 and " +
                           std::to_string(kHarrisMaxCorners) + ", got " +
                           std::to_string(p.max_corners));

  HarrisPlan plan;
  plan.desc = desc;
  plan.params = p;
  plan.luma = luma_of(desc.format);
  plan.grad_radius = (p.gradient_size - 1) / 2;
  plan.block_radius = (p.block_size - 1) / 2;
  const int gi = (p.gradient_size - 3) / 2, bi = (p.block_size - 3) / 2;
  long long window_sum_1d = 0;
  for (int t = 0; t < p.gradient_size; t++) {
    plan.deriv[t] = kDeriv[gi][t];
    plan.smooth[t] = kSmooth[gi][t];
  }
  for (int t = 0; t < p.block_size; t++) {
    plan.window[t] = p.window == HarrisWindow::Box ? 1 : kSmooth[bi][t];
    window_sum_1d += plan.window[t];
  }
  const double scale = 1.0 / ((1 << (p.gradient_size - 1)) * p.block_size * 255.0);
  double norm = scale * scale;
  if (p.window == HarrisWindow::Gaussian)
    norm *= static_cast<double>(p.block_size) * p.block_size /
            static_cast<double>(window_sum_1d * window_sum_1d);
  plan.norm = static_cast<float>(norm);
  plan.narrow = window_sum_1d * window_sum_1d * harris_max_gradient_sq(p.gradient_size) <
                (1LL << 32);
  const size_t cell = static_cast<size_t>(p.min_distance) + 1;
  plan.capacity = ((desc.width + cell - 1) / cell) * ((desc.height + cell - 1) / cell);
  *out = plan;
  return Status::ok();
}

Status harris_check_response(const HarrisPlan& plan, const HarrisResponseView& r,
                             const char* what) {
  const size_t row = static_cast<size_t>(plan.desc.width) * sizeof(float);
  if (r.pitch < row)
    return Status::invalid(std::string(what) + ": pitch " + std::to_string(r.pitch) +
                           " is smaller than its row of " + std::to_string(row) + " bytes");
  if (r.pitch % sizeof(float) != 0 || reinterpret_cast<uintptr_t>(r.data) % sizeof(float) != 0)
    return Status::invalid(std::string(what) + ": data and pitch must be multiples of 4 bytes");
  return Status::ok();
}

}  // namespace cudafx
