#pragma once

#include "gstcudafxfilter.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_TEXT_OVERLAY (gst_cuda_text_overlay_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaTextOverlay, gst_cuda_text_overlay, GST, CUDA_TEXT_OVERLAY,
    GstCudaFxFilter)

GST_ELEMENT_REGISTER_DECLARE (cudatextoverlay);

G_END_DECLS
