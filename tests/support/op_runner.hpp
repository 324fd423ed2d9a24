// Running an op (anything with submit(stream, src, dst), such as GaussianOp
// or ResizeOp) on test images: on the CPU backend in host memory, or on the
// CUDA backend through device copies. Failures are test failures.
#pragma once

#include <gtest/gtest.h>

#include "cudafx/cuda_resources.hpp"
#include "gpu.hpp"
#include "host_image.hpp"

namespace testing_support {

// Submits `op` (built for Backend::Cpu) from `src` into a new host image of
// `dst_desc` whose rows are padded by `pad` bytes.
template <class Op>
HostImage run_on_host(Op& op, const HostImage& src, const cudafx::ImageDesc& dst_desc,
                      size_t pad = 0) {
  HostImage dst(dst_desc, pad);
  const cudafx::Status s = op.submit(nullptr, src.view(), dst.view());
  EXPECT_TRUE(s.is_ok()) << s.message();
  return dst;
}

// Uploads `src` into a device image with rows aligned to `align`, submits
// `op` (built for Backend::Cuda) into another, downloads the result into a
// new host image of `dst_desc`; one synchronisation.
template <class Op>
HostImage run_on_device(Op& op, const HostImage& src, const cudafx::ImageDesc& dst_desc,
                        size_t align) {
  HostImage dst(dst_desc);
  cudafx::CudaStream stream;
  EXPECT_TRUE(stream.create().is_ok());
  DeviceImage din(src.desc(), align), dout(dst_desc, align);
  EXPECT_TRUE(din.status().is_ok()) << din.status().message();
  EXPECT_TRUE(dout.status().is_ok()) << dout.status().message();
  EXPECT_TRUE(din.upload(src.view(), stream.get()).is_ok());
  cudafx::Status s = op.submit(stream.get(), din.view(), dout.view());
  EXPECT_TRUE(s.is_ok()) << s.message();
  EXPECT_TRUE(dout.download(dst.view(), stream.get()).is_ok());
  s = stream.synchronize();
  EXPECT_TRUE(s.is_ok()) << s.message();
  return dst;
}

}  // namespace testing_support
