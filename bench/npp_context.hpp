// What the NPP helper programs share: error checks, an NppStreamContext
// for a new non-blocking stream on the current device, the benchmarks'
// cold-buffer rule and their input noise.
#pragma once

#include <cuda_runtime.h>
#include <npp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

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

// The benchmarks' cold-buffer rule (bench_support's cold_count): the frames a
// timing rotates through, inputs and outputs together, cover at least 256 MB
// (over 4x the L2 of an H100 or H200), so that no call finds its frame in
// the cache; at most 512.
inline int cold_count(size_t bytes_per_frame) {
  const size_t cold = size_t(256) << 20;
  return static_cast<int>(std::min<size_t>(512, (cold + bytes_per_frame - 1) / bytes_per_frame));
}

// bench::fill's noise: the same generator and seed over `bytes` bytes, so
// that a helper's tightly packed frame is byte for byte the benchmark's.
inline std::vector<uint8_t> bench_noise(size_t bytes) {
  std::vector<uint8_t> v(bytes);
  uint32_t s = 12345;
  for (auto& b : v) {
    s = s * 1664525u + 1013904223u;
    b = static_cast<uint8_t>(s >> 24);
  }
  return v;
}
