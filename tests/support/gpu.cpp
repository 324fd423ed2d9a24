#include "gpu.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

namespace testing_support {

using namespace cudafx;

bool gpu_available(std::string* why) {
  int n = 0;
  const Status s = cuda_device_count(&n);
  if (!s.is_ok()) {
    if (why)
      *why = s.message();
    return false;
  }
  if (n == 0) {
    if (why)
      *why = "no CUDA devices";
    return false;
  }
  return cuda_use_device(0).is_ok();
}

int gpu_count() {
  int n = 0;
  if (!cuda_device_count(&n).is_ok())
    return 0;
  return n;
}

GpuGate gpus_gate(int n, int have, const char* require_gpus_env) {
  if (have >= n)
    return GpuGate::Run;
  const int required = require_gpus_env ? std::atoi(require_gpus_env) : 0;
  return required >= n ? GpuGate::Fail : GpuGate::Skip;
}

GpuGate gpu_gate(bool available, const char* require_gpu_env) {
  if (available)
    return GpuGate::Run;
  const bool required =
      require_gpu_env && *require_gpu_env && std::strcmp(require_gpu_env, "0") != 0;
  return required ? GpuGate::Fail : GpuGate::Skip;
}

GpuGate gpu_gate(bool available) {
  return gpu_gate(available, std::getenv("CUDAFX_REQUIRE_GPU"));
}

bool gpu_part_runs() {
  std::string why;
  const bool ok = gpu_available(&why);
  if (gpu_gate(ok) == GpuGate::Fail)
    ADD_FAILURE() << "CUDAFX_REQUIRE_GPU is set, but no usable CUDA device: " << why;
  return ok;
}

bool skip_backend(const char* backend) {
  return std::string(backend) == "cuda" && !gpu_part_runs();
}

DeviceImage::DeviceImage(ImageDesc desc, size_t align) {
  const size_t size = packed_size(desc, align);
  status_ = buf_.allocate(size + align);
  if (status_.is_ok())
    view_ = packed_view(desc, buf_.bytes(), align);
}

Status DeviceImage::upload(const ImageView& host, StreamHandle s) {
  return copy_image_async(view_, host, s);
}

Status DeviceImage::download(const ImageView& host, StreamHandle s) const {
  return copy_image_async(host, view_, s);
}

}  // namespace testing_support
