// Helpers for code shared between host and device. Per-value math that must
// be bit-identical on the CPU and the GPU says how each operation rounds:
// mul_rn/add_rn round once each (nvcc would otherwise fuse a*b+c into one FMA
// while the CPU rounds twice), fma_rn rounds once on both (a hardware FMA on
// the GPU, on FMA-capable CPUs and on aarch64; exact in software elsewhere).
#pragma once

#include <cmath>

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

// a * b + c with one rounding.
CUDAFX_HD float fma_rn(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// Rounds a filter sum in [0, 2^22) to the nearest byte, ties to even, and
// saturates at 255. On the GPU one instruction; on the CPU adding and
// subtracting 1.5 * 2^23 rounds to an integer with the same tie rule (the
// float spacing there is 1), in a form that vectorises.
CUDAFX_HD unsigned char round_to_u8(float v) {
#if defined(__CUDA_ARCH__)
  unsigned int r;
  asm("cvt.rni.sat.u8.f32 %0, %1;" : "=r"(r) : "f"(v));
  return static_cast<unsigned char>(r);
#else
  const float r = (v + 12582912.0f) - 12582912.0f;
  return static_cast<unsigned char>(r > 255.0f ? 255.0f : (r < 0.0f ? 0.0f : r));
#endif
}

}  // namespace cudafx
