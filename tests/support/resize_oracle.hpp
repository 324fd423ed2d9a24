// The resize oracle: cv::resize on every plane, to that plane's output size.
#pragma once

#include "cudafx/resize.hpp"
#include "host_image.hpp"

namespace testing_support {

HostImage resize_oracle(const HostImage& src, const cudafx::ImageDesc& dst_desc,
                        cudafx::ResizeMethod method);

}  // namespace testing_support
