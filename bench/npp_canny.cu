// NPP's Canny (nppiFilterCannyBorder_8u_C1R: Sobel 3x3, L2 norm) timed with
// CUDA events on a grey frame: the peer of bench_filters' Canny rows. NPP's
// Canny starts from grey, so this adds nppiRGBToGray_8u_AC4C1R (RGBA to
// grey) before it, as our op starts from RGBA too.
// Build: nvcc -O2 -o npp_canny npp_canny.cu -lnppif -lnppicc -lnppc
// Usage: npp_canny WIDTH HEIGHT LOW HIGH ITERS
// Prints "frames=", "ms=" (cold) and "hot_ms=" as the other helpers.
#include "npp_context.hpp"

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s W H LOW HIGH ITERS\n", argv[0]);
    return 2;
  }
  const int w = atoi(argv[1]), h = atoi(argv[2]), iters = atoi(argv[5]);
  const Npp16s low = static_cast<Npp16s>(atoi(argv[3])), high = static_cast<Npp16s>(atoi(argv[4]));
  if (w <= 0 || h <= 0 || iters <= 0) {
    fprintf(stderr, "bad arguments\n");
    return 2;
  }
  NppStreamContext ctx;
  if (npp_stream_context(&ctx))
    return 1;
  size_t spitch = 0, gpitch = 0, dpitch = 0;
  std::vector<Npp8u*> src, grey, dst;
  const size_t row = static_cast<size_t>(w) * 4;
  if (npp_grow_pitched(&src, 1, row, h, &spitch) || npp_grow_pitched(&dst, 1, w, h, &dpitch))
    return 1;
  const int count = cold_count((spitch + dpitch) * h);
  if (npp_grow_pitched(&src, count, row, h, &spitch) || npp_grow_pitched(&dst, count, w, h, &dpitch) ||
      npp_grow_pitched(&grey, 1, w, h, &gpitch))
    return 1;
  const std::vector<uint8_t> noise = bench_noise(row * h);
  for (int i = 0; i < count; i++)
    NPP_HELPER_CHECK(cudaMemcpy2D(src[i], spitch, noise.data(), row, row, h, cudaMemcpyHostToDevice));
  const NppiSize size = {w, h};
  const NppiPoint origin = {0, 0};
  int buffer_bytes = 0;
  if (nppiFilterCannyBorderGetBufferSize(size, &buffer_bytes) != NPP_SUCCESS) {
    fprintf(stderr, "nppiFilterCannyBorderGetBufferSize failed\n");
    return 1;
  }
  Npp8u* buffer = nullptr;
  NPP_HELPER_CHECK(cudaMalloc(&buffer, buffer_bytes));
  auto run_on = [&](int i) -> NppStatus {
    const NppStatus s =
        nppiRGBToGray_8u_AC4C1R_Ctx(src[i], (int)spitch, grey[0], (int)gpitch, size, ctx);
    if (s != NPP_SUCCESS)
      return s;
    return nppiFilterCannyBorder_8u_C1R_Ctx(grey[0], (int)gpitch, size, origin, dst[i],
                                            (int)dpitch, size, NPP_FILTER_SOBEL,
                                            NPP_MASK_SIZE_3_X_3, low, high, nppiNormL2,
                                            NPP_BORDER_REPLICATE, buffer, ctx);
  };
  return npp_print_cold_hot(ctx, count, iters, run_on);
}
