// NPP's resize timed with CUDA events: the peer that bench_upscale compares
// its kernel with. A separate program because NPP ships only with full CUDA
// toolkits (the GPU machine has it, the build machine may not).
// Build: nvcc -O2 -o npp_resize npp_resize.cu -lnppig -lnppc
// Usage: npp_resize SW SH DW DH INTERP ITERS  (RGBA; INTERP as NppiInterpolationMode:
//        1 nearest, 2 linear, 4 cubic)
// Prints "ms=<mean milliseconds per frame>" or an error on stderr.
#include "npp_context.hpp"

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: %s SW SH DW DH INTERP ITERS\n", argv[0]);
    return 2;
  }
  const int sw = atoi(argv[1]), sh = atoi(argv[2]), dw = atoi(argv[3]), dh = atoi(argv[4]);
  const int interp = atoi(argv[5]), iters = atoi(argv[6]);
  NppStreamContext ctx;
  if (npp_stream_context(&ctx))
    return 1;

  size_t spitch = 0, dpitch = 0;
  Npp8u *src = nullptr, *dst = nullptr;
  NPP_HELPER_CHECK(cudaMallocPitch(&src, &spitch, sw * 4, sh));
  NPP_HELPER_CHECK(cudaMallocPitch(&dst, &dpitch, dw * 4, dh));
  NPP_HELPER_CHECK(cudaMemset2D(src, spitch, 77, sw * 4, sh));
  const NppiSize ssize = {sw, sh}, dsize = {dw, dh};
  const NppiRect sroi = {0, 0, sw, sh}, droi = {0, 0, dw, dh};
  auto run = [&]() {
    return nppiResize_8u_C4R_Ctx(src, (int)spitch, ssize, sroi, dst, (int)dpitch, dsize, droi,
                                 interp, ctx);
  };
  const double ms = npp_ms_per_call(ctx, iters, run);
  if (ms < 0)
    return 1;
  printf("ms=%.5f\n", ms);
  return 0;
}
