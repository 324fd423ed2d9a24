/* GstCudaFxFilter: the base class of every cudafx video filter.
 *
 * It owns what every element needs and nothing element-specific:
 *  - the `backend` (auto|cuda|cpu) and `cuda-device-id` properties and the
 *    rule that picks the backend at start, the CUDA context shared through
 *    libgstcuda's "gst.cuda.context" (both through GstCudaFxDevice, which
 *    the codec elements use too);
 *  - caps with memory:CUDAMemory first and system memory second, in any mix
 *    between the pads;
 *  - allocation: a CUDA pool for CUDAMemory, a pinned host-memory pool
 *    proposed upstream and used for system-memory outputs;
 *  - one CUDA stream, staging copies for system memory, and one
 *    synchronisation per buffer.
 * A subclass implements setup (build its op for the negotiated caps),
 * process (run it on one frame) and teardown. */
#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include "cudafx/backend.hpp"
#include "cudafx/cuda_resources.hpp"
#include "cudafx/image.hpp"
#include "gstcudafxconfig.h"
#include "gstcudafxdevice.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_FX_FILTER (gst_cuda_fx_filter_get_type ())
G_DECLARE_DERIVABLE_TYPE (GstCudaFxFilter, gst_cuda_fx_filter, GST,
    CUDA_FX_FILTER, GstBaseTransform)

struct _GstCudaFxFilterClass
{
  GstBaseTransformClass parent_class;

  /* Builds the op for the negotiated formats. For cudafx::Backend::Cuda the
   * element's CUDA context is current. Called again on every caps change;
   * teardown is called before. */
  cudafx::Status (*setup) (GstCudaFxFilter * self, const GstVideoInfo * in_info,
      const GstVideoInfo * out_info, cudafx::Backend backend);
  /* Runs the op on one frame: device views queued on `stream` for Cuda (do
   * not synchronise: the base class does, once), host views for Cpu. */
  cudafx::Status (*process) (GstCudaFxFilter * self, const cudafx::ImageView & src,
      const cudafx::ImageView & dst, cudafx::StreamHandle stream);
  /* Releases the op; the CUDA context is current for Cuda. */
  void (*teardown) (GstCudaFxFilter * self);
  /* Optional: the video caps (fields only; memory features are the base
   * class's business) that the other pad can have for `caps` on the pad of
   * `direction`. Not set: the same caps (a filter that keeps format and
   * size). A scaler frees width and height here; it then also implements
   * GstBaseTransform's fixate_caps. Returns a new reference. */
  GstCaps *(*transform_video_caps) (GstCudaFxFilter * self,
      GstPadDirection direction, GstCaps * caps);
  /* TRUE: buffers pass through untouched when both pads have the same
   * video info (format, size, ...) in the same memory, even where the caps
   * differ in fields that do not change pixels. */
  gboolean passthrough_on_same_info;

  gpointer _reserved[GST_PADDING];
};

/* The formats of the foundation, for filters that take them all: every one
 * in system memory, all but GRAY8 (which libgstcuda's allocator lacks) in
 * CUDA memory. */
#define GST_CUDA_FX_CUDA_FORMATS \
    "{ RGBA, BGRA, RGBx, BGRx, ARGB, ABGR, RGB, BGR, I420, NV12, Y444 }"
#define GST_CUDA_FX_SYSTEM_FORMATS \
    "{ RGBA, BGRA, RGBx, BGRx, ARGB, ABGR, RGB, BGR, GRAY8, I420, NV12, Y444 }"

/* Adds sink and src templates: `cuda_formats` (a GStreamer format list such
 * as "{ RGBA, NV12 }") with memory:CUDAMemory, when libgstcuda is
 * available, then `system_formats` in system memory. */
void gst_cuda_fx_filter_class_add_pad_templates (GstCudaFxFilterClass * klass,
    const gchar * cuda_formats, const gchar * system_formats);

/* Every structure of `caps` offered in its own memory (CUDAMemory or system)
 * first and in the other second: what a filter may produce from `caps`, or
 * accept for it. */
GstCaps *gst_cuda_fx_filter_caps_any_memory (GstCaps * caps);

/* The backend chosen at start (valid from start to stop). */
cudafx::Backend gst_cuda_fx_filter_get_backend (GstCudaFxFilter * self);

G_END_DECLS
