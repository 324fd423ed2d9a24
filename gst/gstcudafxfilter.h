/* GstCudaFxFilter: the base class of every cudafx video filter.
 *
 * It owns what every element needs and nothing element-specific:
 *  - the `backend` (auto|cuda|cpu) and `cuda-device-id` properties and the
 *    rule that picks the backend at start, the CUDA context shared through
 *    libgstcuda's "gst.cuda.context" (both through GstCudaFxDevice, which
 *    the codec elements use too);
 *  - caps with memory:CUDAMemory first and system memory second, in any mix
 *    between the pads, other caps features kept; separate format lists for
 *    the sink and the src pad; progressive video only;
 *  - allocation: a CUDA pool for CUDAMemory, a pinned host-memory pool
 *    proposed upstream and used for system-memory outputs;
 *  - one CUDA stream, staging copies for system memory, and one
 *    synchronisation per buffer;
 *  - GStreamer's per-buffer duties: controlled properties synchronised to
 *    the stream time before each buffer, metas kept or dropped by their tags.
 *
 * Three modes (gst_cuda_fx_filter_set_mode, changeable while playing):
 *  - TRANSFORM: `process` reads the input frame and writes a new output
 *    frame (formats and sizes may differ);
 *  - IN_PLACE: `process_ip` writes into the frame itself (drawing, overlays);
 *    the buffer is made writable, copied only when it is shared;
 *  - ANALYSIS: `process_ip` only reads the frame, which passes through
 *    untouched (no copy; CUDA memory stays on the GPU); results go to
 *    memory the subclass owns (pinned, for the CUDA backend).
 * In every mode an optional `finish` runs once the buffer's work has
 * finished (after the stream's synchronisation), with the outgoing buffer,
 * whose metadata is writable: to attach metas or post messages. */
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

typedef enum
{
  GST_CUDA_FX_FILTER_MODE_TRANSFORM,
  GST_CUDA_FX_FILTER_MODE_IN_PLACE,
  GST_CUDA_FX_FILTER_MODE_ANALYSIS,
} GstCudaFxFilterMode;

#define GST_TYPE_CUDA_FX_FILTER (gst_cuda_fx_filter_get_type ())
G_DECLARE_DERIVABLE_TYPE (GstCudaFxFilter, gst_cuda_fx_filter, GST,
    CUDA_FX_FILTER, GstBaseTransform)

/* What `setup` is built for: the negotiated caps as video infos and as the
 * cudafx descriptions of the two frames, the backend and the mode. */
struct GstCudaFxFilterConfig
{
  const GstVideoInfo *in_info;
  const GstVideoInfo *out_info;
  cudafx::ImageDesc in;
  cudafx::ImageDesc out;
  cudafx::Backend backend;
  GstCudaFxFilterMode mode;
};

struct _GstCudaFxFilterClass
{
  GstBaseTransformClass parent_class;

  /* Builds the op for the negotiated formats. For cudafx::Backend::Cuda the
   * element's CUDA context is current. Called again on every caps change
   * and mode change; teardown is called before. */
  cudafx::Status (*setup) (GstCudaFxFilter * self, const GstCudaFxFilterConfig & config);
  /* TRANSFORM mode: runs the op on one frame: device views queued on
   * `stream` for Cuda (do not synchronise: the base class does, once), host
   * views for Cpu. */
  cudafx::Status (*process) (GstCudaFxFilter * self, const cudafx::ImageView & src,
      const cudafx::ImageView & dst, cudafx::StreamHandle stream);
  /* IN_PLACE and ANALYSIS modes: the frame (device view queued on `stream`
   * for Cuda, host view for Cpu), writable only IN_PLACE. */
  cudafx::Status (*process_ip) (GstCudaFxFilter * self, const cudafx::ImageView & frame,
      cudafx::StreamHandle stream);
  /* Optional, IN_PLACE with the CUDA backend: a frame in system memory is
   * given here, as a host view, instead of going to the device and back --
   * for subclasses that write a small part of the frame (an overlay), where
   * moving the whole frame over the bus twice costs more than writing the
   * part on the CPU. Not set: such frames are staged through the device. */
  cudafx::Status (*process_ip_host) (GstCudaFxFilter * self, const cudafx::ImageView & frame);
  /* Optional, every mode: the buffer's work is complete; `buffer` is the one
   * pushed downstream, its metadata writable. The CUDA context is current
   * for Cuda. */
  cudafx::Status (*finish) (GstCudaFxFilter * self, GstBuffer * buffer);
  /* Releases the op; the CUDA context is current for Cuda. */
  void (*teardown) (GstCudaFxFilter * self);
  /* Optional: the video caps (fields only; memory features are the base
   * class's business) that the other pad can have for `caps` on the pad of
   * `direction`. Not set: the same caps (a filter that keeps format and
   * size). A scaler frees width and height here, a filter with other
   * formats on its src pad frees the format (gst_cuda_fx_caps_free_format);
   * it then also implements fixate_video_caps where the default choice is
   * not right. Returns a new reference. */
  GstCaps *(*transform_video_caps) (GstCudaFxFilter * self,
      GstPadDirection direction, GstCaps * caps);
  /* Optional: GstBaseTransform's fixate_caps for the video fields, called
   * with `othercaps` already ordered so that the input's memory comes first
   * (takes `othercaps`, returns the fixated caps). Not set: the default. */
  GstCaps *(*fixate_video_caps) (GstCudaFxFilter * self, GstPadDirection direction,
      GstCaps * caps, GstCaps * othercaps);
  /* TRUE: in TRANSFORM mode buffers pass through untouched when both pads
   * have the same video info (format, size, ...) in the same memory, even
   * where the caps differ in fields that do not change pixels. */
  gboolean passthrough_on_same_info;
  /* Meta tags, besides "video", whose metas stay valid across this element
   * in TRANSFORM mode (NULL-terminated; NULL: none). Untagged metas and
   * metas tagged only "video" are always kept, as GstVideoFilter keeps
   * them; a meta with any other tag is dropped. A filter that keeps the
   * geometry lists GST_META_TAG_VIDEO_SIZE_STR and
   * GST_META_TAG_VIDEO_ORIENTATION_STR, so region metas survive it. */
  const gchar *const *kept_meta_tags;

  gpointer _reserved[GST_PADDING];
};

/* The formats of the foundation, for filters that take them all: every one
 * in system memory, all but GRAY8 (which libgstcuda's allocator lacks) in
 * CUDA memory. */
#define GST_CUDA_FX_CUDA_FORMATS \
    "{ RGBA, BGRA, RGBx, BGRx, ARGB, ABGR, RGB, BGR, I420, NV12, Y444 }"
#define GST_CUDA_FX_SYSTEM_FORMATS \
    "{ RGBA, BGRA, RGBx, BGRx, ARGB, ABGR, RGB, BGR, GRAY8, I420, NV12, Y444 }"

/* Adds sink and src templates with the same formats: `cuda_formats` (a
 * GStreamer format list such as "{ RGBA, NV12 }") with memory:CUDAMemory,
 * when libgstcuda is available, then `system_formats` in system memory. */
void gst_cuda_fx_filter_class_add_pad_templates (GstCudaFxFilterClass * klass,
    const gchar * cuda_formats, const gchar * system_formats);
/* The same with a format list per pad (a NULL CUDA list: that pad takes
 * system memory only, as for GRAY8), and `extra_feature` (such as
 * "meta:GstVideoOverlayComposition", or NULL) offered on the sink pad before
 * the plain caps of each memory. */
void gst_cuda_fx_filter_class_add_pad_templates_full (GstCudaFxFilterClass * klass,
    const gchar * sink_cuda_formats, const gchar * sink_system_formats,
    const gchar * src_cuda_formats, const gchar * src_system_formats,
    const gchar * extra_feature);

/* Every structure of `caps` offered in its own memory (CUDAMemory or system)
 * first and in the other second, every other caps feature kept: what a
 * filter may produce from `caps`, or accept for it. */
GstCaps *gst_cuda_fx_filter_caps_any_memory (GstCaps * caps);

/* `caps` (taken) without the fields that a format conversion frees: format,
 * colorimetry and chroma-site. */
GstCaps *gst_cuda_fx_caps_free_format (GstCaps * caps);

/* Sets the mode (see above). May be called from _init, a property setter or
 * any thread while playing: it applies from the next buffer on (the op is
 * rebuilt through teardown/setup with the new mode). */
void gst_cuda_fx_filter_set_mode (GstCudaFxFilter * self, GstCudaFxFilterMode mode);
GstCudaFxFilterMode gst_cuda_fx_filter_get_mode (GstCudaFxFilter * self);

/* The backend chosen at start (valid from start to stop). */
cudafx::Backend gst_cuda_fx_filter_get_backend (GstCudaFxFilter * self);

G_END_DECLS
