#pragma once

#include "gstcudafxfilter.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_GAUSSIAN (gst_cuda_gaussian_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaGaussian, gst_cuda_gaussian, GST, CUDA_GAUSSIAN,
    GstCudaFxFilter)


GST_ELEMENT_REGISTER_DECLARE (cudagaussian);

G_END_DECLS
