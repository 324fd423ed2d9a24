// Validation and planning of the Gaussian op: everything that is decided
// once per format, size and parameter set.
#include <algorithm>
#include <cmath>
#include <string>

#include "cudafx/gaussian.hpp"

namespace cudafx {

Status gaussian_taps(double sigma, int kernel_size, GaussianTaps* out) {
  if (!(sigma > 0.0) || !std::isfinite(sigma))
    return Status::invalid("sigma must be a finite number > 0, got " + std::to_string(sigma));
  int radius;
  if (kernel_size != 0) {
    if (kernel_size < 0 || kernel_size % 2 == 0)
      return Status::invalid("kernel size must be 0 (from sigma) or odd, got " +
                             std::to_string(kernel_size));
    radius = (kernel_size - 1) / 2;
  } else {
    const double r = std::ceil(3.0 * sigma);
    if (r > kGaussianMaxRadius)
      return Status::invalid("sigma " + std::to_string(sigma) + " needs a radius of " +
                             std::to_string(static_cast<long>(r)) + " taps; at most " +
                             std::to_string(kGaussianMaxRadius) + " are supported");
    radius = static_cast<int>(r);
  }
  if (radius > kGaussianMaxRadius)
    return Status::invalid("kernel size " + std::to_string(kernel_size) + " exceeds the maximum " +
                           std::to_string(2 * kGaussianMaxRadius + 1));
  std::vector<double> d(radius + 1);
  double sum = 0.0;
  for (int k = 0; k <= radius; k++) {
    d[k] = std::exp(-(static_cast<double>(k) * k) / (2.0 * sigma * sigma));
    sum += k == 0 ? d[k] : 2.0 * d[k];
  }
  out->radius = radius;
  out->w.assign(radius + 1, 0.0f);
  for (int k = 0; k <= radius; k++)
    out->w[k] = static_cast<float>(d[k] / sum);
  // Fixed point as OpenCV's 8-bit path quantises: from the outermost tap
  // inwards, each tap's 256 w plus the rounding error carried from the tap
  // before it, rounded half to even (error diffusion: the kernel's sums over
  // its outer parts stay close to the exact ones); the centre is what is
  // left of 256 (0 if the others take it all: then the kernel does not sum
  // to 1 and keeps_shape rejects it).
  constexpr double kOne = 1 << kGaussianFixedBits;
  const double inv_sum = 1.0 / sum;
  out->q.assign(radius + 1, 0);
  long outer = 0;
  double carried = 0.0;
  for (int k = radius; k >= 1; k--) {
    const double v = d[k] * inv_sum * kOne + carried;
    const double r = std::nearbyint(v);
    carried = v - r;
    out->q[k] = static_cast<uint16_t>(std::max(0.0, r));
    outer += 2 * out->q[k];
  }
  out->q[0] = static_cast<uint16_t>(std::max(0L, static_cast<long>(kOne) - outer));
  out->q_radius = radius;
  while (out->q_radius > 0 && out->q[out->q_radius] == 0)
    out->q_radius--;
  out->q.resize(out->q_radius + 1);
  return Status::ok();
}

bool gaussian_fixed_keeps_shape(const GaussianTaps& t) {
  long total = t.q[0];
  for (int k = 1; k <= t.q_radius; k++) {
    if (t.q[k] > t.q[k - 1])
      return false;
    total += 2L * t.q[k];
  }
  return total == (1L << kGaussianFixedBits);
}

Status plan_gaussian(const ImageDesc& desc, const GaussianParams& params, GaussianPlan* out) {
  if (desc.width <= 0 || desc.height <= 0)
    return Status::invalid("image size must be positive, got " + std::to_string(desc.width) +
                           "x" + std::to_string(desc.height));
  if (desc.width > (1 << 16) || desc.height > (1 << 16))
    return Status::invalid("image larger than 65536 pixels on a side");
  const double sx = params.sigma_x;
  const double sy = params.sigma_y > 0.0 ? params.sigma_y : sx;
  if (params.sigma_y < 0.0)
    return Status::invalid("sigma-y must be >= 0 (0: same as sigma)");
  const int kx = params.kernel_size_x;
  const int ky = params.kernel_size_y ? params.kernel_size_y : params.kernel_size_x;

  GaussianPlan plan;
  plan.desc = desc;
  plan.border = params.border;
  const FormatInfo& fi = format_info(desc.format);
  plan.n_planes = fi.n_planes;
  for (int i = 0; i < fi.n_planes; i++) {
    GaussianPlanePlan& p = plan.planes[i];
    p.layout = fi.planes[i];
    p.width = plane_width(fi, i, desc.width);
    p.height = plane_height(fi, i, desc.height);
    // A subsampled plane sees the image through a coarser grid: the same blur
    // in image pixels is sigma / 2^shift plane pixels, and so is the radius.
    const int shx = p.layout.x_shift, shy = p.layout.y_shift;
    const int kxp = kx ? 2 * (((kx - 1) / 2 + (1 << shx) - 1) >> shx) + 1 : 0;
    const int kyp = ky ? 2 * (((ky - 1) / 2 + (1 << shy) - 1) >> shy) + 1 : 0;
    CUDAFX_TRY(gaussian_taps(sx / (1 << shx), kxp, &p.x));
    CUDAFX_TRY(gaussian_taps(sy / (1 << shy), kyp, &p.y));
    const int qr = std::max(p.x.q_radius, p.y.q_radius);
    switch (params.arithmetic) {
      case GaussianArithmetic::Float:
        p.fixed = false;
        break;
      case GaussianArithmetic::Fixed:
        if (qr > kGaussianFixedMaxRadius)
          return Status::invalid("fixed-point Gaussian reaches at most " +
                                 std::to_string(kGaussianFixedMaxRadius) +
                                 " taps from the centre; plane " + std::to_string(i) + " needs " +
                                 std::to_string(qr));
        p.fixed = true;
        break;
      case GaussianArithmetic::Auto:
      default:
        p.fixed = qr <= kGaussianFixedAutoRadius && gaussian_fixed_keeps_shape(p.x) &&
                  gaussian_fixed_keeps_shape(p.y);
        break;
    }
  }
  *out = std::move(plan);
  return Status::ok();
}

}  // namespace cudafx
