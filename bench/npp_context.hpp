// What the NPP helper programs share: error checks and an NppStreamContext
// for a new non-blocking stream on the current device.
#pragma once

#include <cuda_runtime.h>
#include <npp.h>

#include <cstdio>

#define NPP_HELPER_CHECK(x)                                                  \
  do {                                                                       \
    cudaError_t e_ = (x);                                                    \
    if (e_ != cudaSuccess) {                                                 \
      fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));               \
      return 1;                                                              \
    }                                                                        \
  } while (0)

// Fills *ctx for a new stream; returns 0, or 1 after printing the error.
inline int npp_stream_context(NppStreamContext* ctx) {
  cudaStream_t stream;
  NPP_HELPER_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  *ctx = NppStreamContext{};
  int dev = 0;
  NPP_HELPER_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  NPP_HELPER_CHECK(cudaGetDeviceProperties(&prop, dev));
  ctx->hStream = stream;
  ctx->nCudaDeviceId = dev;
  ctx->nMultiProcessorCount = prop.multiProcessorCount;
  ctx->nMaxThreadsPerMultiProcessor = prop.maxThreadsPerMultiProcessor;
  ctx->nMaxThreadsPerBlock = prop.maxThreadsPerBlock;
  ctx->nSharedMemPerBlock = prop.sharedMemPerBlock;
  ctx->nCudaDevAttrComputeCapabilityMajor = prop.major;
  ctx->nCudaDevAttrComputeCapabilityMinor = prop.minor;
  NPP_HELPER_CHECK(cudaStreamGetFlags(stream, &ctx->nStreamFlags));
  return 0;
}

// Mean milliseconds per call of run() over `iters` calls on ctx's stream
// after three checked warm-up calls; -1 on an NPP or CUDA error (printed).
template <class F>
double npp_ms_per_call(const NppStreamContext& ctx, int iters, F run) {
  for (int i = 0; i < 3; i++) {
    const NppStatus s = run();
    if (s != NPP_SUCCESS) {
      fprintf(stderr, "NPP error %d\n", (int)s);
      return -1;
    }
  }
  cudaEvent_t a, b;
  if (cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess)
    return -1;
  cudaEventRecord(a, ctx.hStream);
  for (int i = 0; i < iters; i++)
    run();
  cudaEventRecord(b, ctx.hStream);
  float ms = 0;
  if (cudaEventSynchronize(b) != cudaSuccess || cudaEventElapsedTime(&ms, a, b) != cudaSuccess)
    return -1;
  return ms / iters;
}
