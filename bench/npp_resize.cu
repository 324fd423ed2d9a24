// NPP's resize timed with CUDA events: the peer that bench_upscale compares
// its kernel with. A separate program because NPP ships only with full CUDA
// toolkits (the GPU machine has it, the build machine may not).
// Build: nvcc -O2 -o npp_resize npp_resize.cu -lnppig -lnppc
// Usage: npp_resize SW SH DW DH INTERP ITERS  (RGBA; INTERP as NppiInterpolationMode:
//        1 nearest, 2 linear, 4 cubic)
// Prints "frames=<pairs rotated>", "ms=<mean milliseconds per frame, cold>"
// and "hot_ms=<the same, one input and output every call>", or an error on
// stderr.
//
// Cold, as bench_upscale times our kernel: distinct input and output frames
// (cudaMallocPitch each) called round-robin, covering at least 256 MB
// together (cold_count), one rotation of warm-up first. Every input holds
// bench_upscale's noise (bench::fill's generator and seed), so both time the
// same random frame.
#include "npp_context.hpp"

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: %s SW SH DW DH INTERP ITERS\n", argv[0]);
    return 2;
  }
  const int sw = atoi(argv[1]), sh = atoi(argv[2]), dw = atoi(argv[3]), dh = atoi(argv[4]);
  const int interp = atoi(argv[5]), iters = atoi(argv[6]);
  if (sw <= 0 || sh <= 0 || dw <= 0 || dh <= 0 || iters <= 0) {
    fprintf(stderr, "bad arguments\n");
    return 2;
  }
  NppStreamContext ctx;
  if (npp_stream_context(&ctx))
    return 1;

  size_t spitch = 0, dpitch = 0;
  std::vector<Npp8u*> src, dst;
  const size_t srow = static_cast<size_t>(sw) * 4, drow = static_cast<size_t>(dw) * 4;
  if (npp_grow_pitched(&src, 1, srow, sh, &spitch) || npp_grow_pitched(&dst, 1, drow, dh, &dpitch))
    return 1;
  const int count = cold_count(spitch * sh + dpitch * dh);
  if (npp_grow_pitched(&src, count, srow, sh, &spitch) ||
      npp_grow_pitched(&dst, count, drow, dh, &dpitch))
    return 1;
  const std::vector<uint8_t> noise = bench_noise(static_cast<size_t>(sw) * 4 * sh);
  for (int i = 0; i < count; i++)
    NPP_HELPER_CHECK(cudaMemcpy2D(src[i], spitch, noise.data(), static_cast<size_t>(sw) * 4,
                                  static_cast<size_t>(sw) * 4, sh, cudaMemcpyHostToDevice));

  const NppiSize ssize = {sw, sh}, dsize = {dw, dh};
  const NppiRect sroi = {0, 0, sw, sh}, droi = {0, 0, dw, dh};
  auto run_on = [&](int i) -> NppStatus {
    return nppiResize_8u_C4R_Ctx(src[i], (int)spitch, ssize, sroi, dst[i], (int)dpitch, dsize, droi,
                                 interp, ctx);
  };
  return npp_print_cold_hot(ctx, count, iters, run_on);
}
