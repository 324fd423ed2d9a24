#include "gaussian_oracle.hpp"

#include <gtest/gtest.h>
#include <opencv2/imgproc.hpp>

namespace testing_support {

using namespace cudafx;

static int cv_border(BorderMode b) {
  switch (b) {
    case BorderMode::Replicate: return cv::BORDER_REPLICATE;
    case BorderMode::Reflect101: return cv::BORDER_REFLECT_101;
    case BorderMode::Constant: return cv::BORDER_CONSTANT;
  }
  return cv::BORDER_DEFAULT;
}

HostImage gaussian_oracle(const HostImage& src, const GaussianParams& params) {
  GaussianPlan plan;
  EXPECT_TRUE(plan_gaussian(src.desc(), params, &plan).is_ok());
  HostImage dst(src.desc());
  const double sy = params.sigma_y > 0 ? params.sigma_y : params.sigma_x;
  for (int i = 0; i < plan.n_planes; i++) {
    const GaussianPlanePlan& p = plan.planes[i];
    const cv::Size ksize(2 * p.x.radius + 1, 2 * p.y.radius + 1);
    const double sxp = params.sigma_x / (1 << p.layout.x_shift);
    const double syp = sy / (1 << p.layout.y_shift);
    cv::Mat out = dst.plane_mat(i);
    if (p.fixed) {
      // OpenCV's own 8-bit path: the same 1/256 taps and integer sums.
      cv::GaussianBlur(src.plane_mat(i), out, ksize, sxp, syp, cv_border(params.border));
      continue;
    }
    cv::Mat in_f, out_f;
    src.plane_mat(i).convertTo(in_f, CV_32F);
    cv::GaussianBlur(in_f, out_f, ksize, sxp, syp, cv_border(params.border));
    out_f.convertTo(out, CV_8U);  // rounds to nearest, saturates
  }
  return dst;
}

}  // namespace testing_support
