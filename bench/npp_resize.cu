// NPP's resize timed with CUDA events: the peer that bench_upscale compares
// its kernel with. A separate program because NPP ships only with full CUDA
// toolkits (the GPU machine has it, the build machine may not).
// Build: nvcc -O2 -o npp_resize npp_resize.cu -lnppig -lnppc
// Usage: npp_resize SW SH DW DH INTERP ITERS  (RGBA; INTERP as NppiInterpolationMode:
//        1 nearest, 2 linear, 4 cubic)
// Prints "ms=<mean milliseconds per frame>" or an error on stderr.
#include <cuda_runtime.h>
#include <npp.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                             \
  do {                                                                       \
    cudaError_t e_ = (x);                                                    \
    if (e_ != cudaSuccess) {                                                 \
      fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));               \
      return 1;                                                              \
    }                                                                        \
  } while (0)

int main(int argc, char** argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: %s SW SH DW DH INTERP ITERS\n", argv[0]);
    return 2;
  }
  const int sw = atoi(argv[1]), sh = atoi(argv[2]), dw = atoi(argv[3]), dh = atoi(argv[4]);
  const int interp = atoi(argv[5]), iters = atoi(argv[6]);
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  NppStreamContext ctx = {};
  int dev = 0;
  CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, dev));
  ctx.hStream = stream;
  ctx.nCudaDeviceId = dev;
  ctx.nMultiProcessorCount = prop.multiProcessorCount;
  ctx.nMaxThreadsPerMultiProcessor = prop.maxThreadsPerMultiProcessor;
  ctx.nMaxThreadsPerBlock = prop.maxThreadsPerBlock;
  ctx.nSharedMemPerBlock = prop.sharedMemPerBlock;
  ctx.nCudaDevAttrComputeCapabilityMajor = prop.major;
  ctx.nCudaDevAttrComputeCapabilityMinor = prop.minor;
  CHECK(cudaStreamGetFlags(stream, &ctx.nStreamFlags));

  size_t spitch = 0, dpitch = 0;
  Npp8u *src = nullptr, *dst = nullptr;
  CHECK(cudaMallocPitch(&src, &spitch, sw * 4, sh));
  CHECK(cudaMallocPitch(&dst, &dpitch, dw * 4, dh));
  CHECK(cudaMemset2D(src, spitch, 77, sw * 4, sh));
  const NppiSize ssize = {sw, sh}, dsize = {dw, dh};
  const NppiRect sroi = {0, 0, sw, sh}, droi = {0, 0, dw, dh};
  auto run = [&]() {
    return nppiResize_8u_C4R_Ctx(src, (int)spitch, ssize, sroi, dst, (int)dpitch, dsize, droi,
                                 interp, ctx);
  };
  for (int i = 0; i < 3; i++) {
    const NppStatus s = run();
    if (s != NPP_SUCCESS) {
      fprintf(stderr, "NPP error %d\n", (int)s);
      return 1;
    }
  }
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  CHECK(cudaEventRecord(a, stream));
  for (int i = 0; i < iters; i++) run();
  CHECK(cudaEventRecord(b, stream));
  CHECK(cudaEventSynchronize(b));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, a, b));
  printf("ms=%.5f\n", ms / iters);
  return 0;
}
