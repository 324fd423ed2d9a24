// NPP's Gaussian filter timed with CUDA events: the peer that the cudafx
// benchmark compares its kernel with. A separate program because NPP ships
// only with full CUDA toolkits (the GPU machine has it, the build machine
// may not). Build: nvcc -O2 -o npp_gaussian npp_gaussian.cu -lnppif -lnppc
// Usage: npp_gaussian WIDTH HEIGHT KSIZE SIGMA ITERS  (RGBA, replicate border)
// Prints "frames=<pairs rotated>", "ms=<mean milliseconds per frame, cold>"
// and "hot_ms=<the same, one input and output every call>", or an error on
// stderr.
//
// Cold, as bench_gaussian times our kernel: distinct input and output frames
// (cudaMallocPitch each) called round-robin, covering at least 256 MB
// together (cold_count), one rotation of warm-up first. Every input holds
// bench_gaussian's noise (bench::fill's generator and seed), so both time
// the same random frame.
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
  if (w <= 0 || h <= 0 || ksize < 3 || ksize % 2 == 0 || iters <= 0 || !(sigma > 0)) {
    fprintf(stderr, "bad arguments\n");
    return 2;
  }
  NppStreamContext ctx;
  if (npp_stream_context(&ctx))
    return 1;

  size_t spitch = 0, dpitch = 0;
  std::vector<Npp8u*> src, dst;
  const size_t row = static_cast<size_t>(w) * 4;
  if (npp_grow_pitched(&src, 1, row, h, &spitch) || npp_grow_pitched(&dst, 1, row, h, &dpitch))
    return 1;
  const int count = cold_count((spitch + dpitch) * h);
  if (npp_grow_pitched(&src, count, row, h, &spitch) ||
      npp_grow_pitched(&dst, count, row, h, &dpitch))
    return 1;
  const std::vector<uint8_t> noise = bench_noise(static_cast<size_t>(w) * 4 * h);
  for (int i = 0; i < count; i++)
    NPP_HELPER_CHECK(cudaMemcpy2D(src[i], spitch, noise.data(), static_cast<size_t>(w) * 4,
                                  static_cast<size_t>(w) * 4, h, cudaMemcpyHostToDevice));

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
  auto run_on = [&](int i) -> NppStatus {
    if (ksize == 3 || ksize == 5)
      return nppiFilterGaussBorder_8u_C4R_Ctx(src[i], (int)spitch, size, origin, dst[i], (int)dpitch,
                                              size,
                                              ksize == 3 ? NPP_MASK_SIZE_3_X_3 : NPP_MASK_SIZE_5_X_5,
                                              NPP_BORDER_REPLICATE, ctx);
    return nppiFilterGaussAdvancedBorder_8u_C4R_Ctx(src[i], (int)spitch, size, origin, dst[i],
                                                    (int)dpitch, size, ksize, dtaps,
                                                    NPP_BORDER_REPLICATE, ctx);
  };
  return npp_print_cold_hot(ctx, count, iters, run_on);
}
