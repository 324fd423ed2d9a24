// The resize oracle: cv::resize on every plane, to that plane's output size.
#pragma once

#include "cudafx/resize.hpp"
#include "host_image.hpp"
#include "oracle_compare.hpp"

namespace testing_support {

HostImage resize_oracle(const HostImage& src, const cudafx::ImageDesc& dst_desc,
                        cudafx::ResizeMethod method);

// How close a result must come to resize_oracle: exactly for nearest
// neighbour (both pick the same sample), kResizeBounds for the filters.
const OracleBounds& resize_oracle_bounds(cudafx::ResizeMethod method);

}  // namespace testing_support
