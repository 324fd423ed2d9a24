// Prefix sums over a warp and over a block on the device, shared by the
// ops' kernels (Harris's candidate compaction, the delta coder's lane
// places).
#pragma once

#include <cuda_runtime.h>

namespace cudafx {

// The inclusive prefix sum of v over the warp's lanes.
__device__ __forceinline__ unsigned warp_inclusive_scan(unsigned v, unsigned lane) {
#pragma unroll
  for (unsigned off = 1; off < 32; off <<= 1) {
    const unsigned y = __shfl_up_sync(0xffffffffu, v, off);
    if (lane >= off)
      v += y;
  }
  return v;
}

// The exclusive prefix sum of v over the block's threads (blockDim.x a
// multiple of 32, at most 1024); `warp_sums` is shared, 32 values.
__device__ __forceinline__ unsigned block_exclusive_scan(unsigned v, unsigned* warp_sums) {
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const unsigned x = warp_inclusive_scan(v, lane);
  if (lane == 31)
    warp_sums[warp] = x;
  __syncthreads();
  if (warp == 0) {
    const unsigned w = lane < warps ? warp_sums[lane] : 0u;
    const unsigned s = warp_inclusive_scan(w, lane);
    if (lane < warps)
      warp_sums[lane] = s - w;
  }
  __syncthreads();
  return warp_sums[warp] + x - v;
}

}  // namespace cudafx
