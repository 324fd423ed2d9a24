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

// floor(a / b) for b > 0 (C++ division truncates towards zero).
template <class T>
CUDAFX_HD T floor_div(T a, T b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// The same for double (the grey-world op's statistics): one rounding each.
CUDAFX_HD double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
CUDAFX_HD double sub_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
CUDAFX_HD double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
CUDAFX_HD double div_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
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

// Rounds a non-negative filter sum to the nearest byte, ties to even, and
// saturates at 255: min(v, 255) + 1.5 * 2^23 rounds to an integer (the
// float spacing there is 1) whose value sits in the low bits of the float.
// The GPU reads the byte out of the bits (no conversion instruction); the CPU
// subtracts the constant again, in a form that vectorises. Both round the same
// single addition, so they agree bit for bit.
constexpr float kRoundMagic = 12582912.0f;  // 1.5 * 2^23

#if defined(__CUDACC__)
// The rounded value of v in the low byte of the result (upper bytes junk).
__device__ __forceinline__ unsigned int rounded_bits(float v) {
  return __float_as_uint(__fadd_rn(fminf(v, 255.0f), kRoundMagic));
}
#endif

CUDAFX_HD unsigned char round_to_u8(float v) {
#if defined(__CUDA_ARCH__)
  return static_cast<unsigned char>(rounded_bits(v) & 0xffu);
#else
  const float r = ((v < 255.0f ? v : 255.0f) + kRoundMagic) - kRoundMagic;
  return static_cast<unsigned char>(r);
#endif
}

}  // namespace cudafx
