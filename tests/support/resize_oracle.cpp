#include "resize_oracle.hpp"

#include <opencv2/imgproc.hpp>

namespace testing_support {

using namespace cudafx;

static int cv_interpolation(ResizeMethod m) {
  switch (m) {
    case ResizeMethod::Nearest: return cv::INTER_NEAREST;
    case ResizeMethod::Bilinear: return cv::INTER_LINEAR;
    case ResizeMethod::Bicubic: return cv::INTER_CUBIC;
  }
  return cv::INTER_LINEAR;
}

HostImage resize_oracle(const HostImage& src, const ImageDesc& dst_desc, ResizeMethod method) {
  HostImage dst(dst_desc);
  const FormatInfo& fi = format_info(dst_desc.format);
  for (int i = 0; i < fi.n_planes; i++) {
    cv::Mat out;
    cv::resize(src.plane_mat(i), out,
               cv::Size(plane_width(fi, i, dst_desc.width), plane_height(fi, i, dst_desc.height)),
               0, 0, cv_interpolation(method));
    out.copyTo(dst.plane_mat(i));
  }
  return dst;
}

const OracleBounds& resize_oracle_bounds(ResizeMethod method) {
  return method == ResizeMethod::Nearest ? kExactBounds : kResizeBounds;
}

}  // namespace testing_support
