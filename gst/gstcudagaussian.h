#pragma once

#include "gstcudafxfilter.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_GAUSSIAN (gst_cuda_gaussian_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaGaussian, gst_cuda_gaussian, GST, CUDA_GAUSSIAN,
    GstCudaFxFilter)

typedef enum
{
  GST_CUDA_FX_BORDER_REPLICATE,
  GST_CUDA_FX_BORDER_REFLECT_101,
  GST_CUDA_FX_BORDER_CONSTANT,
} GstCudaFxBorderMode;

#define GST_TYPE_CUDA_FX_BORDER_MODE (gst_cuda_fx_border_mode_get_type ())
GType gst_cuda_fx_border_mode_get_type (void);

GST_ELEMENT_REGISTER_DECLARE (cudagaussian);

G_END_DECLS
