#pragma once

#include "gstcudafxfilter.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_UPSCALE (gst_cuda_upscale_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaUpscale, gst_cuda_upscale, GST, CUDA_UPSCALE,
    GstCudaFxFilter)


GST_ELEMENT_REGISTER_DECLARE (cudaupscale);

G_END_DECLS
