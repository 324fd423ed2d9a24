/* The CUDA context an element's CUDA work runs in.
 *
 * With libgstcuda the context is a GstCudaContext, shared with neighbouring
 * elements (ours and nvcodec's cudaupload/cudadownload) through the
 * "gst.cuda.context" GstContext; the CUDA runtime calls of libcudafx run in
 * it while it is pushed. Without libgstcuda, the device's primary context. */
#pragma once

#include <gst/gst.h>

#include <string>

#include "cudafx/status.hpp"
#include "gstcudafxconfig.h"

#if HAVE_GSTCUDA
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#include <gst/cuda/gstcudabufferpool.h>
#endif

/* Makes a context current for the lifetime of the scope. `context` is a
 * GstCudaContext or NULL (then `device_id`'s primary context). */
class GstCudaFxContextScope
{
public:
  GstCudaFxContextScope (GstObject * context, int device_id);
  ~GstCudaFxContextScope ();
  GstCudaFxContextScope (const GstCudaFxContextScope &) = delete;
  GstCudaFxContextScope & operator= (const GstCudaFxContextScope &) = delete;
  const cudafx::Status & status () const { return status_; }

private:
  bool pushed_ = false;
  cudafx::Status status_;
};

/* Opens CUDA for `element`: the shared GstCudaContext when libgstcuda is
 * there (found through the neighbours or created for `device_id`, -1 any),
 * else the primary context of `device_id`. On failure the status says why
 * in words fit for an error message; its code is InvalidArgument only when
 * `device_id` names no device ("cuda-device-id 2 does not exist: 2 CUDA
 * devices found"). *context (in/out) may already hold the
 * context a neighbour gave through set_context(); it stays NULL without
 * libgstcuda. */
cudafx::Status gst_cuda_fx_open_device (GstElement * element, gint device_id,
    GstObject ** context, gint * actual_device_id);
