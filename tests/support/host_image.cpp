#include "host_image.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace testing_support {

using namespace cudafx;

HostImage::HostImage(ImageDesc desc, size_t pad) {
  const FormatInfo& fi = format_info(desc.format);
  size_t total = 0;
  size_t pitches[kMaxPlanes] = {};
  for (int i = 0; i < fi.n_planes; i++) {
    pitches[i] = static_cast<size_t>(plane_width(fi, i, desc.width)) * fi.planes[i].channels + pad;
    total += pitches[i] * plane_height(fi, i, desc.height);
  }
  storage_.assign(total + 64, 0);
  view_.desc = desc;
  size_t off = 0;
  for (int i = 0; i < fi.n_planes; i++) {
    view_.data[i] = storage_.data() + off;
    view_.pitch[i] = pitches[i];
    off += pitches[i] * plane_height(fi, i, desc.height);
  }
}

cv::Mat HostImage::plane_mat(int i) const {
  const PlaneView p = view_.plane(i);
  return cv::Mat(p.height, p.width, CV_8UC(p.channels), p.data, p.pitch);
}

void HostImage::fill_random(uint32_t seed) {
  std::mt19937 rng(seed);
  // Smooth gradients plus noise: random bytes alone hide border mistakes
  // that only show on structured content.
  const FormatInfo& fi = format_info(view_.desc.format);
  for (int i = 0; i < fi.n_planes; i++) {
    const PlaneView p = view_.plane(i);
    for (int y = 0; y < p.height; y++)
      for (size_t x = 0; x < p.row_bytes(); x++)
        p.data[y * p.pitch + x] =
            static_cast<uint8_t>((x * 7 + y * 3) / 2 + (rng() % 64));
  }
}

void HostImage::copy_from(const ImageView& src) {
  const FormatInfo& fi = format_info(view_.desc.format);
  for (int i = 0; i < fi.n_planes; i++) {
    const PlaneView d = view_.plane(i), s = src.plane(i);
    for (int y = 0; y < d.height; y++)
      std::memcpy(d.data + y * d.pitch, s.data + y * s.pitch, d.row_bytes());
  }
}

int max_abs_diff(const ImageView& a, const ImageView& b) {
  int worst = 0;
  const FormatInfo& fi = format_info(a.desc.format);
  for (int i = 0; i < fi.n_planes; i++) {
    const PlaneView pa = a.plane(i), pb = b.plane(i);
    for (int y = 0; y < pa.height; y++)
      for (size_t x = 0; x < pa.row_bytes(); x++)
        worst = std::max(worst, std::abs(int(pa.data[y * pa.pitch + x]) -
                                         int(pb.data[y * pb.pitch + x])));
  }
  return worst;
}

bool bytes_equal(const ImageView& a, const ImageView& b) {
  const FormatInfo& fi = format_info(a.desc.format);
  for (int i = 0; i < fi.n_planes; i++) {
    const PlaneView pa = a.plane(i), pb = b.plane(i);
    for (int y = 0; y < pa.height; y++)
      if (std::memcmp(pa.data + y * pa.pitch, pb.data + y * pb.pitch, pa.row_bytes()) != 0)
        return false;
  }
  return true;
}

std::string testdata_dir() {
  if (const char* env = std::getenv("CUDAFX_TESTDATA"))
    return env;
  return CUDAFX_DEFAULT_TESTDATA;
}

}  // namespace testing_support
