// NPP's general 2D filter (nppiFilterBorder_8u_C4R: an Npp32s kernel and a
// divisor) timed with CUDA events: the peer of bench_filters' convolution
// rows. A separate program because NPP ships only with full CUDA toolkits.
// Build: nvcc -O2 -o npp_convolve npp_convolve.cu -lnppif -lnppc
// Usage: npp_convolve WIDTH HEIGHT KSIZE ITERS  (RGBA, replicate border; a
// KSIZE x KSIZE kernel of the same small integers bench_filters uses)
// Prints "frames=", "ms=" (cold) and "hot_ms=" as the other helpers.
#include "npp_context.hpp"

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s W H KSIZE ITERS\n", argv[0]);
    return 2;
  }
  const int w = atoi(argv[1]), h = atoi(argv[2]), k = atoi(argv[3]), iters = atoi(argv[4]);
  if (w <= 0 || h <= 0 || k < 1 || k % 2 == 0 || k > 31 || iters <= 0) {
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
  const std::vector<uint8_t> noise = bench_noise(row * h);
  for (int i = 0; i < count; i++)
    NPP_HELPER_CHECK(cudaMemcpy2D(src[i], spitch, noise.data(), row, row, h,
                                  cudaMemcpyHostToDevice));
  // The kernel: (i * 7 + j * 3) % 9 - 3, as bench_filters' (not separable).
  std::vector<Npp32s> taps(static_cast<size_t>(k) * k);
  int sum = 0;
  for (int i = 0; i < k; i++)
    for (int j = 0; j < k; j++)
      sum += taps[i * k + j] = (i * 7 + j * 3) % 9 - 3;
  Npp32s* dtaps = nullptr;
  NPP_HELPER_CHECK(cudaMalloc(&dtaps, taps.size() * sizeof(Npp32s)));
  NPP_HELPER_CHECK(cudaMemcpy(dtaps, taps.data(), taps.size() * sizeof(Npp32s),
                              cudaMemcpyHostToDevice));
  const NppiSize size = {w, h}, ksize = {k, k};
  const NppiPoint origin = {0, 0}, anchor = {k / 2, k / 2};
  const Npp32s divisor = sum != 0 ? sum : 1;
  auto run_on = [&](int i) -> NppStatus {
    return nppiFilterBorder_8u_C4R_Ctx(src[i], (int)spitch, size, origin, dst[i], (int)dpitch,
                                       size, dtaps, ksize, anchor, divisor, NPP_BORDER_REPLICATE,
                                       ctx);
  };
  return npp_print_cold_hot(ctx, count, iters, run_on);
}
