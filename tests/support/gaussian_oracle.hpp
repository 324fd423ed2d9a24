// cv::GaussianBlur as the oracle for the Gaussian op and element.
#pragma once

#include "cudafx/gaussian.hpp"
#include "host_image.hpp"
#include "oracle_compare.hpp"  // compare with kGaussianBounds

namespace testing_support {

// cv::GaussianBlur per plane with the plan's kernel sizes and sigmas, run on
// a float copy and rounded: OpenCV's 8-bit path quantises taps to 1/256,
// which for wide kernels (65+ taps of ~1/50 each) is off by 2-3 levels by
// itself.
HostImage gaussian_oracle(const HostImage& src, const cudafx::GaussianParams& params);

}  // namespace testing_support
