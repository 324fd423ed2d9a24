// Turns a cudaError_t into a Status that names the call that failed.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "cudafx/status.hpp"

namespace cudafx {

inline Status cuda_status(cudaError_t err, const char* what) {
  if (err == cudaSuccess)
    return Status::ok();
  const StatusCode code =
      err == cudaErrorMemoryAllocation ? StatusCode::OutOfMemory : StatusCode::CudaError;
  return Status::error(code, std::string(what) + ": " + cudaGetErrorName(err) + " (" +
                                 cudaGetErrorString(err) + ")");
}

#define CUDAFX_CUDA_TRY(call) CUDAFX_TRY(::cudafx::cuda_status((call), #call))

}  // namespace cudafx
