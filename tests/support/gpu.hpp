// GPU helpers for tests: skip when there is no device, device copies of host
// images.
#pragma once

#include <gtest/gtest.h>

#include "cudafx/cuda_resources.hpp"
#include "host_image.hpp"

namespace testing_support {

// True when a CUDA device is usable; the reason otherwise.
bool gpu_available(std::string* why = nullptr);

#define SKIP_WITHOUT_GPU()                                   \
  do {                                                       \
    std::string why_;                                        \
    if (!::testing_support::gpu_available(&why_))            \
      GTEST_SKIP() << "no usable CUDA device: " << why_;     \
  } while (0)

// A device image with its own pitch (rounded to `align`), plus upload and
// download through a stream.
class DeviceImage {
 public:
  DeviceImage(cudafx::ImageDesc desc, size_t align = 256);
  const cudafx::ImageView& view() const { return view_; }
  cudafx::Status upload(const cudafx::ImageView& host, cudafx::StreamHandle s);
  cudafx::Status download(const cudafx::ImageView& host, cudafx::StreamHandle s) const;
  cudafx::Status status() const { return status_; }

 private:
  cudafx::DeviceBuffer buf_;
  cudafx::ImageView view_;
  cudafx::Status status_;
};

}  // namespace testing_support
