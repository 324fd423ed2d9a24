// The fixed-point arithmetic of the Gaussian op (see cudafx/gaussian.hpp):
// the rounding both backends share, and the entry points the CPU and CUDA
// dispatchers call for a plane whose plan is fixed point.
#pragma once

#include <cstdint>

#include "cudafx/gaussian.hpp"
#include "cudafx/hd.hpp"

namespace cudafx {

// The vertical sum (taps of both axes in 1/256: the value times 2^16) to the
// nearest byte, halves up. No saturation: the taps sum to 256 an axis, so the
// sum is at most 255 * 2^16.
CUDAFX_HD uint8_t gaussian_fixed_round(uint32_t sum) {
  return static_cast<uint8_t>((sum + (1u << (2 * kGaussianFixedBits - 1))) >>
                              (2 * kGaussianFixedBits));
}

// CPU: rows [y0, y1) of a plane, with `scratch` of
// gaussian_fixed_cpu_scratch_bytes (4-byte aligned).
void gaussian_fixed_cpu_band(const GaussianPlanePlan& p, BorderMode border, const PlaneView& src,
                             const PlaneView& dst, int y0, int y1, void* scratch);
size_t gaussian_fixed_cpu_scratch_bytes(const GaussianPlanePlan& p);

// CUDA: queues the plane on `stream` (no scratch).
Status gaussian_fixed_cuda_plane(const GaussianPlanePlan& p, BorderMode border,
                                 const PlaneView& src, const PlaneView& dst, StreamHandle stream);

}  // namespace cudafx
