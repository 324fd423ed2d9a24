// Helpers for code shared between host and device. Per-pixel math that must
// be bit-identical on the CPU and the GPU goes through mul_rn/add_rn: nvcc
// would otherwise fuse a*b+c into one FMA (a single rounding) while the CPU
// rounds twice, and the backends would disagree in the last bit.
#pragma once

#if defined(__CUDACC__)
#define CUDAFX_HD __host__ __device__ __forceinline__
#else
#define CUDAFX_HD inline
#endif

namespace cudafx {

CUDAFX_HD float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

CUDAFX_HD float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

// Rounds a non-negative filter sum to a byte, half up, saturating.
CUDAFX_HD unsigned char round_to_u8(float v) {
  const int r = static_cast<int>(add_rn(v, 0.5f));
  return static_cast<unsigned char>(r < 0 ? 0 : (r > 255 ? 255 : r));
}

}  // namespace cudafx
