// Oracles for the Harris op, independent of its code: OpenCV's
// cornerHarris (and the same float pipeline with the binomial window), the
// response computed in double from exact integer window sums, the luma
// through cv::cvtColor, and a plain-loop non-maximum suppression.
#pragma once

#include <gtest/gtest.h>
#include <opencv2/core.hpp>

#include <string>
#include <vector>

#include "cudafx/harris.hpp"
#include "host_image.hpp"

namespace testing_support {

int cv_border(cudafx::BorderMode mode);

// The grey image the op should read: cv::cvtColor(RGB2GRAY / BGR2GRAY /
// RGBA2GRAY / BGRA2GRAY) for packed RGB formats (ARGB and ABGR reordered to
// RGBA / BGRA first), plane 0 for GRAY8 and the YUV formats.
cv::Mat harris_grey(const HostImage& src);

// The grey image as a GRAY8 HostImage with rows padded by `pad` bytes.
HostImage grey_image(const cv::Mat& grey, size_t pad = 0);

// cv::cornerHarris for Box; for Gaussian the same pipeline (cv::Sobel in
// float with cornerHarris's scale, float products, the binomial window
// normalised to the box's total weight by cv::sepFilter2D, the formula in
// float). CV_32F.
cv::Mat harris_cv_response(const cv::Mat& grey, const cudafx::HarrisParams& p);

// a, b, c of the formula in double from the exact window sums (cv::Sobel
// in CV_64F without scale, products, window sums: integers below 2^53, so
// exact), times n.
struct HarrisExact {
  cv::Mat a, b, c;  // CV_64F
  double r(int x, int y, float k) const;          // R in double
  double magnitude(int x, int y, float k) const;  // M = |ac| + b^2 + k (a+c)^2
};
HarrisExact harris_exact(const cv::Mat& grey, const cudafx::HarrisParams& p);

// The documented bounds at every pixel: |got - R_exact| <= 2^-20 M and
// |got - cv| <= 2^-8 M + 2^-90 max|cv|. The failure names the worst pixel;
// *worst_exact / *worst_cv (optional) receive the largest |d| / M seen.
::testing::AssertionResult response_within_bounds(const cv::Mat& got, const cv::Mat& cv_resp,
                                                  const HarrisExact& exact, float k,
                                                  double* worst_exact = nullptr,
                                                  double* worst_cv = nullptr);

// Non-maximum suppression by a plain loop over `resp` (CV_32F) with the
// op's rules: threshold (relative to max(0, max R)), pixels that beat every
// other pixel of their (2r+1)^2 square (higher, or equal and earlier in
// raster order), sorted by score descending, y, x. All of them (no
// max_corners cut), integer positions.
struct ReferenceCorners {
  float max_response = 0.0f;
  float threshold = 0.0f;
  std::vector<cudafx::HarrisCorner> corners;
};
ReferenceCorners harris_nms_reference(const cv::Mat& resp, const cudafx::HarrisParams& p);

std::string corner_text(const cudafx::HarrisCorner& c);

}  // namespace testing_support
