// Host images for tests: owned storage with a chosen row padding, random
// content, conversion to cv::Mat per plane, and comparison helpers.
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cudafx/image.hpp"

namespace testing_support {

class HostImage {
 public:
  HostImage() = default;
  // Rows of plane i are padded by `pad` bytes beyond their tight size; an odd
  // pad makes pitches that are neither 4- nor 16-byte multiples.
  HostImage(cudafx::ImageDesc desc, size_t pad = 0);
  // Moves keep the heap block, so the view stays valid; copies would not.
  HostImage(HostImage&&) = default;
  HostImage& operator=(HostImage&&) = default;
  HostImage(const HostImage&) = delete;
  HostImage& operator=(const HostImage&) = delete;
  const cudafx::ImageView& view() const { return view_; }
  cudafx::ImageDesc desc() const { return view_.desc; }
  // The plane as a cv::Mat header over this image's memory.
  cv::Mat plane_mat(int i) const;
  void fill_random(uint32_t seed);
  // Copies pixels in from another view of the same desc (any pitch).
  void copy_from(const cudafx::ImageView& src);

 private:
  std::vector<uint8_t> storage_;
  cudafx::ImageView view_;
};

// Largest absolute difference between corresponding bytes of two images.
int max_abs_diff(const cudafx::ImageView& a, const cudafx::ImageView& b);
// True when every byte of the pixel area is identical.
bool bytes_equal(const cudafx::ImageView& a, const cudafx::ImageView& b);

// Where ../shared/testdata lives (CUDAFX_TESTDATA overrides).
std::string testdata_dir();

}  // namespace testing_support
