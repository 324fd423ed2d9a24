// The per-value arithmetic of the separable Gaussian, shared by the CPU and
// CUDA paths. Both passes evaluate, in this order and with these roundings,
//   acc = w[0] * centre;  acc = fma(w[k], left_k + right_k, acc), k = 1..r
// The CPU path runs the same sequence with its loops interchanged (over k
// outside, over values inside) so that the compiler vectorises it; the order
// of operations per value is unchanged, so results are bit-identical.
#pragma once

#include "cudafx/hd.hpp"

namespace cudafx {

template <class PairSum>
CUDAFX_HD float gaussian_symmetric_sum(const float* w, int radius, float centre, PairSum pair) {
  float acc = mul_rn(w[0], centre);
  for (int k = 1; k <= radius; k++)
    acc = fma_rn(w[k], pair(k), acc);
  return acc;
}

}  // namespace cudafx
