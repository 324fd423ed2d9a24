#pragma once

#include "gstcudafxfilter.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_UPSCALE (gst_cuda_upscale_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaUpscale, gst_cuda_upscale, GST, CUDA_UPSCALE,
    GstCudaFxFilter)

typedef enum
{
  GST_CUDA_UPSCALE_NEAREST,
  GST_CUDA_UPSCALE_BILINEAR,
  GST_CUDA_UPSCALE_BICUBIC,
} GstCudaUpscaleMethod;

#define GST_TYPE_CUDA_UPSCALE_METHOD (gst_cuda_upscale_method_get_type ())
GType gst_cuda_upscale_method_get_type (void);

GST_ELEMENT_REGISTER_DECLARE (cudaupscale);

G_END_DECLS
