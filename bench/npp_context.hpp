// What the NPP helper programs share: error checks, an NppStreamContext
// for a new non-blocking stream on the current device, the benchmarks'
// cold-buffer rule and their input noise, the rotation of pitched frames and
// the cold/hot report.
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

// Grows *frames to `count` frames of `row_bytes` x `height` from
// cudaMallocPitch. The first frame sets *pitch; a later one with another
// pitch is an error (the helpers pass one step for all of them). Returns 0,
// or 1 after printing the error.
template <class T>
int npp_grow_pitched(std::vector<T*>* frames, int count, size_t row_bytes, int height,
                     size_t* pitch) {
  while (static_cast<int>(frames->size()) < count) {
    T* frame = nullptr;
    size_t p = 0;
    NPP_HELPER_CHECK(cudaMallocPitch(reinterpret_cast<void**>(&frame), &p, row_bytes, height));
    if (frames->empty()) {
      *pitch = p;
    } else if (p != *pitch) {
      fprintf(stderr, "cudaMallocPitch gave different pitches for the same size\n");
      return 1;
    }
    frames->push_back(frame);
  }
  return 0;
}

// One round of the rotation, each call checked, so that the timed calls
// find the buffers as they will stay: touched, but long out of the cache.
// `run` takes the next frame itself. Returns 0, or 1 after printing the NPP
// error.
template <class F>
int npp_warm_rotation(int count, F run) {
  for (int i = 0; i < count; i++) {
    const NppStatus s = run();
    if (s != NPP_SUCCESS) {
      fprintf(stderr, "NPP error %d\n", (int)s);
      return 1;
    }
  }
  return 0;
}

// The helpers' report: after a warm rotation, the mean milliseconds per call
// cold (frame i % count on call i) and hot (frame 0 every call), printed as
// "frames=", "ms=" and "hot_ms=". Returns 0, or 1 after an error.
template <class F>
int npp_print_cold_hot(const NppStreamContext& ctx, int count, int iters, F run_on) {
  int next = 0;
  auto cold = [&]() { return run_on(next++ % count); };
  if (npp_warm_rotation(count, cold))
    return 1;
  const double ms = npp_ms_per_call(ctx, iters, cold);
  const double hot_ms = npp_ms_per_call(ctx, iters, [&]() { return run_on(0); });
  if (ms < 0 || hot_ms < 0)
    return 1;
  printf("frames=%d\n", count);
  printf("ms=%.5f\n", ms);
  printf("hot_ms=%.5f\n", hot_ms);
  return 0;
}
