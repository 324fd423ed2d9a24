#include "gstcudafxcontext.h"

#include "cudafx/cuda_resources.hpp"

GstCudaFxContextScope::GstCudaFxContextScope (GstObject * context, int device_id)
{
#if HAVE_GSTCUDA
  if (context) {
    pushed_ = gst_cuda_context_push (GST_CUDA_CONTEXT (context));
    if (!pushed_)
      status_ = cudafx::Status::error (cudafx::StatusCode::CudaError,
          "cannot make the CUDA context current");
    return;
  }
#else
  (void) context;
#endif
  status_ = cudafx::cuda_use_device (device_id < 0 ? 0 : device_id);
}

GstCudaFxContextScope::~GstCudaFxContextScope ()
{
#if HAVE_GSTCUDA
  if (pushed_)
    gst_cuda_context_pop (nullptr);
#endif
}

cudafx::Status
gst_cuda_fx_open_device (GstElement * element, gint device_id,
    GstObject ** context, gint * actual_device_id)
{
  *actual_device_id = -1;
  if (!cudafx::cuda_built ())
    return cudafx::Status::error (cudafx::StatusCode::Unsupported,
        "this build of cudafx has no CUDA support");
  int count = 0;
  cudafx::Status s = cudafx::cuda_device_count (&count);
  if (!s.is_ok ())
    return s;
  if (count == 0)
    return cudafx::Status::error (cudafx::StatusCode::Unsupported,
        "no CUDA device found");
  if (device_id >= count)
    return cudafx::Status::invalid ("cuda-device-id " + std::to_string (device_id) +
        " does not exist: " + std::to_string (count) +
        (count == 1 ? " CUDA device found" : " CUDA devices found"));
#if HAVE_GSTCUDA
  if (!gst_cuda_load_library ())
    return cudafx::Status::error (cudafx::StatusCode::Unsupported,
        "libgstcuda cannot load the CUDA driver library");
  /* A context that set_context() gave us already is kept. */
  GstObject *before = *context;
  GstCudaContext *ctx = before ? GST_CUDA_CONTEXT (before) : nullptr;
  const gboolean ok = gst_cuda_ensure_element_context (element, device_id, &ctx) && ctx;
  /* A context this element creates is also handed to its own set_context()
   * on the way (libgstcuda propagates it), which stores a second reference
   * in *context: drop that one, or every start leaks a CUDA context. */
  if (*context != before)
    gst_clear_object (context);
  if (!ok)
    return cudafx::Status::error (cudafx::StatusCode::CudaError,
        "cannot create a CUDA context for device " + std::to_string (device_id));
  guint id = 0;
  g_object_get (ctx, "cuda-device-id", &id, nullptr);
  *context = GST_OBJECT (ctx);
  *actual_device_id = static_cast < gint > (id);
  return cudafx::Status::ok ();
#else
  (void) element;
  (void) context;
  *actual_device_id = device_id < 0 ? 0 : device_id;
  return cudafx::cuda_use_device (*actual_device_id);
#endif
}
