// RAII owners for CUDA resources, and the few runtime calls the elements
// need. This header does not include the CUDA headers, so code built without
// the CUDA toolkit can use it; in a build without CUDA every call reports
// StatusCode::Unsupported.
//
// Everything here uses the CUDA context current on the calling thread (the
// one libgstcuda pushed, or the device's primary context). Resources must be
// released with the same context current as when they were made.
#pragma once

#include <cstddef>
#include <string>

#include "cudafx/image.hpp"
#include "cudafx/status.hpp"

struct CUstream_st;
struct CUevent_st;
struct CUgraphExec_st;

namespace cudafx {

// cudaStream_t and CUstream are both this type.
using StreamHandle = CUstream_st*;

// True when this library was built with the CUDA backend.
bool cuda_built();
// Number of usable CUDA devices; an error when the driver is missing or
// broken (its message says why), Unsupported when built without CUDA.
Status cuda_device_count(int* count);
Status cuda_device_name(int device, std::string* name);
// Makes `device`'s primary context current on this thread. Only for callers
// that do not manage contexts themselves (tests, benchmarks, elements
// without libgstcuda).
Status cuda_use_device(int device);
// The device of the current context.
Status cuda_current_device(int* device);

// A stream that does not synchronise with the legacy default stream.
class CudaStream {
 public:
  CudaStream() = default;
  ~CudaStream();
  CudaStream(CudaStream&& o) noexcept;
  CudaStream& operator=(CudaStream&& o) noexcept;
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  Status create();
  void reset();
  StreamHandle get() const { return stream_; }
  explicit operator bool() const { return stream_ != nullptr; }
  // Waits for the work queued on this stream only.
  Status synchronize() const;

 private:
  StreamHandle stream_ = nullptr;
};

namespace detail {

// Where an OwnedMemory's bytes come from.
struct DeviceMemory {
  static Status allocate(size_t bytes, void** out);
  static void release(void* ptr);
};
// Page-locked host memory, portable across contexts, so copies from and to
// it run at full bus speed and asynchronously.
struct PinnedMemory {
  static Status allocate(size_t bytes, void** out);
  static void release(void* ptr);
};

// Owns one allocation of `Source`; move-only.
template <class Source>
class OwnedMemory {
 public:
  OwnedMemory() = default;
  ~OwnedMemory() { reset(); }
  OwnedMemory(OwnedMemory&& o) noexcept : ptr_(o.ptr_), size_(o.size_) {
    o.ptr_ = nullptr;
    o.size_ = 0;
  }
  OwnedMemory& operator=(OwnedMemory&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = o.ptr_;
      size_ = o.size_;
      o.ptr_ = nullptr;
      o.size_ = 0;
    }
    return *this;
  }
  OwnedMemory(const OwnedMemory&) = delete;
  OwnedMemory& operator=(const OwnedMemory&) = delete;

  // Frees what it held, then allocates `bytes` (no-op when already that size).
  Status allocate(size_t bytes) {
    if (bytes == size_ && ptr_)
      return Status::ok();
    reset();
    if (bytes == 0)
      return Status::ok();
    CUDAFX_TRY(Source::allocate(bytes, &ptr_));
    size_ = bytes;
    return Status::ok();
  }
  void reset() {
    if (ptr_)
      Source::release(ptr_);
    ptr_ = nullptr;
    size_ = 0;
  }
  void* get() const { return ptr_; }
  uint8_t* bytes() const { return static_cast<uint8_t*>(ptr_); }
  size_t size() const { return size_; }

 private:
  void* ptr_ = nullptr;
  size_t size_ = 0;
};

}  // namespace detail

using DeviceBuffer = detail::OwnedMemory<detail::DeviceMemory>;
using PinnedBuffer = detail::OwnedMemory<detail::PinnedMemory>;

// For allocators that manage lifetimes themselves (the GStreamer pinned
// allocator): raw page-locked allocation and release.
Status pinned_alloc(size_t bytes, void** out);
void pinned_free(void* ptr);

// Events: timing (benchmarks), and ordering work across streams.
class CudaEvent {
 public:
  CudaEvent() = default;
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  Status create();
  // An event whose synchronize() lets the host thread sleep until the work
  // is done instead of spinning on a core (no timing).
  Status create_blocking();
  Status record(StreamHandle stream);
  Status synchronize();
  // Work queued on `stream` after this call waits for the work this event
  // last recorded (none recorded yet: no wait).
  Status wait(StreamHandle stream) const;
  // Milliseconds from `start` to this event; both must have completed.
  Status elapsed_since(const CudaEvent& start, float* ms) const;

 private:
  CUevent_st* event_ = nullptr;
};

// Work captured once from a stream and launched again as one call: for a
// fixed run of kernels and copies queued every frame with the same
// arguments (each call queued costs the host microseconds; the graph's
// launch costs about one). Move-only.
class CudaGraph {
 public:
  CudaGraph() = default;
  ~CudaGraph();
  CudaGraph(CudaGraph&& o) noexcept;
  CudaGraph& operator=(CudaGraph&& o) noexcept;
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  // Replaces the graph by what `queue` queues on `stream` (a stream of the
  // caller's own, not the legacy default stream, with nothing else queued
  // on it meanwhile); nothing runs. On failure the graph is empty.
  template <class Queue>
  Status capture(StreamHandle stream, Queue&& queue) {
    CUDAFX_TRY(begin_capture(stream));
    return end_capture(stream, queue());
  }
  // Queues the captured work on `stream` (any stream).
  Status launch(StreamHandle stream) const;
  void reset();
  explicit operator bool() const { return exec_ != nullptr; }

 private:
  Status begin_capture(StreamHandle stream);
  Status end_capture(StreamHandle stream, Status queued);
  CUgraphExec_st* exec_ = nullptr;
};

// CudaGraphs by a key (what varies between the runs of some work: a slot,
// flags, a buffer), each captured at its key's first launch and launched
// after; at most N kept, the oldest replaced. Where a capture fails (a
// driver without graphs), the work is queued call by call from then on:
// slower, the same work. `queue(stream)` must queue the same calls for the
// same key every time.
template <class Key, int N>
class CudaGraphCache {
 public:
  template <class Queue>
  Status launch(const Key& key, StreamHandle stream, Queue&& queue) {
    if (failed_)
      return queue(stream);
    for (Entry& e : entries_)
      if (e.graph && e.key == key)
        return e.graph.launch(stream);
    Entry& e = entries_[next_];
    next_ = (next_ + 1) % N;
    Status st = capture_stream_ ? Status::ok() : capture_stream_.create();
    if (st.is_ok())
      st = e.graph.capture(capture_stream_.get(), [&] { return queue(capture_stream_.get()); });
    if (!st.is_ok()) {
      failed_ = true;
      return queue(stream);
    }
    e.key = key;
    return e.graph.launch(stream);
  }

 private:
  struct Entry {
    Key key{};
    CudaGraph graph;
  };
  Entry entries_[N];
  int next_ = 0;
  CudaStream capture_stream_;
  bool failed_ = false;
};

// Waits for the work queued on `stream` only.
Status synchronize_stream(StreamHandle stream);

// Copies `bytes` bytes on `stream`, host or device memory on either side.
Status copy_bytes_async(void* dst, const void* src, size_t bytes, StreamHandle stream);

// Sets `bytes` bytes of device memory to `value` on `stream`.
Status fill_bytes_async(void* dst, int value, size_t bytes, StreamHandle stream);

// Copies every plane of `src` to `dst` (same desc) on `stream`; host or device
// memory on either side (unified addressing decides the direction).
Status copy_image_async(const ImageView& dst, const ImageView& src, StreamHandle stream);

// Whether the current context's device is integrated: it shares its memory
// with the host (Jetson), so host memory it maps costs no copy.
Status cuda_device_integrated(bool* integrated);

// A host image that kernels read and write where it is (the "zero-copy"
// path): `device` is the view with the addresses the device uses. Memory
// from pinned_alloc (`pinned`) is used as it is, under unified addressing;
// other memory is page-locked and mapped (cudaHostRegister) from the first
// plane's first byte to the last plane's last, until release() or the
// destructor -- call either only once the work using it has finished, with
// the same context current. An error (nothing held) where the memory
// cannot be mapped: memory another owner has registered, read-only pages,
// a device without mapped memory; the caller copies instead.
class HostMapping {
 public:
  HostMapping() = default;
  ~HostMapping() { release(); }
  HostMapping(const HostMapping&) = delete;
  HostMapping& operator=(const HostMapping&) = delete;

  Status map(const ImageView& host, bool pinned, ImageView* device);
  void release();
  // The mapping registered the memory itself (it was not pinned).
  bool registered() const { return registered_ != nullptr; }

 private:
  void* registered_ = nullptr;
};

}  // namespace cudafx
