// NPP's Harris response timed with CUDA events: the peer that bench_harris
// compares its response kernel with. A separate program because NPP ships
// only with full CUDA toolkits (the GPU machine has it, the build machine
// may not). Build: nvcc -O2 -o npp_harris npp_harris.cu -lnppif -lnppc
// Usage: npp_harris W H GRAD AVG ITERS  (GRAY8 in, float response out;
//        Sobel GRAD = 3 or 5, averaging window AVG = 5 or 7, k = 0.04, replicate
//        border: the only border NPP's Harris takes)
// Prints "ms=<mean milliseconds per frame>" or an error on stderr.
#include "npp_context.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

uint32_t mix(uint32_t v) {
  v ^= v >> 16;
  v *= 0x7feb352du;
  v ^= v >> 15;
  v *= 0x846ca68bu;
  v ^= v >> 16;
  return v;
}

// bench_harris's test image in grey: 40-pixel squares alternating between a
// dark and a bright band of random levels, plus noise. NPP's time does not
// depend on the data; the same pattern keeps the two programs comparable.
uint8_t texture_grey(int x, int y) {
  const int sx = x / 40, sy = y / 40;
  const uint32_t h = mix(static_cast<uint32_t>(sx) * 0x9e3779b1u ^ static_cast<uint32_t>(sy) * 0x85ebca77u);
  const int level = ((sx + sy) & 1) ? 160 + static_cast<int>(h % 96) : static_cast<int>(h % 96);
  const int noise = static_cast<int>(mix(static_cast<uint32_t>(y) * 65599u + static_cast<uint32_t>(x)) % 25) - 12;
  return static_cast<uint8_t>(std::min(255, std::max(0, level + noise)));
}

NppiMaskSize mask_of(int n) {
  switch (n) {
    case 3: return NPP_MASK_SIZE_3_X_3;
    case 5: return NPP_MASK_SIZE_5_X_5;
    default: return NPP_MASK_SIZE_7_X_7;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s W H GRAD AVG ITERS\n", argv[0]);
    return 2;
  }
  const int w = atoi(argv[1]), h = atoi(argv[2]), grad = atoi(argv[3]), avg = atoi(argv[4]);
  const int iters = atoi(argv[5]);
  // What NPP's Harris takes: Sobel 3x3 or 5x5, a 5x5 or 7x7 window.
  if (w <= 0 || h <= 0 || iters <= 0 || (grad != 3 && grad != 5) || (avg != 5 && avg != 7)) {
    fprintf(stderr, "bad arguments: GRAD is 3 or 5, AVG 5 or 7\n");
    return 2;
  }
  NppStreamContext ctx;
  if (npp_stream_context(&ctx))
    return 1;

  // Distinct inputs and outputs, called round-robin (as bench_harris does).
  size_t spitch = 0, dpitch = 0;
  std::vector<Npp8u*> src;
  std::vector<Npp32f*> dst;
  const size_t drow = static_cast<size_t>(w) * sizeof(Npp32f);
  if (npp_grow_pitched(&src, 1, w, h, &spitch) || npp_grow_pitched(&dst, 1, drow, h, &dpitch))
    return 1;
  const int count = cold_count((spitch + dpitch) * h);
  if (npp_grow_pitched(&src, count, w, h, &spitch) ||
      npp_grow_pitched(&dst, count, drow, h, &dpitch))
    return 1;
  std::vector<Npp8u> grey(static_cast<size_t>(w) * h);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      grey[static_cast<size_t>(y) * w + x] = texture_grey(x, y);
  for (int i = 0; i < count; i++)
    NPP_HELPER_CHECK(cudaMemcpy2D(src[i], spitch, grey.data(), w, w, h, cudaMemcpyHostToDevice));

  const NppiSize size = {w, h};
  const NppiPoint origin = {0, 0};
  int scratch_bytes = 0;
  if (nppiFilterHarrisCornersBorderGetBufferSize(size, &scratch_bytes) != NPP_SUCCESS) {
    fprintf(stderr, "nppiFilterHarrisCornersBorderGetBufferSize failed\n");
    return 1;
  }
  // One scratch buffer, reused every call as an application would.
  Npp8u* scratch = nullptr;
  NPP_HELPER_CHECK(cudaMalloc(&scratch, std::max(scratch_bytes, 1)));
  fprintf(stderr, "npp_harris %dx%d: %d frame pairs, scratch %d bytes\n", w, h, count, scratch_bytes);

  // nScale 1: NPP scales the response only; its time does not depend on it,
  // and raw 8-bit derivative sums stay far inside float's range.
  int next = 0;
  auto run = [&]() -> NppStatus {
    const int i = next++ % count;
    return nppiFilterHarrisCornersBorder_8u32f_C1R_Ctx(
        src[i], (int)spitch, size, origin, dst[i], (int)dpitch, size, NPP_FILTER_SOBEL,
        mask_of(grad), mask_of(avg), 0.04f, 1.0f, NPP_BORDER_REPLICATE, scratch, ctx);
  };
  if (npp_warm_rotation(count, run))
    return 1;
  const double ms = npp_ms_per_call(ctx, iters, run);
  if (ms < 0)
    return 1;
  printf("ms=%.5f\n", ms);
  return 0;
}
