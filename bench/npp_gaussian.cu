// NPP's Gaussian filter timed with CUDA events: the peer that the cudafx
// benchmark compares its kernel with. A separate program because NPP ships
// only with full CUDA toolkits (the GPU machine has it, the build machine
// may not). Build: nvcc -O2 -o npp_gaussian npp_gaussian.cu -lnppif -lnppc
// Usage: npp_gaussian WIDTH HEIGHT KSIZE SIGMA ITERS  (RGBA, replicate border)
// Prints "ms=<mean milliseconds per frame>" or an error on stderr.
#include "npp_context.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s W H KSIZE SIGMA ITERS\n", argv[0]);
    return 2;
  }
  const int w = atoi(argv[1]), h = atoi(argv[2]), ksize = atoi(argv[3]), iters = atoi(argv[5]);
  const double sigma = atof(argv[4]);
  NppStreamContext ctx;
  if (npp_stream_context(&ctx))
    return 1;

  size_t pitch = 0;
  Npp8u *src = nullptr, *dst = nullptr;
  NPP_HELPER_CHECK(cudaMallocPitch(&src, &pitch, w * 4, h));
  NPP_HELPER_CHECK(cudaMallocPitch(&dst, &pitch, w * 4, h));
  NPP_HELPER_CHECK(cudaMemset2D(src, pitch, 77, w * 4, h));
  // Fixed masks where NPP has one (3x3, 5x5: what a user would call), else
  // the "advanced" variant with our taps, in device memory.
  const int r = (ksize - 1) / 2;
  std::vector<float> taps(ksize);
  double sum = 0;
  for (int i = 0; i < ksize; i++) sum += taps[i] = std::exp(-double(i - r) * (i - r) / (2 * sigma * sigma));
  for (auto& t : taps) t = float(t / sum);
  float* dtaps = nullptr;
  NPP_HELPER_CHECK(cudaMalloc(&dtaps, ksize * sizeof(float)));
  NPP_HELPER_CHECK(cudaMemcpy(dtaps, taps.data(), ksize * sizeof(float), cudaMemcpyHostToDevice));
  const NppiSize size = {w, h};
  const NppiPoint origin = {0, 0};
  auto run = [&]() -> NppStatus {
    if (ksize == 3 || ksize == 5)
      return nppiFilterGaussBorder_8u_C4R_Ctx(src, (int)pitch, size, origin, dst, (int)pitch, size,
                                              ksize == 3 ? NPP_MASK_SIZE_3_X_3 : NPP_MASK_SIZE_5_X_5,
                                              NPP_BORDER_REPLICATE, ctx);
    return nppiFilterGaussAdvancedBorder_8u_C4R_Ctx(src, (int)pitch, size, origin, dst, (int)pitch,
                                                    size, ksize, dtaps, NPP_BORDER_REPLICATE, ctx);
  };
  const double ms = npp_ms_per_call(ctx, iters, run);
  if (ms < 0)
    return 1;
  printf("ms=%.5f\n", ms);
  return 0;
}
