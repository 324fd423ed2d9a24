/* GstCudaFxDevice: the CUDA side of an element, shared by the filter base
 * class and the codec elements (which derive from GstVideoEncoder and
 * GstVideoDecoder, not from the filter):
 *  - the backend rule, applied at start: cpu when asked; else the shared
 *    CUDA context (neighbours' "gst.cuda.context", or a new one for
 *    `cuda-device-id`), falling back to the CPU with a warning for auto and
 *    failing with an error for cuda;
 *  - the element's side of context sharing (set_context, context queries);
 *  - one CUDA stream, the pinned allocator, CUDA and pinned buffer pools;
 *  - device staging images for frames that arrive in system memory.
 * It is used from one thread at a time (state changes, or the streaming
 * thread), as a GstElement's vfuncs are. */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include "cudafx/backend.hpp"
#include "cudafx/cuda_resources.hpp"
#include "cudafx/image.hpp"
#include "gstcudafxconfig.h"
#include "gstcudafxcontext.h"
#include "gstcudafxenums.h"

#define GST_CUDA_FX_DEFAULT_BACKEND GST_CUDA_FX_BACKEND_AUTO
#define GST_CUDA_FX_DEFAULT_DEVICE_ID -1

/* The property ids of `backend` and `cuda-device-id`, above any id an
 * element gives its own properties, so that an element's set_property and
 * get_property hand them to GstCudaFxDevice unchanged. */
enum
{
  GST_CUDA_FX_DEVICE_PROP_BACKEND = 0x1000,
  GST_CUDA_FX_DEVICE_PROP_CUDA_DEVICE_ID,
};

/* Installs the `backend` and `cuda-device-id` properties (read at start). */
void gst_cuda_fx_install_device_properties (GObjectClass * klass);

class GstCudaFxDevice
{
public:
  GstCudaFxDevice () = default;
  ~GstCudaFxDevice ();
  GstCudaFxDevice (const GstCudaFxDevice &) = delete;
  GstCudaFxDevice & operator= (const GstCudaFxDevice &) = delete;

  /* The element's `backend` and `cuda-device-id` properties, read and
   * written under the element's object lock. */
  GstCudaFxBackend backend_setting = GST_CUDA_FX_DEFAULT_BACKEND;
  gint device_id_setting = GST_CUDA_FX_DEFAULT_DEVICE_ID;

  /* An element's set_property / get_property for the two properties above,
   * under the object lock; false for any other id (the element's own). */
  bool set_property (GObject * object, guint prop_id, const GValue * value);
  bool get_property (GObject * object, guint prop_id, GValue * value);

  /* Applies the backend rule to the settings. FALSE (with an element error
   * posted) for backend=cuda without a usable device, and for a
   * `cuda-device-id` past the last device with backend=cuda or auto. */
  gboolean start (GstElement * element);
  /* Releases the stream, allocator and context. Resources the element made
   * in the context (its op, staging buffers) must be released before, in a
   * Scope. */
  void stop ();

  bool started () const { return started_; }
  cudafx::Backend backend () const { return backend_; }
  bool cuda () const { return backend_ == cudafx::Backend::Cuda; }
  GstObject *context () const { return context_; }
  gint device_id () const { return device_id_; }
  cudafx::StreamHandle stream () const { return stream_.get (); }
  cudafx::Status synchronize () { return stream_.synchronize (); }
  GstAllocator *pinned () const { return pinned_; }

  /* The element's set_context and context query, for its context. */
  void set_context (GstElement * element, GstContext * context);
  gboolean handle_context_query (GstElement * element, GstQuery * query);

  /* Memory the CUDA backend can use in place: CUDA memory of our context. */
  bool is_our_cuda (GstBuffer * buffer) const;
  /* A configured pool of CUDA memory for `caps`; *size is updated to the
   * pool's (padded) buffer size. NULL without libgstcuda or a context. */
  GstBufferPool *new_cuda_pool (GstCaps * caps, guint * size, guint min, guint max);
  /* Answers an allocation query from upstream: the video meta, and when a
   * pool is wanted, the pool for its caps (CUDA memory: a CUDA pool; system
   * memory with the CUDA backend: a pinned pool, and the pinned allocator as
   * the query's allocation parameter; else a plain video pool). With
   * `add_video_meta` false (a passthrough element, whose buffers go on
   * downstream: only downstream may say that it reads the meta) the meta is
   * left out of the query. */
  gboolean propose_allocation (GstElement * element, GstQuery * query,
      bool add_video_meta = true);

  /* A device image shaped like `host` in `buf` (grown when too small, else
   * reused: no per-frame allocation). Rows keep the host pitch when it is a
   * multiple of 16, so that each copy between them is one linear copy; a new
   * buffer is zeroed on `stream`, so the row padding such copies carry is
   * never uninitialised memory. */
  static cudafx::Status staging_view (cudafx::DeviceBuffer & buf,
      const cudafx::ImageView & host, cudafx::ImageView * view, cudafx::StreamHandle stream);

  /* Makes the element's context current for the scope. */
  class Scope
  {
  public:
    explicit Scope (const GstCudaFxDevice & dev)
        : inner_ (dev.context_, dev.device_id_) {}
    const cudafx::Status & status () const { return inner_.status (); }
  private:
    GstCudaFxContextScope inner_;
  };

private:
  cudafx::Backend backend_ = cudafx::Backend::Cpu;
  bool started_ = false;
  GstObject *context_ = nullptr;  /* GstCudaContext, with libgstcuda */
  gint device_id_ = -1;
  cudafx::CudaStream stream_;
  GstAllocator *pinned_ = nullptr;
};

/* TRUE when the first structure of `caps` has memory:CUDAMemory. */
gboolean gst_cuda_fx_caps_are_cuda (GstCaps * caps);

/* `caps` (taken) without its CUDA-memory structures: what an element on
 * the CPU backend, which has no CUDA context, can take. */
GstCaps *gst_cuda_fx_caps_drop_cuda_memory (GstCaps * caps);

/* The view of a mapped frame's planes. */
cudafx::ImageView gst_cuda_fx_view_of_frame (const GstVideoFrame * frame,
    const cudafx::ImageDesc & desc);

/* Maps `buffer` for `flags`, adding GST_MAP_CUDA (device pointers) when it
 * is CUDA memory of `dev`'s context. *on_device tells which it got. First
 * checks what a GstVideoMeta on the buffer says (gst_cuda_fx_check_frame_layout):
 * a layout that cannot be mapped safely is an error naming the cause. */
cudafx::Status gst_cuda_fx_map_frame (const GstCudaFxDevice & dev, GstVideoFrame * frame,
    const GstVideoInfo * info, GstBuffer * buffer, GstMapFlags flags, bool *on_device);

/* OK when `buffer` holds a whole frame of `info`: with a GstVideoMeta, of the
 * negotiated format and size, every plane's rows (pitch at least a row, not
 * negative) inside the buffer; without one, at least the frame's size.
 * gst_video_frame_map trusts the meta and reads past the buffer's end. */
cudafx::Status gst_cuda_fx_check_frame_layout (const GstVideoInfo * info, GstBuffer * buffer);

/* Maps a GstVideoFormat onto the cudafx one; FALSE if cudafx has none. */
gboolean gst_cuda_fx_desc_from_info (const GstVideoInfo * info, cudafx::ImageDesc * desc);
