// GPU helpers for tests: skip (or, with CUDAFX_REQUIRE_GPU set, fail) when
// there is no device, device copies of host images.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "cudafx/cuda_resources.hpp"
#include "host_image.hpp"

namespace testing_support {

// True when a CUDA device is usable; the reason otherwise.
bool gpu_available(std::string* why = nullptr);

// What a test does about a part that needs a GPU (or a plugin that comes
// with one, such as nvcodec's cudaupload) when that is missing: skip it,
// unless CUDAFX_REQUIRE_GPU is set to anything but "" or "0" -- as on the
// GPU machine, where a skip would hide a broken setup -- then fail.
enum class GpuGate { Run, Skip, Fail };
GpuGate gpu_gate(bool available, const char* require_gpu_env);
// gpu_gate with this process's CUDAFX_REQUIRE_GPU.
GpuGate gpu_gate(bool available);

// For a test's GPU half inside a loop or an `if`: true when a device is
// usable; otherwise false, after a (non-fatal) failure when the GPU is
// required.
bool gpu_part_runs();

// The number of usable CUDA devices: 0 without a driver, a device or a CUDA
// build.
int gpu_count();

// What a test that needs `n` devices does on a machine with `have`: run;
// skip; or fail when `require_gpus_env` (CUDAFX_REQUIRE_GPUS, a count) asks
// for at least `n` devices -- as on the 2-GPU machine, where a skip would
// hide a device that went missing. CUDAFX_REQUIRE_GPU alone does not make a
// test of two devices fail on a machine of one.
GpuGate gpus_gate(int n, int have, const char* require_gpus_env);

// The element backends a test runs its cases on, CPU first.
inline const char* const kBackends[] = {"cpu", "cuda"};
// The CUDA half of a test is left out without a GPU (a failure under
// CUDAFX_REQUIRE_GPU); the CPU half always runs.
bool skip_backend(const char* backend);

}  // namespace testing_support

// Ends the test unless `available`: GTEST_SKIP, or FAIL under
// CUDAFX_REQUIRE_GPU; `reason` is streamed into the message.
#define SKIP_UNLESS_GPU_READY(available, reason)                                      \
  do {                                                                                \
    switch (::testing_support::gpu_gate(available)) {                                 \
      case ::testing_support::GpuGate::Run:                                           \
        break;                                                                        \
      case ::testing_support::GpuGate::Skip:                                          \
        GTEST_SKIP() << reason;                                                       \
      case ::testing_support::GpuGate::Fail:                                          \
        FAIL() << "CUDAFX_REQUIRE_GPU is set, but " << reason;                        \
    }                                                                                 \
  } while (0)

// Ends the test unless `n` CUDA devices are usable (see gpus_gate).
#define SKIP_WITHOUT_GPUS(n)                                                            \
  do {                                                                                  \
    const int have_ = ::testing_support::gpu_count();                                   \
    switch (::testing_support::gpus_gate((n), have_, std::getenv("CUDAFX_REQUIRE_GPUS"))) { \
      case ::testing_support::GpuGate::Run:                                             \
        break;                                                                          \
      case ::testing_support::GpuGate::Skip:                                            \
        GTEST_SKIP() << "needs " << (n) << " CUDA devices, found " << have_;            \
      case ::testing_support::GpuGate::Fail:                                            \
        FAIL() << "CUDAFX_REQUIRE_GPUS asks for " << (n) << " CUDA devices, found " << have_; \
    }                                                                                   \
  } while (0)

#define SKIP_WITHOUT_GPU()                                                          \
  do {                                                                              \
    std::string why_;                                                               \
    const bool ok_ = ::testing_support::gpu_available(&why_);                       \
    SKIP_UNLESS_GPU_READY(ok_, "no usable CUDA device: " << why_);                  \
  } while (0)

namespace testing_support {

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
