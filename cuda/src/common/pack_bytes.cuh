// Packing ints into the bytes of a word on the device, shared by the ops'
// kernels (resize, the tensor-core convolution).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace cudafx {

// Four ints saturated to [0, 255] and packed as bytes (the first lowest):
// two instructions (cvt.pack.sat, sm_72 and later) instead of two clamps a
// value and three byte permutes.
__device__ __forceinline__ uint32_t pack4_saturated(int32_t r0, int32_t r1, int32_t r2, int32_t r3) {
  uint32_t hi, d;
  asm("cvt.pack.sat.u8.s32.b32 %0, %1, %2, 0;" : "=r"(hi) : "r"(r3), "r"(r2));
  asm("cvt.pack.sat.u8.s32.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(r1), "r"(r0), "r"(hi));
  return d;
}

}  // namespace cudafx
