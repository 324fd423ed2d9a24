// libFuzzer target for cudaconvolve's kernel property: the bytes after a
// 6-byte header are the kernel's text ("1 2 1; ..."), parsed, planned with a
// divisor, offset, anchor and border from the header, and run on the CPU
// over a small frame of random bytes when the plan accepts them. Must never
// crash, hang, overflow or read past a buffer (ASan, UBSan): bad text and
// bad kernels get a Status.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cudafx/convolve.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 6)
    return 0;
  cudafx::ConvolveParams p;
  const std::string text(reinterpret_cast<const char*>(data + 6), size - 6);
  if (!cudafx::parse_convolve_kernel(text, &p).is_ok())
    return 0;
  p.divisor = static_cast<int8_t>(data[0]) / 4.0;
  p.offset = static_cast<int8_t>(data[1]);
  p.anchor_x = static_cast<int8_t>(data[2]) % 33;
  p.anchor_y = static_cast<int8_t>(data[3]) % 33;
  p.border = static_cast<cudafx::BorderMode>(data[4] % 3);
  p.filter_chroma = data[4] & 4;
  const cudafx::PixelFormat formats[] = {cudafx::PixelFormat::GRAY8, cudafx::PixelFormat::RGBA,
                                         cudafx::PixelFormat::RGB, cudafx::PixelFormat::NV12};
  const cudafx::ImageDesc d{formats[data[5] % 4], 1 + data[5] / 4 % 13, 1 + data[5] / 52 % 5};
  cudafx::ConvolvePlan plan;
  if (!cudafx::plan_convolve(d, p, &plan).is_ok())
    return 0;
  std::vector<uint8_t> src(cudafx::packed_size(d)), dst(src.size());
  for (size_t i = 0; i < src.size(); i++)
    src[i] = static_cast<uint8_t>(i * 131 + data[i % size]);
  (void)cudafx::convolve_cpu(plan, cudafx::packed_view(d, src.data()),
                             cudafx::packed_view(d, dst.data()));
  return 0;
}
