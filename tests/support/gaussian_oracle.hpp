// cv::GaussianBlur as the oracle for the Gaussian op and element.
#pragma once

#include "cudafx/gaussian.hpp"
#include "host_image.hpp"
#include "oracle_compare.hpp"  // compare with kGaussianBounds

namespace testing_support {

// cv::GaussianBlur per plane with the plan's kernel sizes and sigmas: on the
// bytes (OpenCV's 8-bit fixed-point path) for planes the plan runs in fixed
// point, on a float copy, rounded, for planes in float (OpenCV's 1/256 taps
// are off by 2-3 levels by themselves for wide kernels, 65+ taps of ~1/50).
HostImage gaussian_oracle(const HostImage& src, const cudafx::GaussianParams& params);

}  // namespace testing_support
