// The CUDA runtime side of cuda_resources.hpp (built only with CUDA).
#include "cudafx/cuda_resources.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <utility>

#include "common/cuda_check.hpp"

namespace cudafx {

bool cuda_built() { return true; }

Status cuda_device_count(int* count) {
  *count = 0;
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    cudaGetLastError();  // not sticky: clear it so later calls start clean
    // The runtime reports a missing driver as an "insufficient" one; say
    // which it is.
    if (err == cudaErrorInsufficientDriver) {
      void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
      if (!driver)
        return Status::error(StatusCode::Unsupported,
                             "no NVIDIA driver: libcuda.so.1 cannot be loaded");
      dlclose(driver);
    }
    return cuda_status(err, "cudaGetDeviceCount");
  }
  *count = n;
  return Status::ok();
}

Status cuda_device_name(int device, std::string* name) {
  cudaDeviceProp prop;
  CUDAFX_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  *name = prop.name;
  return Status::ok();
}

Status cuda_use_device(int device) {
  CUDAFX_CUDA_TRY(cudaSetDevice(device));
  return Status::ok();
}

Status cuda_current_device(int* device) {
  CUDAFX_CUDA_TRY(cudaGetDevice(device));
  return Status::ok();
}

// -- CudaStream --
CudaStream::~CudaStream() { reset(); }
CudaStream::CudaStream(CudaStream&& o) noexcept : stream_(std::exchange(o.stream_, nullptr)) {}
CudaStream& CudaStream::operator=(CudaStream&& o) noexcept {
  if (this != &o) {
    reset();
    stream_ = std::exchange(o.stream_, nullptr);
  }
  return *this;
}
Status CudaStream::create() {
  reset();
  cudaStream_t s = nullptr;
  CUDAFX_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  stream_ = s;
  return Status::ok();
}
void CudaStream::reset() {
  if (stream_)
    cudaStreamDestroy(stream_);
  stream_ = nullptr;
}
Status CudaStream::synchronize() const { return synchronize_stream(stream_); }

Status synchronize_stream(StreamHandle stream) {
  CUDAFX_CUDA_TRY(cudaStreamSynchronize(stream));
  return Status::ok();
}

// -- memory sources --
Status detail::DeviceMemory::allocate(size_t bytes, void** out) {
  *out = nullptr;
  CUDAFX_CUDA_TRY(cudaMalloc(out, bytes));
  return Status::ok();
}
void detail::DeviceMemory::release(void* ptr) { cudaFree(ptr); }
Status detail::PinnedMemory::allocate(size_t bytes, void** out) { return pinned_alloc(bytes, out); }
void detail::PinnedMemory::release(void* ptr) { pinned_free(ptr); }

Status pinned_alloc(size_t bytes, void** out) {
  *out = nullptr;
  CUDAFX_CUDA_TRY(cudaHostAlloc(out, bytes, cudaHostAllocPortable));
  return Status::ok();
}

void pinned_free(void* ptr) {
  if (ptr)
    cudaFreeHost(ptr);
}

// -- CudaEvent --
CudaEvent::~CudaEvent() {
  if (event_)
    cudaEventDestroy(event_);
}
Status CudaEvent::create() {
  if (event_)
    return Status::ok();
  CUDAFX_CUDA_TRY(cudaEventCreate(&event_));
  return Status::ok();
}
Status CudaEvent::create_blocking() {
  if (event_)
    return Status::ok();
  CUDAFX_CUDA_TRY(cudaEventCreateWithFlags(&event_, cudaEventBlockingSync | cudaEventDisableTiming));
  return Status::ok();
}
Status CudaEvent::record(StreamHandle stream) {
  CUDAFX_CUDA_TRY(cudaEventRecord(event_, stream));
  return Status::ok();
}
Status CudaEvent::synchronize() {
  CUDAFX_CUDA_TRY(cudaEventSynchronize(event_));
  return Status::ok();
}
Status CudaEvent::wait(StreamHandle stream) const {
  CUDAFX_CUDA_TRY(cudaStreamWaitEvent(stream, event_, 0));
  return Status::ok();
}
Status CudaEvent::elapsed_since(const CudaEvent& start, float* ms) const {
  CUDAFX_CUDA_TRY(cudaEventElapsedTime(ms, start.event_, event_));
  return Status::ok();
}

CudaGraph::~CudaGraph() { reset(); }
CudaGraph::CudaGraph(CudaGraph&& o) noexcept : exec_(std::exchange(o.exec_, nullptr)) {}
CudaGraph& CudaGraph::operator=(CudaGraph&& o) noexcept {
  if (this != &o) {
    reset();
    exec_ = std::exchange(o.exec_, nullptr);
  }
  return *this;
}
void CudaGraph::reset() {
  if (exec_)
    cudaGraphExecDestroy(exec_);
  exec_ = nullptr;
}
Status CudaGraph::begin_capture(StreamHandle stream) {
  reset();
  // Thread-local: other threads' calls (another element allocating) do
  // not disturb the capture.
  const Status st = cuda_status(
      cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  if (!st.is_ok())
    (void)cudaGetLastError();  // not left for the next launch's check to find
  return st;
}
Status CudaGraph::end_capture(StreamHandle stream, Status queued) {
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  Status st = queued.is_ok() ? cuda_status(ended, "cudaStreamEndCapture") : queued;
  if (st.is_ok())
    st = cuda_status(cudaGraphInstantiate(&exec_, graph, 0), "cudaGraphInstantiate");
  if (graph)
    cudaGraphDestroy(graph);
  if (!st.is_ok()) {
    exec_ = nullptr;
    // A call refused inside the capture leaves its error as the thread's
    // last: cleared, so that the work queued call by call after it is not
    // failed by a kernel wrapper's cudaGetLastError.
    (void)cudaGetLastError();
  }
  return st;
}
Status CudaGraph::launch(StreamHandle stream) const {
  if (!exec_)
    return Status::invalid("CUDA graph: launched before it was captured");
  CUDAFX_CUDA_TRY(cudaGraphLaunch(exec_, stream));
  return Status::ok();
}

Status copy_bytes_async(void* dst, const void* src, size_t bytes, StreamHandle stream) {
  CUDAFX_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream));
  return Status::ok();
}

Status fill_bytes_async(void* dst, int value, size_t bytes, StreamHandle stream) {
  CUDAFX_CUDA_TRY(cudaMemsetAsync(dst, value, bytes, stream));
  return Status::ok();
}

namespace {

bool in_device_memory(const void* p) {
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();  // not a pointer CUDA knows: host memory
    return false;
  }
  return a.type == cudaMemoryTypeDevice;
}

}  // namespace

Status copy_image_async(const ImageView& dst, const ImageView& src, StreamHandle stream) {
  CUDAFX_TRY(validate_view(src, src.desc, "copy source"));
  CUDAFX_TRY(validate_view(dst, src.desc, "copy destination"));
  const int n = format_info(src.desc.format).n_planes;
  // Across the bus, one linear copy, row padding included, where the
  // pitches match: a 2D copy of many short rows runs at about half the bus
  // speed (measured on an H200). Device to device, a 2D copy runs at memory
  // speed and reads no padding, which upstream elements may never have
  // written.
  const bool linear_ok = !(in_device_memory(src.data[0]) && in_device_memory(dst.data[0]));
  for (int i = 0; i < n; i++) {
    const PlaneView s = src.plane(i), d = dst.plane(i);
    if (linear_ok && s.pitch == d.pitch) {
      const size_t bytes = (static_cast<size_t>(s.height) - 1) * s.pitch + s.row_bytes();
      CUDAFX_CUDA_TRY(cudaMemcpyAsync(d.data, s.data, bytes, cudaMemcpyDefault, stream));
    } else {
      CUDAFX_CUDA_TRY(cudaMemcpy2DAsync(d.data, d.pitch, s.data, s.pitch, s.row_bytes(),
                                        s.height, cudaMemcpyDefault, stream));
    }
  }
  return Status::ok();
}

Status cuda_device_integrated(bool* integrated) {
  int device = 0, value = 0;
  CUDAFX_CUDA_TRY(cudaGetDevice(&device));
  CUDAFX_CUDA_TRY(cudaDeviceGetAttribute(&value, cudaDevAttrIntegrated, device));
  *integrated = value != 0;
  return Status::ok();
}

// -- HostMapping --
Status HostMapping::map(const ImageView& host, bool pinned, ImageView* device) {
  release();
  CUDAFX_TRY(validate_view(host, host.desc, "mapped frame"));
  int dev = 0, unified = 0;
  CUDAFX_CUDA_TRY(cudaGetDevice(&dev));
  CUDAFX_CUDA_TRY(cudaDeviceGetAttribute(&unified, cudaDevAttrUnifiedAddressing, dev));
  if (!unified)
    return Status::error(StatusCode::Unsupported,
                         "host memory is mapped only under unified addressing");
  *device = host;
  if (pinned)  // pinned_alloc's memory: the device uses the host addresses
    return Status::ok();
  // One range over every plane: planes of one buffer share pages, and a
  // page can be registered only once.
  const int n = format_info(host.desc.format).n_planes;
  uint8_t *lo = nullptr, *hi = nullptr;
  for (int i = 0; i < n; i++) {
    const PlaneView p = host.plane(i);
    uint8_t* end = p.data + (static_cast<size_t>(p.height) - 1) * p.pitch + p.row_bytes();
    lo = !lo || p.data < lo ? p.data : lo;
    hi = !hi || end > hi ? end : hi;
  }
  const cudaError_t e = cudaHostRegister(lo, static_cast<size_t>(hi - lo), cudaHostRegisterMapped);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky
    return Status::error(StatusCode::Unsupported,
                         std::string("cannot map the frame's host memory: ") + cudaGetErrorString(e));
  }
  registered_ = lo;
  void* mapped = nullptr;
  int host_pointer_ok = 0;
  if (cudaHostGetDevicePointer(&mapped, lo, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    CUDAFX_CUDA_TRY(cudaDeviceGetAttribute(&host_pointer_ok,
                                           cudaDevAttrCanUseHostPointerForRegisteredMem, dev));
    if (!host_pointer_ok) {
      release();
      return Status::error(StatusCode::Unsupported, "the device gives no address for mapped host memory");
    }
    mapped = lo;
  }
  for (int i = 0; i < n; i++)
    device->data[i] = static_cast<uint8_t*>(mapped) + (host.data[i] - lo);
  return Status::ok();
}

void HostMapping::release() {
  if (registered_) {
    if (cudaHostUnregister(registered_) != cudaSuccess)
      (void)cudaGetLastError();
    registered_ = nullptr;
  }
}

}  // namespace cudafx
