// cuda_resources.hpp in a build without CUDA: every call says so.
#include "cudafx/cuda_resources.hpp"

namespace cudafx {
namespace {
Status no_cuda() {
  return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
}
}  // namespace

bool cuda_built() { return false; }
Status cuda_device_count(int* count) {
  *count = 0;
  return no_cuda();
}
Status cuda_device_name(int, std::string*) { return no_cuda(); }
Status cuda_use_device(int) { return no_cuda(); }
Status cuda_current_device(int*) { return no_cuda(); }

CudaStream::~CudaStream() = default;
CudaStream::CudaStream(CudaStream&&) noexcept = default;
CudaStream& CudaStream::operator=(CudaStream&&) noexcept = default;
Status CudaStream::create() { return no_cuda(); }
void CudaStream::reset() {}
Status CudaStream::synchronize() const { return no_cuda(); }

Status detail::DeviceMemory::allocate(size_t, void** out) {
  *out = nullptr;
  return no_cuda();
}
void detail::DeviceMemory::release(void*) {}
Status detail::PinnedMemory::allocate(size_t, void** out) {
  *out = nullptr;
  return no_cuda();
}
void detail::PinnedMemory::release(void*) {}

Status pinned_alloc(size_t, void** out) {
  *out = nullptr;
  return no_cuda();
}
void pinned_free(void*) {}

CudaEvent::~CudaEvent() = default;
Status CudaEvent::create() { return no_cuda(); }
Status CudaEvent::create_blocking() { return no_cuda(); }
Status CudaEvent::record(StreamHandle) { return no_cuda(); }
Status CudaEvent::synchronize() { return no_cuda(); }
Status CudaEvent::wait(StreamHandle) const { return no_cuda(); }
Status CudaEvent::elapsed_since(const CudaEvent&, float*) const { return no_cuda(); }

CudaGraph::~CudaGraph() = default;
CudaGraph::CudaGraph(CudaGraph&&) noexcept = default;
CudaGraph& CudaGraph::operator=(CudaGraph&&) noexcept = default;
void CudaGraph::reset() {}
Status CudaGraph::begin_capture(StreamHandle) { return no_cuda(); }
Status CudaGraph::end_capture(StreamHandle, Status) { return no_cuda(); }
Status CudaGraph::launch(StreamHandle) const { return no_cuda(); }

Status synchronize_stream(StreamHandle) { return no_cuda(); }
Status copy_bytes_async(void*, const void*, size_t, StreamHandle) { return no_cuda(); }
Status fill_bytes_async(void*, int, size_t, StreamHandle) { return no_cuda(); }
Status copy_image_async(const ImageView&, const ImageView&, StreamHandle) { return no_cuda(); }

Status cuda_device_integrated(bool* integrated) {
  *integrated = false;
  return no_cuda();
}
Status HostMapping::map(const ImageView&, bool, ImageView*) { return no_cuda(); }
void HostMapping::release() {}

}  // namespace cudafx
